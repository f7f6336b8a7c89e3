//! Claude Code–compatible hooks: events, matchers, in-process and command
//! hooks, and their aggregated per-event outcomes.
//!
//! - [`HookRegistry`] holds hooks: command hooks from the settings `hooks`
//!   value ([`HookRegistry::from_settings`]) and in-process hooks
//!   ([`HookRegistry::builder`]).
//! - [`HookRunner`] runs the hooks matching an event sequentially in
//!   priority order and returns the event's outcome (e.g.
//!   [`PreToolUseOutcome`]) together with a [`HookRun`] record per hook.
//! - Command hooks follow Claude Code's process contract: JSON on stdin,
//!   `CLAUDE_PROJECT_DIR`, exit 0 / 2 / other, JSON on stdout, timeouts.
//!
//! See `docs/hooks.md` for the full contract.

mod command;
mod config;
mod effect;
mod error;
mod handler;
mod input;
mod matcher;
mod outcome;
mod output;
mod record;
mod registered;
mod registry;
mod runner;

pub use command::CommandHook;
pub use effect::HookEffect;
pub use error::{HookConfigError, HookError};
pub use handler::{FnHook, Hook};
pub use input::{
    CompactTrigger, ElicitationInput, ElicitationResultInput, HookCommon, HookInput,
    NotificationInput, PermissionRequestInput, PostCompactInput, PostToolUseFailureInput,
    PostToolUseInput, PreCompactInput, PreToolUseInput, SessionEndInput, SessionEndReason,
    SessionStartInput, SessionStartSource, StopInput, SubagentStopInput, UserPromptSubmitInput,
};
pub use matcher::Matcher;
pub use outcome::{
    ElicitationOutcome, ElicitationResultOutcome, EventOutcome, HookCommonOutcome,
    NotificationOutcome, PermissionRequestOutcome, PostCompactOutcome, PostToolUseFailureOutcome,
    PostToolUseOutcome, PreCompactOutcome, PreToolDecision, PreToolUseOutcome, SessionEndOutcome,
    SessionStartOutcome, StopOutcome, SubagentStopOutcome, UserPromptSubmitOutcome, join_context,
};
pub use output::{HookOutput, HookSpecificOutput, PermissionRequestDecision, TopDecision};
pub use record::{HookKind, HookRun, HookRunOutcome, deciding_hook};
pub use registered::{DEFAULT_TIMEOUT, HookHandler, HookOptions, RegisteredHook};
pub use registry::{HookRegistry, HookRegistryBuilder};
pub use runner::{HookRunResults, HookRunner};
/// The hook events, from `tascer-core`: the one enum every crate uses.
pub use tascer_core::{HookEvent, UnknownHookEvent};
