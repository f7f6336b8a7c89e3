//! `tascer hook`: Claude Code's command-hook protocol, answered by
//! [`tascer::claude_hook::answer`] (docs/claude-code.md) — through the hook
//! server for this environment when one runs, else in this process, which
//! then starts one for the next event. `tascer hook --serve SOCKET` is that
//! server ([`tascer::hook_server`]).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use tascer::hook_server;
use tascer_hook_client::SERVE_FLAG;

/// The file name of the hook-only executable (the thin client of
/// `src/bin/tascer-hook.rs`), installed next to `tascer`.
pub const HOOK_EXECUTABLE: &str = "tascer-hook";

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
    if let Some(socket) = serve_socket() {
        return serve(socket);
    }
    let mut stdin = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut stdin) {
        eprintln!("tascer hook: cannot read the hook input from standard input: {err}");
        return ExitCode::from(1);
    }
    let home = tascer::tascer_home();
    let exe = std::env::current_exe().ok();
    let socket = exe
        .as_deref()
        .and_then(|exe| tascer_hook_client::socket_path(&home, exe));
    if let Some(reply) = socket
        .as_deref()
        .and_then(|socket| tascer_hook_client::reply_from(socket, &stdin))
    {
        return ExitCode::from(reply.give());
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("tascer hook: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let reply = runtime.block_on(tascer::claude_hook::answer(&stdin, &home));
    let code = reply.give();
    if reply.webhooks_queued
        && let Err(err) = start_flusher(&home)
    {
        eprintln!(
            "tascer hook: webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
        );
    }
    if let (Some(exe), Some(socket)) = (exe, socket)
        && tascer_hook_client::starts_server(&stdin)
    {
        // For the next event: this one is answered already.
        if let Err(err) = tascer_hook_client::spawn_server(&exe, &socket) {
            tracing::debug!("no hook server: {err}");
        }
    }
    ExitCode::from(code)
}

/// Starts the webhook flusher (`tascer webhook flush`, this executable)
/// for `home`.
fn start_flusher(home: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the tascer binary: {e}"))?;
    tascer::webhook::spawn_flusher(home, &exe).map(|_| ())
}

/// Runs the hook server on `socket` until it is idle.
fn serve(socket: PathBuf) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("tascer hook server: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let home = tascer::tascer_home();
    let flusher: hook_server::FlusherStart = Arc::new(start_flusher);
    match runtime.block_on(hook_server::serve(
        home,
        socket,
        hook_server::idle_from_env(),
        flusher,
    )) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tascer hook server: {err}");
            ExitCode::from(1)
        }
    }
}
