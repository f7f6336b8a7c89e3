//! `tascer-hook`: what `tascer install claude-code` writes as Claude Code's
//! hook command when it sits next to `tascer`.
//!
//! Claude Code starts a command hook as a new process for every event, so
//! this program only forwards the event to the hook server of its
//! environment (`tascer hook --serve`, started here on the first event) and
//! prints the answer; it links little besides [`tascer_hook_client`], so it
//! starts about as fast as a program can. With no server to be had
//! (`TASCER_HOOK_SERVER=off`, too many servers, one that would not start)
//! the event is answered by `tascer hook` in a process of its own, exactly
//! as it would be through the server.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use tascer_hook_client::{Reply, SERVER_ENV};

/// How long the first event waits for the server it started to listen.
const START_WAIT: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let mut stdin = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut stdin) {
        eprintln!("tascer hook: cannot read the hook input from standard input: {err}");
        return ExitCode::from(1);
    }
    let tascer = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(format!("tascer{}", std::env::consts::EXE_SUFFIX)),
        Err(err) => {
            eprintln!("tascer hook: cannot find this executable: {err}");
            return ExitCode::from(1);
        }
    };
    let home = tascer_hook_client::tascer_home();
    let answered = tascer_hook_client::socket_path(&home, &tascer)
        .and_then(|socket| through_server(&tascer, &socket, &stdin));
    let code = match answered {
        Some(reply) => reply.give(),
        None => in_own_process(&tascer, &stdin),
    };
    ExitCode::from(code)
}

/// The server's answer on `socket`, starting the server first when none
/// listens and the event is one that starts it; `None` when no server
/// took the event.
fn through_server(tascer: &Path, socket: &Path, stdin: &str) -> Option<Reply> {
    if let Some(reply) = tascer_hook_client::reply_from(socket, stdin) {
        return Some(reply);
    }
    if !tascer_hook_client::starts_server(stdin) {
        return None;
    }
    let mut server = tascer_hook_client::spawn_server(tascer, socket).ok()?;
    let started = Instant::now();
    loop {
        // A server that exited (another one won the race to start, or it
        // failed: see its .log) or that is too slow: one last try, then
        // answer without it.
        let gave_up = !matches!(server.try_wait(), Ok(None)) || started.elapsed() > START_WAIT;
        let reply = tascer_hook_client::reply_from(socket, stdin);
        if reply.is_some() || gave_up {
            return reply;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Answers with `tascer hook` in a process of its own (no server), passing
/// its output and exit code through.
fn in_own_process(tascer: &Path, stdin: &str) -> u8 {
    let child = std::process::Command::new(tascer)
        .arg("hook")
        .env(SERVER_ENV, "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => {
            let reply = Reply::error(
                tascer_hook_client::failure_exit_code(stdin),
                format!(
                    "tascer hook: cannot start {} (tascer-hook runs the tascer next to it): {err}",
                    tascer.display()
                ),
            );
            return reply.give();
        }
    };
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    match child.wait() {
        Ok(status) => status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            // Killed by a signal: no answer, so fail as the event requires.
            .unwrap_or_else(|| tascer_hook_client::failure_exit_code(stdin)),
        Err(err) => Reply::error(
            tascer_hook_client::failure_exit_code(stdin),
            format!("tascer hook: {err}"),
        )
        .give(),
    }
}
