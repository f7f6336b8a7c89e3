//! [`HookEffect`]: what one hook run means for the session, independent of
//! how the hook is implemented. The per-event outcome types fold these.

use super::output::HookOutput;

/// The effect of one hook run.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum HookEffect {
    /// JSON output (exit 0 with JSON stdout, or an in-process hook's
    /// result).
    Output(HookOutput),
    /// Exit 0 with plain, non-JSON stdout. Context for `UserPromptSubmit`
    /// and `SessionStart`; only logged for other events.
    Text(String),
    /// Exit code 2: a blocking error; the text is stderr.
    Blocking(String),
    /// A non-blocking failure (other exit code, timeout, invalid JSON,
    /// in-process error). Isolated: the session goes on.
    Failed(String),
    /// A failure of a fail-closed hook: the most restrictive effect the
    /// event allows (deny a tool call, block a prompt, …).
    FailedClosed(String),
}
