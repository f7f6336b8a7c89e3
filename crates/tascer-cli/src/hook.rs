//! `tascer hook` (and the `tascer-hook` executable, the same answer from a
//! smaller program): Claude Code's command-hook protocol, answered by
//! [`tascer::claude_hook::answer`] (docs/claude-code.md).

use std::io::{Read, Write};
use std::process::ExitCode;

/// True when the command line is exactly `tascer hook` (what `tascer
/// install` writes): answered before the rest of the CLI is even parsed.
pub fn is_invocation() -> bool {
    let mut args = std::env::args_os().skip(1);
    args.next().is_some_and(|a| a == "hook") && args.next().is_none()
}

/// Reads the event from standard input, answers it, and exits with the
/// code Claude Code expects (0, 1 or 2).
pub fn main() -> ExitCode {
    let mut stdin = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut stdin) {
        eprintln!("tascer hook: cannot read the hook input from standard input: {err}");
        return ExitCode::from(1);
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
    let home = tascer::tascer_home();
    let reply = runtime.block_on(tascer::claude_hook::answer(&stdin, &home));
    if !reply.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", reply.stdout);
        let _ = out.flush();
    }
    if !reply.stderr.is_empty() {
        eprintln!("{}", reply.stderr);
    }
    if reply.webhooks_queued {
        // Delivered by a detached flusher: the hook returns now.
        let started = tascer_executable()
            .map_err(|e| format!("cannot find the tascer binary: {e}"))
            .and_then(|exe| tascer::webhook::spawn_flusher(&home, &exe));
        if let Err(err) = started {
            eprintln!(
                "tascer hook: webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
            );
        }
    }
    ExitCode::from(reply.exit_code)
}

/// The file name of the hook-only executable, installed next to `tascer`.
pub const HOOK_EXECUTABLE: &str = "tascer-hook";

/// The `tascer` executable: this one, or, from `tascer-hook`, the `tascer`
/// next to it (the webhook flusher is a `tascer` command).
fn tascer_executable() -> std::io::Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    if exe.file_stem().is_some_and(|name| name == HOOK_EXECUTABLE) {
        return Ok(exe.with_file_name(format!("tascer{}", std::env::consts::EXE_SUFFIX)));
    }
    Ok(exe)
}
