//! One `tascer hook` process: an event answered through the hook server
//! of this environment when one runs, else in this process, which then
//! starts one for the next event ([`answer_event`]); or the server itself
//! (`tascer hook --serve SOCKET`, [`serve`]). Both start the webhook
//! flusher when an event was queued for the webhooks.
//!
//! They run inside the `tascer` executable: the flusher and the server are
//! that executable started again (`tascer webhook flush`, `tascer hook
//! --serve`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tascer_hook_client::Reply as HookReply;

use crate::server::{self, FlusherStart};

/// What a `tascer hook` process gives Claude Code for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The answer, to print with [`HookReply::give`] (its exit code is the
    /// process's).
    pub reply: HookReply,
    /// A warning for standard error after the answer: events queued for
    /// the webhooks whose flusher could not be started.
    pub warning: Option<String>,
}

/// Answers one event (`stdin`, Claude Code's JSON as read) for `home`:
/// through the hook server of this environment when one takes it; else in
/// this process, which then starts the webhook flusher when the event was
/// queued for the webhooks, and (after a tool event) a hook server for the
/// next event.
pub fn answer_event(stdin: &str, home: &Path) -> Answered {
    let exe = std::env::current_exe().ok();
    let socket = exe
        .as_deref()
        .and_then(|exe| tascer_hook_client::socket_path(home, exe));
    if let Some(reply) = socket
        .as_deref()
        .and_then(|socket| tascer_hook_client::reply_from(socket, stdin))
    {
        return Answered {
            reply,
            warning: None,
        };
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return Answered {
                reply: HookReply::error(
                    1,
                    format!("tascer hook: cannot start the async runtime: {err}"),
                ),
                warning: None,
            };
        }
    };
    let reply = runtime.block_on(crate::answer(stdin, home));
    let warning = if reply.webhooks_queued {
        start_flusher(home).err().map(|err| {
            format!(
                "tascer hook: webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
            )
        })
    } else {
        None
    };
    if let (Some(exe), Some(socket)) = (exe, socket)
        && tascer_hook_client::starts_server(stdin)
    {
        // For the next event: this one is answered already.
        if let Err(err) = tascer_hook_client::spawn_server(&exe, &socket) {
            tracing::debug!("no hook server: {err}");
        }
    }
    Answered { reply, warning }
}

/// Starts the webhook flusher (`tascer webhook flush`, this executable)
/// for `home`.
pub fn start_flusher(home: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the tascer binary: {e}"))?;
    tascer_webhook::spawn_flusher(home, &exe).map(|_| ())
}

/// Runs the hook server for `home` on `socket` until it is idle (see
/// [`server::serve`]), on a runtime of its own; when it ends to renew
/// itself, starts a fresh server on the same socket before returning.
pub fn serve(home: PathBuf, socket: PathBuf) -> Result<(), String> {
    // One thread: an event is answered where it was accepted, without
    // waking a worker for it (the blocking pool still takes the store's
    // upkeep after each answer, server.rs).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    let flusher: FlusherStart = Arc::new(start_flusher);
    let ended = runtime.block_on(server::serve(
        home,
        socket.clone(),
        server::idle_from_env(),
        server::renew_from_env(),
        flusher,
    ))?;
    drop(runtime);
    if ended == server::Ended::Renew {
        // The socket is free and the lock released: the successor binds
        // it (a hook that came in between started one itself, and the
        // lock lets only one of the two serve).
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this executable to renew the server: {e}"))?;
        tascer_hook_client::spawn_server(&exe, &socket)?;
    }
    Ok(())
}
