//! Helpers shared by the CLI integration tests that drive whole sessions:
//! the `tascer` command with a clean environment, stream-json parsing, a
//! tiny loopback HTTP server and direct reads of the ledger tables.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

pub mod claude_code;
pub mod plugin_fixture;
pub mod protocol;
pub mod sdk;
pub mod sdk_cases;
pub mod sdk_drop_in;
pub mod sdk_plugins;
pub mod sdk_rewind;
pub mod sdk_sessions;
pub mod serve;

/// Variables that would point a session at a real provider or service.
const OUTSIDE_VARS: [&str; 24] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "TASCER_EXTRA_HEADERS",
    "TASCER_CONTRACTOR_PROVIDER",
    "TASCER_CONTRACTOR_MODEL",
    "TASCER_MODEL",
    "TASCER_PRICES",
    "TASCER_LOG",
    "BRAVE_SEARCH_API_KEY",
    "BRAVE_SEARCH_BASE_URL",
    "TASCER_SIGNING",
    "TASCER_DB_BUSY_TIMEOUT_MS",
    "TASCER_DB_RETRIES",
    "TASCER_STORE",
    "TASCER_STORE_RETRY_MS",
    "TASCER_STORE_POOL_SIZE",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CONFIG_DIR",
];

/// A `tascer` command with a clean provider environment, its own home and
/// working directory.
pub fn tascer(home: &Path, cwd: &Path) -> Command {
    program(env!("CARGO_BIN_EXE_tascer"), home, cwd)
}

/// The `tascer-hook` executable, set up as [`tascer`] is.
#[allow(dead_code)] // Not every test binary uses it.
pub fn tascer_hook(home: &Path, cwd: &Path) -> Command {
    program(env!("CARGO_BIN_EXE_tascer-hook"), home, cwd)
}

fn program(path: &str, home: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(path);
    for var in OUTSIDE_VARS {
        cmd.env_remove(var);
    }
    cmd.env("TASCER_HOME", home).current_dir(cwd);
    cmd
}

/// A Tascer home and a project whose `.tascer/settings.json` is `settings`.
pub fn project_with_settings(settings: &Value) -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join(".tascer")).unwrap();
    std::fs::write(
        work.path().join(".tascer/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    (home, work)
}

/// Runs `cmd` with `input` on its standard input and collects its output.
pub fn run_with_stdin(mut cmd: Command, input: &str) -> std::process::Output {
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `tascer hook` in `cwd` with `event` on standard input, as Claude
/// Code does.
pub fn hook(home: &Path, cwd: &Path, event: &Value) -> std::process::Output {
    let mut cmd = tascer(home, cwd);
    cmd.arg("hook");
    run_with_stdin(cmd, &event.to_string())
}

/// `tascer run --output-format stream-json --permission-mode
/// bypassPermissions PROMPT [extra…]` against the mock at `base_url`.
pub fn run_cmd(home: &Path, cwd: &Path, base_url: &str, prompt: &str, extra: &[&str]) -> Command {
    let mut cmd = tascer(home, cwd);
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", base_url)
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
        ])
        .args(extra)
        .arg(prompt);
    cmd
}

/// Runs `scenario` as `tascer run --output-format stream-json --verbose
/// [extra…] go` in `ws` against the mock model; asserts that it succeeded
/// and returns its result frame.
pub async fn record_run(
    home: &Path,
    ws: &Path,
    scenario: tascer_testkit::Scenario,
    extra: &[&str],
) -> Value {
    let server = tascer_testkit::MockServer::start(scenario).await.unwrap();
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["run", "--output-format", "stream-json", "--verbose"])
        .args(extra)
        .arg("go");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    frames.into_iter().find(|f| f["type"] == "result").unwrap()
}

/// Runs git in `dir` with a fixed author and committer; its standard
/// output, trimmed, or its error output.
pub fn git_in(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Standard output and error as text, for assertion messages.
pub fn texts(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One JSON value per line.
pub fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// A tool call seen in a stream-json transcript, with its result.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub id: String,
    pub name: String,
    pub input: Value,
    /// `parent_tool_use_id` of the assistant frame (set inside subagents).
    pub parent: Option<String>,
    /// The `tool_result` blocks answering this call (exactly one expected).
    pub results: Vec<ToolResult>,
}

/// One `tool_result` block and the matching `tool_use_result` raw value.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub content: Value,
    pub is_error: bool,
    pub raw: Value,
}

impl Exchange {
    /// The single result; panics unless there is exactly one.
    pub fn result(&self) -> &ToolResult {
        assert_eq!(
            self.results.len(),
            1,
            "{} ({}) must have exactly one tool_result: {:?}",
            self.name,
            self.id,
            self.results
        );
        &self.results[0]
    }

    /// The result's text (string content, or the text blocks joined).
    pub fn text(&self) -> String {
        content_text(&self.result().content)
    }
}

/// The text of a `tool_result` content value.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// Pairs every `tool_use` of the assistant frames with the `tool_result`
/// blocks of the user frames, in order of the calls.
pub fn exchanges(frames: &[Value]) -> Vec<Exchange> {
    let mut calls: Vec<Exchange> = Vec::new();
    for frame in frames {
        match frame["type"].as_str() {
            Some("assistant") => {
                for block in frame["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_use" {
                        calls.push(Exchange {
                            id: block["id"].as_str().unwrap().to_string(),
                            name: block["name"].as_str().unwrap().to_string(),
                            input: block["input"].clone(),
                            parent: frame["parent_tool_use_id"].as_str().map(str::to_string),
                            results: Vec::new(),
                        });
                    }
                }
            }
            Some("user") => {
                let Some(blocks) = frame["message"]["content"].as_array() else {
                    continue;
                };
                let raws = &frame["tool_use_result"];
                for (i, block) in blocks.iter().enumerate() {
                    if block["type"] != "tool_result" {
                        continue;
                    }
                    let raw = if blocks.len() == 1 {
                        raws.clone()
                    } else {
                        raws.get(i).cloned().unwrap_or(Value::Null)
                    };
                    let id = block["tool_use_id"].as_str().unwrap();
                    let call = calls
                        .iter_mut()
                        .find(|c| c.id == id)
                        .unwrap_or_else(|| panic!("tool_result for unknown tool_use {id}"));
                    call.results.push(ToolResult {
                        content: block["content"].clone(),
                        is_error: block["is_error"].as_bool().unwrap_or(false),
                        raw,
                    });
                }
            }
            _ => {}
        }
    }
    calls
}

/// A request the loopback web server received.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub method: String,
    /// Path and query, e.g. `/res/v1/web/search?q=a&count=10`.
    pub target: String,
    /// Lowercase names.
    pub headers: BTreeMap<String, String>,
}

/// The answer of the loopback web server's handler.
pub struct HttpResponse {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

type Handler = dyn Fn(&HttpRequest) -> HttpResponse + Send + Sync;

/// A tiny HTTP/1.1 server on 127.0.0.1 (one request per connection), on
/// its own thread. Stops when dropped.
pub struct WebServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<HttpRequest>>>,
    stop: Arc<AtomicBool>,
}

impl WebServer {
    pub fn start(handler: impl Fn(&HttpRequest) -> HttpResponse + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (seen, stopped) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (seen, handler) = (seen.clone(), handler.clone());
                std::thread::spawn(move || serve_one(stream, &seen, handler.as_ref()));
            }
        });
        WebServer {
            addr,
            requests,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<HttpRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve_one(stream: TcpStream, seen: &Mutex<Vec<HttpRequest>>, handler: &Handler) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let request = HttpRequest {
        method,
        target,
        headers,
    };
    let response = handler(&request);
    seen.lock().unwrap().push(request);
    let reason = match response.status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Status",
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        response.status,
        response.content_type,
        response.body.len()
    );
    let mut stream = reader.into_inner();
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(response.body.as_bytes());
    let _ = stream.flush();
}

/// One row of `ledger_entries`.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRow {
    pub seq: i64,
    pub kind: String,
    pub payload: Value,
    pub prev_hash: String,
    pub hash: String,
}

/// The first column, as text, of each row `sql` returns from the home's
/// SQLite file (`tascer.db`).
pub fn home_db_texts(home: &Path, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    conn.prepare(sql)
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A session's ledger rows ordered by seq, read straight from the database
/// (empty when the database or the session does not exist yet).
pub fn ledger_rows(home: &Path, session: &str) -> Vec<LedgerRow> {
    let db = home.join("tascer.db");
    if !db.is_file() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open_with_flags(
        &db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let Ok(mut stmt) = conn.prepare(
        "SELECT seq, kind, payload, prev_hash, hash FROM ledger_entries \
         WHERE session_id = ?1 ORDER BY seq",
    ) else {
        return Vec::new();
    };
    stmt.query_map([session], |row| {
        let payload: String = row.get(2)?;
        Ok(LedgerRow {
            seq: row.get(0)?,
            kind: row.get(1)?,
            payload: serde_json::from_str(&payload).unwrap_or(Value::Null),
            prev_hash: row.get(3)?,
            hash: row.get(4)?,
        })
    })
    .unwrap()
    .collect::<Result<Vec<_>, _>>()
    .unwrap()
}

/// `tascer report SESSION --format json`, parsed.
pub fn report_json(home: &Path, cwd: &Path, session: &str) -> Value {
    let out = tascer(home, cwd)
        .args(["report", session, "--format", "json"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "report failed: {stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// True when `python3` runs; otherwise a SKIPPED line for `test` (a
/// failure under `TASCER_TEST_REQUIRE_DEPS=1`).
pub fn python3_available(test: &str) -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        tascer_testkit::skip(test, "python3 not found");
    }
    ok
}
