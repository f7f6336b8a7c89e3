//! [`HookRun`]: the record of one hook execution, for the session store
//! and the ledger.

use std::time::Duration;

use serde::{Serialize, Serializer};
use serde_json::Value;
use tascer_core::HookEvent;

use super::output::HookOutput;

/// How a hook is implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookKind {
    /// A shell command from the settings.
    Command,
    /// A Rust hook registered in the process.
    InProcess,
}

/// How a hook run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookRunOutcome {
    /// Ran fine and did not block.
    Success,
    /// Blocked: exit code 2, or output that denies / blocks / stops.
    Blocked,
    /// Failed: non-zero exit (other than 2), invalid JSON, spawn failure,
    /// in-process error, killed by a signal.
    Error,
    /// Did not finish within its timeout and was killed.
    Timeout,
}

/// The record of one hook execution.
#[derive(Debug, Clone, Serialize)]
pub struct HookRun {
    /// Hook name (the command line for command hooks).
    pub hook_name: String,
    /// The event.
    pub event: HookEvent,
    /// The matcher the hook was registered under (`None` = match all).
    pub matcher: Option<String>,
    /// Command or in-process.
    pub kind: HookKind,
    /// Priority it ran with (lower first).
    pub priority: i32,
    /// True when the hook is fail-closed.
    pub fail_closed: bool,
    /// The input it was given.
    pub input: Value,
    /// Captured stdout (command hooks).
    pub stdout: Option<String>,
    /// Captured stderr (command hooks).
    pub stderr: Option<String>,
    /// Exit code (command hooks; `None` when killed or never started).
    pub exit_code: Option<i32>,
    /// The parsed JSON output, when there was one.
    pub output: Option<HookOutput>,
    /// How it ended.
    pub outcome: HookRunOutcome,
    /// Error message for `error` / `timeout` outcomes.
    pub error: Option<String>,
    /// Wall time.
    #[serde(rename = "duration_ms", serialize_with = "as_millis")]
    pub duration: Duration,
}

fn as_millis<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The hook a hook decision can be credited to, among the runs that made
/// it: for a denial, the first run that blocked; otherwise the one run,
/// when only one ran (several hooks answering together name none).
pub fn deciding_hook(runs: &[HookRun], denied: bool) -> Option<String> {
    if denied {
        return runs
            .iter()
            .find(|r| r.outcome == HookRunOutcome::Blocked)
            .map(|r| r.hook_name.clone());
    }
    match runs {
        [only] => Some(only.hook_name.clone()),
        _ => None,
    }
}
