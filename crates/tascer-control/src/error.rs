//! What can end a control-protocol session with an error.

/// An error of the control protocol's session. Protocol errors the SDK
/// can act on (a bad line, an unsupported request) are answered on the
/// protocol itself; these are the ones that end the process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// The session failed to take a prompt (the store, the ledger, a
    /// crashed turn, …).
    #[error(transparent)]
    Session(Box<tascer::Error>),
    /// `MAX_STRUCTURED_OUTPUT_RETRIES` is set but is not a whole number.
    #[error("MAX_STRUCTURED_OUTPUT_RETRIES must be a whole number, got {value:?}")]
    StructuredRetries {
        /// The variable's value.
        value: String,
        /// Why it does not parse.
        source: std::num::ParseIntError,
    },
}

impl From<tascer::Error> for ControlError {
    fn from(err: tascer::Error) -> Self {
        ControlError::Session(Box::new(err))
    }
}
