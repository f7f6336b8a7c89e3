//! Hook errors: [`HookError`] (one hook failed) and [`HookConfigError`]
//! (the `hooks` settings are malformed).

/// Why a single hook failed. Failures are isolated: they are recorded in
/// the [`HookRun`](super::HookRun) and the session goes on, unless the hook
/// is fail-closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// The hook failed with a message.
    #[error("{0}")]
    Failed(String),
    /// The hook did not finish within its timeout.
    #[error("hook timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The hook's process could not be started or waited for.
    #[error("could not run hook command: {0}")]
    Spawn(String),
    /// The hook printed something that looks like JSON but is not.
    #[error("hook output is not valid JSON: {0}")]
    InvalidOutput(String),
}

impl HookError {
    /// A [`HookError::Failed`] with a message.
    pub fn msg(message: impl Into<String>) -> HookError {
        HookError::Failed(message.into())
    }
}

/// A malformed `hooks` configuration. Every variant names where the
/// problem is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookConfigError {
    /// The `hooks` value is not an object.
    #[error("`hooks` must be an object of event names, found {found}")]
    NotAnObject {
        /// JSON type found.
        found: &'static str,
    },
    /// An event name that neither Tascer nor Claude Code knows.
    #[error("unknown hook event `{name}`")]
    UnknownEvent {
        /// The name.
        name: String,
    },
    /// Some part of the configuration has the wrong shape.
    #[error("hooks.{event}{path}: {message}")]
    Shape {
        /// The event.
        event: String,
        /// Where inside the event (`[0].hooks[1].timeout`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A matcher is not a valid regular expression.
    #[error("hooks.{event}: invalid matcher `{matcher}`: {source}")]
    BadMatcher {
        /// The event.
        event: String,
        /// The matcher as written.
        matcher: String,
        /// The regex error.
        #[source]
        source: regex::Error,
    },
    /// A hook `type` that is neither supported nor known to Claude Code.
    #[error("hooks.{event}{path}: unknown hook type `{kind}`")]
    UnknownHookType {
        /// The event.
        event: String,
        /// Where inside the event.
        path: String,
        /// The type as written.
        kind: String,
    },
}

/// Short JSON type name for error messages.
pub(crate) fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
