//! The client half of `tascer hook`: which hook server answers this
//! process's events, and how an event is handed to it.
//!
//! Claude Code starts a command hook as a new process for every event, so
//! Tascer answers hook events in a warm server (`tascer hook --serve
//! SOCKET`, in the `tascer-claude` crate's `server` module) and the hook
//! process only forwards the event. This crate is that forwarding, kept
//! small so that the `tascer-hook` executable built on it starts about as
//! fast as any program can (docs/claude-code.md, "The hook server").
//!
//! The socket's name is a digest of everything an answer could depend on
//! besides the event: the whole environment, the working directory, the
//! `tascer` executable that serves (path, size, modification time), this
//! crate's version, and the home's `keys/` and `settings.json` as they are
//! on disk. So a hook only ever asks a server that would answer as the
//! hook itself would; any change gives a new socket and a new server.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Environment variable: `off` (or `0`, `false`) answers every event in
/// its own process, without a server.
pub const SERVER_ENV: &str = "TASCER_HOOK_SERVER";
/// The flag that runs the server: `tascer hook --serve SOCKET`.
pub const SERVE_FLAG: &str = "--serve";
/// The version that goes into the digest.
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// How many servers a home may have at once: past that, events are
/// answered in their own processes (an environment that changed on every
/// event must not leave a server per event behind).
const MAX_SERVERS: usize = 8;
/// The longest socket path a Unix socket can bind, with a margin.
const MAX_SOCKET_PATH: usize = 100;

/// Tascer's home: `$TASCER_HOME`, else `~/.tascer`.
pub fn tascer_home() -> PathBuf {
    if let Some(home) = std::env::var_os("TASCER_HOME").filter(|h| !h.is_empty()) {
        return home.into();
    }
    std::env::home_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".tascer")
}

/// What a hook process answers: Claude Code reads the exit code, then
/// standard output (JSON) on exit 0 or standard error on exit 2.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Reply {
    /// 0 (success, stdout parsed), 2 (blocking error, stderr fed back) or 1
    /// (non-blocking error).
    pub exit_code: u8,
    /// JSON for Claude Code, or empty.
    pub stdout: String,
    /// A message: for Claude on exit 2, for the user otherwise.
    pub stderr: String,
    /// True when the event was queued for webhooks and a flusher is still
    /// to be started (`tascer webhook flush`).
    pub webhooks_queued: bool,
}

impl Reply {
    /// Exit 0 with `value` on standard output.
    pub fn json(value: &serde_json::Value) -> Self {
        Reply {
            stdout: value.to_string(),
            ..Reply::default()
        }
    }

    /// Exit 0 and nothing to say.
    pub fn nothing() -> Self {
        Reply::default()
    }

    /// `message` on standard error with `exit_code`.
    pub fn error(exit_code: u8, message: String) -> Self {
        Reply {
            exit_code,
            stderr: message,
            ..Reply::default()
        }
    }

    /// Prints the reply as Claude Code reads it; returns its exit code.
    pub fn give(&self) -> u8 {
        if !self.stdout.is_empty() {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", self.stdout);
            let _ = out.flush();
        }
        if !self.stderr.is_empty() {
            eprintln!("{}", self.stderr);
        }
        self.exit_code
    }
}

/// The directory of a home's hook sockets, locks and logs (mode 0700).
pub fn run_dir(home: &Path) -> PathBuf {
    home.join("run")
}

/// The socket of the server (the `tascer` executable `server`) for this
/// process's environment; `None` when the server is turned off, or the
/// path would be too long for a Unix socket.
pub fn socket_path(home: &Path, server: &Path) -> Option<PathBuf> {
    if !server_enabled() {
        return None;
    }
    let path = run_dir(home).join(format!("hook-{}.sock", digest(home, server)?));
    (path.as_os_str().len() <= MAX_SOCKET_PATH).then_some(path)
}

/// False when [`SERVER_ENV`] turns the server off.
pub fn server_enabled() -> bool {
    !std::env::var(SERVER_ENV).is_ok_and(|v| matches!(v.trim(), "off" | "0" | "false"))
}

/// The digest in the socket's name (see the crate docs); `None` when the
/// working directory cannot be read.
fn digest(home: &Path, server: &Path) -> Option<String> {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let mut hash = sha2::Sha256::new();
    let mut put = |bytes: &[u8]| {
        hash.update(bytes);
        hash.update([0]);
    };
    put(VERSION.as_bytes());
    put(server.as_os_str().as_bytes());
    put(file_identity(server).as_bytes());
    put(std::env::current_dir().ok()?.as_os_str().as_bytes());
    let mut vars: Vec<_> = std::env::vars_os().collect();
    vars.sort();
    for (name, value) in &vars {
        put(name.as_bytes());
        put(value.as_bytes());
    }
    let keys = home.join("keys");
    let mut key_files: Vec<_> = std::fs::read_dir(&keys)
        .map(|dir| dir.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    key_files.sort();
    for file in &key_files {
        put(file.as_os_str().as_bytes());
        put(file_identity(file).as_bytes());
    }
    put(file_identity(&home.join("settings.json")).as_bytes());
    let digest = hash.finalize();
    Some(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// A file's identity and version as `stat` gives them ("-" when absent).
fn file_identity(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(m) => format!(
            "{}:{}:{}:{}.{}",
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec()
        ),
        Err(_) => "-".into(),
    }
}

/// True for the events worth starting a server for: the tool calls,
/// which come many times per session. The others (a session's start and
/// end, a prompt, a stop, a notification) go to a server when one runs
/// for their environment, else are answered in their own process: Claude
/// Code gives some of them variables of their own (`CLAUDE_ENV_FILE`, …),
/// so a server started for one would rarely answer another.
pub fn starts_server(stdin: &str) -> bool {
    #[derive(Deserialize)]
    struct Event {
        hook_event_name: Option<String>,
    }
    serde_json::from_str::<Event>(stdin).is_ok_and(|e| {
        matches!(
            e.hook_event_name.as_deref(),
            Some("PreToolUse" | "PostToolUse" | "PostToolUseFailure")
        )
    })
}

/// The server's answer to the event on `socket`, or `None` when no server
/// took it (answer it another way). An event the server took but did not
/// answer gets [`lost_reply`].
pub fn reply_from(socket: &Path, stdin: &str) -> Option<Reply> {
    match ask(socket, stdin) {
        Asked::Answered(reply) => Some(reply),
        Asked::Lost(why) => Some(lost_reply(socket, stdin, &why)),
        Asked::NoServer => None,
    }
}

/// The byte a server sends when it has read an event, before it acts on
/// it.
pub const TAKEN: u8 = b'+';

/// What asking the server gave.
#[derive(Debug)]
pub enum Asked {
    /// The server's answer.
    Answered(Reply),
    /// No server listens on the socket, or none took the event.
    NoServer,
    /// The server took the event but gave no answer.
    Lost(String),
}

/// Hands the event (`stdin`, as read) to the server on `socket`.
pub fn ask(socket: &Path, stdin: &str) -> Asked {
    let mut stream = match UnixStream::connect(socket) {
        Ok(stream) => stream,
        Err(err) => {
            if err.kind() == std::io::ErrorKind::ConnectionRefused {
                remove_if_dead(socket);
            }
            return Asked::NoServer;
        }
    };
    // A server reads the whole event before it takes it: one that closed
    // the connection while the event was being sent (it was stopping, or
    // was killed) did not take it, whatever the error.
    let sent = stream
        .write_all(stdin.as_bytes())
        .and_then(|()| stream.shutdown(std::net::Shutdown::Write));
    if sent.is_err() {
        return Asked::NoServer;
    }
    // The server sends TAKEN once it has the whole event and before it
    // acts on it: a connection that ends before that (a server killed as
    // the event arrived) left the event untouched.
    let mut taken = [0u8; 1];
    match stream.read_exact(&mut taken) {
        Ok(()) if taken[0] == TAKEN => {}
        Ok(()) => return Asked::Lost("its answer is not valid (no acknowledgement)".into()),
        Err(_) => return Asked::NoServer,
    }
    let mut reply = String::new();
    if let Err(err) = stream.read_to_string(&mut reply) {
        return Asked::Lost(format!("cannot read the answer: {err}"));
    }
    match serde_json::from_str(&reply) {
        Ok(reply) => Asked::Answered(reply),
        Err(_) if reply.is_empty() => {
            Asked::Lost("it closed the connection without an answer".into())
        }
        Err(err) => Asked::Lost(format!("its answer is not valid ({err})")),
    }
}

/// Removes a socket file no server listens on (its server was killed),
/// so that a new server can bind it — unless a server holds the socket's
/// lock: a live server holds it from before it binds the path until it
/// exits (one that is starting refuses connections between binding the
/// path and listening on it). The lock file itself stays (see the
/// server).
fn remove_if_dead(socket: &Path) {
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(socket.with_extension("lock"));
    let held = match &lock {
        Ok(file) => file.try_lock().is_err(),
        Err(_) => false,
    };
    if !held {
        let _ = std::fs::remove_file(socket);
    }
}

/// The exit code for an event the hook cannot answer: 2 for a
/// `PreToolUse` (the call is refused: fail closed), 1 for anything else
/// (reported, not blocking).
pub fn failure_exit_code(stdin: &str) -> u8 {
    let pre_tool_use = serde_json::from_str::<serde_json::Value>(stdin)
        .ok()
        .and_then(|v| {
            v.get("hook_event_name")?
                .as_str()
                .map(|e| e == "PreToolUse")
        })
        .unwrap_or(false);
    if pre_tool_use { 2 } else { 1 }
}

/// The answer to give when the server lost the event: a `PreToolUse` is
/// refused (exit 2), anything else reported (exit 1). It is not answered
/// again: the server may have recorded it.
pub fn lost_reply(socket: &Path, stdin: &str, why: &str) -> Reply {
    Reply::error(
        failure_exit_code(stdin),
        format!(
            "tascer hook: the hook server at {} took the event but {why}; it may have recorded it, so it is not answered again (set {SERVER_ENV}=off to answer every event in its own process)",
            socket.display()
        ),
    )
}

/// The sockets of live servers in `dir`; a socket file whose server is
/// gone (killed by SIGTERM or SIGKILL: nobody holds its `.lock`) is
/// removed on the way, so that it does not count toward [`MAX_SERVERS`].
fn live_sockets(dir: &Path) -> Result<usize, String> {
    let sockets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .collect();
    for socket in &sockets {
        remove_if_dead(socket);
    }
    Ok(sockets.iter().filter(|s| s.exists()).count())
}

/// Starts `tascer hook --serve socket` (the executable `server`) in the
/// background: its own process group, no standard input or output,
/// standard error to the socket's `.log` file. Refused when the home has
/// [`MAX_SERVERS`] live servers already (dead servers' sockets are removed
/// first).
pub fn spawn_server(server: &Path, socket: &Path) -> Result<std::process::Child, String> {
    let dir = socket.parent().ok_or("the socket has no directory")?;
    make_private_dir(dir)?;
    let servers = live_sockets(dir)?;
    if servers >= MAX_SERVERS {
        return Err(format!(
            "{} holds {servers} hook servers already; events are answered in their own processes",
            dir.display()
        ));
    }
    let log = std::fs::File::create(socket.with_extension("log"))
        .map_err(|e| format!("cannot create the server's log: {e}"))?;
    let mut command = std::process::Command::new(server);
    command
        .arg("hook")
        .arg(SERVE_FLAG)
        .arg(socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    command
        .spawn()
        .map_err(|e| format!("cannot start {} as the hook server: {e}", server.display()))
}

/// Creates `dir` with mode 0700 when missing. Its parent (the home) must
/// exist: a server started as its home is deleted must not create it
/// again.
pub fn make_private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const PRE_TOOL_USE: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s"}"#;

    /// A server for one connection on `socket`: reads the event, sends
    /// `answer(event)` (or nothing) and returns the event it read.
    fn serve_once(
        socket: &Path,
        answer: impl FnOnce(&str) -> Option<Reply> + Send + 'static,
    ) -> std::thread::JoinHandle<String> {
        let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut event = String::new();
            conn.read_to_string(&mut event).unwrap();
            conn.write_all(&[TAKEN]).unwrap();
            if let Some(reply) = answer(&event) {
                let text = serde_json::to_string(&reply).unwrap();
                conn.write_all(text.as_bytes()).unwrap();
            }
            event
        })
    }

    #[test]
    fn dead_servers_sockets_do_not_count_toward_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        make_private_dir(&run).unwrap();
        // Eight sockets left by killed servers (no lock held), one of a
        // live server (its lock held, as a server holds it).
        for i in 0..MAX_SERVERS {
            std::fs::write(run.join(format!("hook-dead{i}.sock")), "").unwrap();
        }
        let live = run.join("hook-live.sock");
        std::fs::write(&live, "").unwrap();
        let lock = std::fs::File::create(live.with_extension("lock")).unwrap();
        lock.try_lock().unwrap();
        let mut child = spawn_server(Path::new("/bin/true"), &run.join("hook-new.sock"))
            .expect("dead servers' sockets are not counted");
        child.wait().unwrap();
        assert!(live.exists(), "a live server's socket stays");
        for i in 0..MAX_SERVERS {
            assert!(!run.join(format!("hook-dead{i}.sock")).exists());
        }
        // Eight live servers: the limit holds.
        let mut locks = vec![lock];
        for i in 1..MAX_SERVERS {
            let socket = run.join(format!("hook-live{i}.sock"));
            std::fs::write(&socket, "").unwrap();
            let lock = std::fs::File::create(socket.with_extension("lock")).unwrap();
            lock.try_lock().unwrap();
            locks.push(lock);
        }
        let refused = spawn_server(Path::new("/bin/true"), &run.join("hook-new.sock"));
        assert!(refused.is_err(), "{refused:?}");
    }

    #[test]
    fn a_socket_without_a_server_is_removed_and_reported_as_no_server() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hook-x.sock");
        drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
        assert!(socket.exists(), "a closed listener leaves its file");
        assert!(matches!(ask(&socket, PRE_TOOL_USE), Asked::NoServer));
        assert!(!socket.exists());
        assert!(matches!(ask(&socket, PRE_TOOL_USE), Asked::NoServer));
    }

    #[test]
    fn an_event_the_server_took_without_answering_is_refused_not_answered_twice() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hook-x.sock");
        let server = serve_once(&socket, |_| None);
        let Asked::Lost(why) = ask(&socket, PRE_TOOL_USE) else {
            panic!("expected a lost answer");
        };
        assert_eq!(server.join().unwrap(), PRE_TOOL_USE, "the event reached it");
        let reply = lost_reply(&socket, PRE_TOOL_USE, &why);
        assert_eq!(reply.exit_code, 2, "a PreToolUse is refused");
        assert!(
            reply.stderr.contains("without an answer"),
            "{}",
            reply.stderr
        );
        assert!(reply.stderr.contains(&socket.display().to_string()));
        let other = lost_reply(&socket, r#"{"hook_event_name":"PostToolUse"}"#, &why);
        assert_eq!(other.exit_code, 1, "other events are reported");
    }

    #[test]
    fn a_server_gone_before_it_took_the_event_left_it_to_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hook-x.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let server = std::thread::spawn(move || drop(listener.accept().unwrap()));
        assert!(matches!(ask(&socket, PRE_TOOL_USE), Asked::NoServer));
        server.join().unwrap();
    }

    #[test]
    fn an_answer_comes_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hook-x.sock");
        let server = serve_once(&socket, |event| {
            Some(Reply::json(&serde_json::json!({"echo": event})))
        });
        let Asked::Answered(reply) = ask(&socket, PRE_TOOL_USE) else {
            panic!("expected an answer");
        };
        assert_eq!(server.join().unwrap(), PRE_TOOL_USE);
        let echoed: serde_json::Value = serde_json::from_str(&reply.stdout).unwrap();
        assert_eq!(echoed["echo"], PRE_TOOL_USE);
        assert_eq!(reply.exit_code, 0);
    }

    #[test]
    fn only_tool_events_start_a_server() {
        assert!(starts_server(PRE_TOOL_USE));
        assert!(starts_server(
            r#"{"hook_event_name":"PostToolUse","tool_response":{"a":[1,2]}}"#
        ));
        assert!(!starts_server(r#"{"hook_event_name":"SessionStart"}"#));
        assert!(!starts_server("not json"));
    }

    #[test]
    fn the_socket_follows_the_home_and_the_server_and_is_off_when_too_long() {
        let server = Path::new("/usr/bin/env");
        let short = socket_path(Path::new("/tmp/h"), server).unwrap();
        assert!(short.starts_with("/tmp/h/run"));
        assert_eq!(socket_path(Path::new("/tmp/h"), server).unwrap(), short);
        assert_ne!(
            socket_path(Path::new("/tmp/h"), Path::new("/bin/sh")).unwrap(),
            short,
            "another server executable, another socket"
        );
        let long = format!("/tmp/{}", "d".repeat(120));
        assert_eq!(socket_path(Path::new(&long), server), None);
    }
}
