//! The SDK control protocol: how the official Agent SDKs talk to their CLI,
//! spoken over a Tascer session.
//!
//! The SDKs start a CLI (`cli_path` / `pathToClaudeCodeExecutable`) with
//! `--output-format stream-json --input-format stream-json` and talk to it
//! one JSON object per line: prompts and control requests arrive on
//! standard input; frames and the CLI's own requests (`can_use_tool`,
//! `hook_callback`, `mcp_message`) leave on standard output (claude-compat
//! §0, §9; the status of every message and option is in
//! `docs/sdk-compat.md`). [`run`] is that CLI's side over a Tascer session:
//! the caller builds the session's [`tascer::Options`] (the `tascer` binary
//! does it from the SDK's command line) and says what runs after the
//! session (archival, in the binary); the SDK's callbacks enter the
//! session as one more hook / callback source, so admission decides with
//! them and the ledger records them.
//!
//! - [`wire`]: standard input's lines and the control frames;
//! - [`channel`]: standard output, and requests to the SDK matched by id;
//! - [`callbacks`]: hook callbacks, `can_use_tool`, the MCP tunnel;
//! - `init`: the `initialize` request and its response;
//! - `input`: standard input, read on its own thread;
//! - `requests`: the SDK's control requests once the session runs;
//! - `tasks`: background shells as the SDKs' background tasks;
//! - `driver`: the session: prompts queued into turns, end of input.

pub mod callbacks;
pub mod channel;
mod driver;
mod error;
mod init;
mod input;
mod requests;
mod session;
mod tasks;
pub mod wire;

pub use driver::run;
pub use error::ControlError;
pub use init::structured_retries_from_env;
pub use session::{ControlSession, OnSessionEnd, ResultJudge};
pub use wire::{CLAUDE_CODE_VERSION, startup_failure_result};
