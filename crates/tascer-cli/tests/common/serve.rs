//! `tascer serve` tests' fixture: a home with real sessions recorded by
//! `tascer run` against the scripted mock model, a ledger row tampered
//! with as a disk editor would, and the server started as a subprocess on
//! port 0 (its URL read from the first line of its standard output).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use super::{json_lines, tascer, texts};

/// The PostToolUse hook of the recorded sessions' Bash calls.
pub const POST_HOOK: &str = "cat > /dev/null";

/// The settings of the recorded sessions: `Bash(echo:*)` allowed,
/// `Bash(rm:*)` denied (so calls are decided by rules and by the mode),
/// and a PostToolUse hook on Bash.
pub fn settings() -> String {
    json!({
        "permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": POST_HOOK}]}]}
    })
    .to_string()
}

/// A home, its working directory, and the sessions recorded in it.
pub struct Recorded {
    pub home: tempfile::TempDir,
    pub ws: tempfile::TempDir,
    /// Write + Edit of notes.md (allowed by the mode), `echo` (allowed by
    /// a rule), `rm -rf build` (denied by a rule), on model `claude-edit`.
    pub edit: String,
    /// A Read and a Glob on model `claude-read`.
    pub read: String,
}

impl Recorded {
    pub fn home(&self) -> &Path {
        self.home.path()
    }
}

fn edit_scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Write", json!({"file_path": "notes.md", "content": "# Notes\n\nfirst line\n"}))
                .with_tool("Bash", json!({"command": "echo hello from the session"}))
                .with_tool("Bash", json!({"command": "rm -rf build"})),
        )
        .turn(Turn::new().with_tool(
            "Edit",
            json!({"file_path": "notes.md", "old_string": "first line", "new_string": "second line"}),
        ))
        .turn(Turn::text("Notes written; the rm was refused."))
}

fn read_scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Glob", json!({"pattern": "*.md"}))
                .with_tool("Read", json!({"file_path": "readme.md"})),
        )
        .turn(Turn::text("The readme says hello."))
}

/// Runs one `tascer run` session of `scenario` with `prompt` on `model`
/// in `home`/`ws`; returns its id.
pub async fn run_session(
    home: &Path,
    ws: &Path,
    scenario: Scenario,
    prompt: &str,
    model: &str,
) -> String {
    let server = MockServer::start(scenario).await.unwrap();
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["run", "--output-format", "stream-json", "--verbose"])
        .args(["--permission-mode", "acceptEdits", "--model", model])
        .args(["--settings", &settings(), prompt]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "tascer run: {stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    result["session_id"].as_str().unwrap().to_string()
}

/// A home with the edit and the read sessions.
pub async fn record() -> Recorded {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("readme.md"), "hello\n").unwrap();
    let edit = run_session(
        home.path(),
        ws.path(),
        edit_scenario(),
        "write the notes",
        "claude-edit",
    )
    .await;
    let read = run_session(
        home.path(),
        ws.path(),
        read_scenario(),
        "summarize the readme",
        "claude-read",
    )
    .await;
    Recorded {
        home,
        ws,
        edit,
        read,
    }
}

/// Changes the payload of entry `seq` of `session` in the home's SQLite
/// file behind the ledger's back; `tascer verify` must then name it.
pub fn tamper(home: &Path, session: &str, seq: i64) {
    let conn = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    let n = conn
        .execute(
            "UPDATE ledger_entries SET payload = json_set(payload, '$.tampered', 1) \
             WHERE session_id = ?1 AND seq = ?2",
            rusqlite::params![session, seq],
        )
        .unwrap();
    assert_eq!(n, 1, "no entry {seq} in session {session}");
}

/// `tascer serve --port 0` on a home, killed when dropped.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The access token.
    pub token: String,
    /// The whole URL printed (with `?token=`).
    pub url: String,
}

impl Served {
    /// Starts the server on `home` (contracts from `ws/contracts`) and
    /// reads its URL.
    pub fn start(home: &Path, ws: &Path, extra: &[&str]) -> Served {
        let mut cmd = tascer(home, ws);
        cmd.args(["serve", "--port", "0"])
            .args(extra)
            .env_remove("TASCER_SERVE_TOKEN")
            .env_remove("TASCER_QUEUE")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).unwrap();
        let url = first.trim().to_string();
        let (base, token) = url
            .split_once("/?token=")
            .unwrap_or_else(|| panic!("the first line is not the URL: {url:?}"));
        assert!(base.starts_with("http://127.0.0.1:"), "{url}");
        Served {
            base: base.to_string(),
            token: token.to_string(),
            url: url.clone(),
            child,
        }
    }

    /// A GET of `path` with the token; its status and JSON body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}"));
        (status, body)
    }

    /// A GET of `path` with the token that must answer 200; its body.
    pub async fn ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository's root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes a pending contract into `ws/contracts` and a completed one,
/// naming `session`, into `ws/contracts_completed`.
pub fn write_contracts(ws: &Path, session: &str) {
    let dir = ws.join("contracts");
    let done = ws.join("contracts_completed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&done).unwrap();
    std::fs::write(
        dir.join("fix-typo.md"),
        "# Contract: Fix the typo in the readme\n\n## Status\npending\n\n## Task\nFix the typo.\n",
    )
    .unwrap();
    std::fs::write(
        done.join("write-notes.md"),
        format!(
            "# Contract: Write the notes\n\n## Status\ncompleted\n\n## Task\nWrite notes.md.\n\n\
             ## Result\n**Outcome:** notes.md written\n- Session: `{session}`\n"
        ),
    )
    .unwrap();
}

/// A job of the queue fixture.
fn job(name: &str) -> tascer_fleet::NewJob {
    tascer_fleet::NewJob {
        name: name.into(),
        title: format!("Do {name}"),
        contract_path: format!("contracts/{name}.md"),
        contract: format!("# Contract: Do {name}\n\n## Status\npending\n\n## Task\nDo it.\n"),
        repo: "/nonexistent/repo".into(),
        base_commit: "0".repeat(40),
        max_attempts: 2,
    }
}

/// Enqueues jobs `alpha` and `beta` in the default queue of the database
/// at `url`; a worker (`worker-7`, pid 4242 on `build-host`) claims
/// `alpha` and holds its lease.
pub async fn fill_queue(url: &str) {
    let queue = tascer_fleet::Queue::open(url, tascer_fleet::DEFAULT_QUEUE, 2)
        .await
        .unwrap();
    queue.enqueue(&[job("alpha"), job("beta")]).await.unwrap();
    let worker = tascer_fleet::Holder {
        owner: "worker-7".into(),
        pid: 4242,
        host: "build-host".into(),
    };
    let claimed = queue
        .claim(&worker, std::time::Duration::from_secs(600))
        .await
        .unwrap();
    assert_eq!(claimed.job.unwrap().name, "alpha");
}
