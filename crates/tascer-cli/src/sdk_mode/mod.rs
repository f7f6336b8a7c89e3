//! Control-protocol mode: `tascer --output-format stream-json --verbose
//! --input-format stream-json [flags…]`, the way the official Agent SDKs
//! run their CLI (`cli_path` / `pathToClaudeCodeExecutable`). Prompts and
//! control requests arrive on standard input, frames and our own requests
//! (`can_use_tool`, `hook_callback`, `mcp_message`) leave on standard
//! output, one JSON object per line (claude-compat §0, §9; the status of
//! every message and option is in docs/sdk-compat.md).
//!
//! The protocol lives in the binary: it is how this program talks to its
//! parent, while the library already has everything a session needs
//! ([`tascer::Client`], hooks, the `can_use_tool` callback, MCP tunnels).
//! The SDK's callbacks enter the session as one more hook / callback
//! source, so admission decides with them and the ledger records them.
//!
//! - [`argv`]: the SDKs' flags (unknown ones dropped with a warning);
//! - [`wire`]: stdin lines and control frames;
//! - [`channel`]: stdout, and requests to the SDK matched by id;
//! - [`callbacks`]: hook callbacks, `can_use_tool`, the MCP tunnel;
//! - [`init`]: the `initialize` request and its response;
//! - [`input`]: standard input, read on its own thread;
//! - [`requests`]: the SDK's control requests once the session runs;
//! - [`driver`]: the session: prompts queued into turns, end of input.

mod argv;
mod callbacks;
mod channel;
mod driver;
mod init;
mod input;
mod requests;
mod wire;

use std::ffi::OsString;
use std::process::ExitCode;

/// The Claude Code version whose protocol this mode speaks (the CLI the
/// tested SDKs bundle): reported by `--version`, in `system/init` and in
/// the `initialize` response, so the SDKs take Tascer for a current CLI.
pub const CLAUDE_CODE_VERSION: &str = "2.1.332";

/// What the command line asks of this mode, if anything.
pub enum Invocation {
    /// `tascer -v` / `--version`, answered the way Claude Code answers.
    Version,
    /// The control protocol, with the whole command line.
    ControlProtocol(Vec<OsString>),
}

impl Invocation {
    /// Recognizes a version probe or an SDK's command line; `None` for
    /// every other command line.
    pub fn detect(args: Vec<OsString>) -> Option<Invocation> {
        if args.len() == 2 && matches!(args[1].to_str(), Some("-v" | "-V" | "--version")) {
            return Some(Invocation::Version);
        }
        argv::wants_control_protocol(&args).then_some(Invocation::ControlProtocol(args))
    }
}

/// Runs what [`Invocation::detect`] found.
pub fn main(invocation: Invocation) -> ExitCode {
    let args = match invocation {
        Invocation::Version => {
            println!(
                "{CLAUDE_CODE_VERSION} (Claude Code compatible; tascer {})",
                tascer::VERSION
            );
            return ExitCode::SUCCESS;
        }
        Invocation::ControlProtocol(args) => args,
    };
    let parsed = match argv::parse(&args) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.print();
            return ExitCode::FAILURE;
        }
    };
    for warning in &parsed.warnings {
        eprintln!("{warning}");
    }
    if let Err(message) = argv::check(&parsed.cli) {
        eprintln!("{message}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(driver::run(parsed.cli));
    // Standard input is read on its own thread, which may still wait for a
    // line: do not wait for it.
    runtime.shutdown_background();
    code
}
