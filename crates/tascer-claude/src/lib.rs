//! Tascer as a Claude Code host: the command hook (`tascer hook`), the
//! hook server that answers it warm, and what `tascer install claude-code`
//! writes (docs/claude-code.md).
//!
//! Claude Code runs a command hook as a new process per event, with the
//! event's JSON on standard input (claude-compat §5.3, §6.2). For tool calls
//! the answer comes from the same [`Admission`](tascer_guard::admission::Admission)
//! a Tascer session uses — Tascer's settings, rules, policies, workaround
//! detection and gates, built by [`HostGovernance`](tascer::host::HostGovernance)
//! in the loop crate — and every event lands in one ledger session per
//! Claude Code `session_id`: the call is opened at `PreToolUse` and closed
//! with its result at `PostToolUse`, so `tascer verify`, `report` and
//! `export` work on a Claude Code session as on a Tascer one.
//!
//! Tascer adds refusals to Claude Code's own permission system and widens
//! it only where its settings say so: a call Tascer denies is denied
//! (`permissionDecision: deny` with Tascer's reason); one a Tascer ask rule
//! or policy asks about is asked; one its safety chain approves — low-risk
//! auto-approve, or an LLM reviewer answering in place of the user — is
//! allowed (docs/reviewers.md); everything else is left to Claude Code's
//! own rules and mode. `Stop` may be blocked by `intent-validate`, and
//! every event goes to the configured webhooks (`tascer-webhook`).
//!
//! - [`answer`] / [`answer_with`]: one event's answer (`answer.rs`, with
//!   the safety chain in `safety.rs` and the webhooks in `webhooks.rs`,
//!   over one event's session in `session.rs`);
//! - [`observe`]: what the events tell the process's telemetry
//!   observer (`observe::set_observer`);
//! - [`server`]: the hook server, `tascer hook --serve SOCKET`;
//! - [`process`]: what a `tascer hook` process does (through the server,
//!   or in its own process) and the server's process;
//! - [`install`]: the Claude Code settings `tascer install` writes and
//!   `tascer uninstall` removes, and [`commands`]: the `/commit` and
//!   `/push` slash commands it writes;
//! - [`ClaudeTranscript`]: Claude Code's transcript as the reviewers read
//!   it.
//!
//! The client half of the hook (finding the server and handing it the
//! event) is `tascer-hook-client`, kept apart so that the `tascer-hook`
//! executable stays small.

mod answer;
pub mod commands;
pub mod install;
pub mod observe;
#[cfg(unix)]
pub mod process;
mod safety;
#[cfg(unix)]
pub mod server;
mod session;
mod settings_cache;
mod start;
mod transcript;
mod webhooks;

pub use answer::{answer, answer_with};
pub use safety::HOOK_DEADLINE;
pub use session::open_ledger;
/// What the hook process answers (exit code, standard output and error).
pub use tascer_hook_client::Reply as HookReply;
pub use transcript::ClaudeTranscript;
