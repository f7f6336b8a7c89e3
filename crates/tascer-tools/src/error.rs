//! The error type tools use internally; it becomes an error [`ToolOutput`].

use tascer_core::ToolOutput;

/// Why a tool call failed. Its `Display` text is what the model sees.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The input did not match the tool's schema.
    #[error("{tool} input is invalid: {message}")]
    InvalidInput {
        /// Tool name.
        tool: &'static str,
        /// What was wrong (serde's message).
        message: String,
    },
    /// A failure explained to the model in plain words.
    #[error("{0}")]
    Message(String),
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What the tool was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ToolError {
    /// A plain-words failure.
    pub fn msg(message: impl Into<String>) -> Self {
        ToolError::Message(message.into())
    }

    /// An I/O failure with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<ToolError> for ToolOutput {
    fn from(err: ToolError) -> Self {
        ToolOutput::error(err.to_string())
    }
}
