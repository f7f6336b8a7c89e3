//! `tascer hook`: Claude Code's command-hook protocol, answered by
//! [`tascer_claude`] (docs/claude-code.md) — through the hook server for
//! this environment when one runs, else in this process, which then
//! starts one for the next event. `tascer hook --serve SOCKET` is that
//! server ([`tascer_claude::server`]). Here: the command line, standard
//! input, and what is printed.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use tascer_hook_client::SERVE_FLAG;

/// True when the command line is exactly `tascer hook` (what `tascer
/// install` writes), or `tascer hook --serve SOCKET` (the hook server):
/// answered before the rest of the CLI is even parsed.
pub fn is_invocation() -> bool {
    let mut args = std::env::args_os().skip(1);
    args.next().is_some_and(|a| a == "hook")
        && match args.next() {
            None => true,
            Some(flag) => flag == SERVE_FLAG && args.next().is_some() && args.next().is_none(),
        }
}

/// The socket of `hook --serve SOCKET`, if this process is the server.
fn serve_socket() -> Option<PathBuf> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    match args.as_slice() {
        [hook, flag, socket] if hook == "hook" && flag == SERVE_FLAG => Some(socket.into()),
        _ => None,
    }
}

/// Reads the event from standard input, answers it, and exits with the
/// code Claude Code expects (0, 1 or 2).
pub fn main() -> ExitCode {
    // Dropped last: the last batch is sent (within its deadline) after
    // the answer was given.
    let (_runtime, _telemetry) = crate::telemetry::start_for_hook();
    if let Some(socket) = serve_socket() {
        return serve(socket);
    }
    let mut stdin = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut stdin) {
        eprintln!("tascer hook: cannot read the hook input from standard input: {err}");
        return ExitCode::from(1);
    }
    let answered = tascer_claude::process::answer_event(&stdin, &tascer::tascer_home());
    let code = answered.reply.give();
    if let Some(warning) = answered.warning {
        eprintln!("{warning}");
    }
    ExitCode::from(code)
}

/// Runs the hook server on `socket` until it is idle.
fn serve(socket: PathBuf) -> ExitCode {
    match tascer_claude::process::serve(tascer::tascer_home(), socket) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tascer hook server: {err}");
            ExitCode::from(1)
        }
    }
}
