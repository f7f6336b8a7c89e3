//! Many `tascer run` processes on one Tascer home: no write is lost to lock
//! contention.
//!
//! Twenty processes share one `TASCER_HOME` (one SQLite file for the
//! session store and the ledger) and one mock model server, each running a
//! session of 20 tool calls at the same time. Every run must succeed
//! without a "locked"/"busy" line on stderr, every session's stored history
//! must be exactly what the model was last sent (plus its final answer),
//! every session must resume, and `tascer verify --all` must pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Child, Stdio};

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, RecordedRequest, Scenario, Turn};

/// Concurrent `tascer run` processes.
const PROCESSES: usize = 20;
/// Tool calls in each session.
const TOOL_CALLS: usize = 20;

fn scenario() -> Scenario {
    let mut scenario = Scenario::new();
    for i in 0..TOOL_CALLS {
        scenario = scenario.turn(
            Turn::new()
                .with_text(format!("Reading the notes, pass {i}."))
                .with_tool("Read", json!({"file_path": "notes.txt"})),
        );
    }
    scenario.turn(Turn::text("All notes read."))
}

fn prompt(i: usize) -> String {
    format!("session {i}: read the notes")
}

/// A content block reduced to what both sides must agree on.
fn block_signature(block: &Value) -> String {
    match block["type"].as_str().unwrap_or("?") {
        "text" => format!("text:{}", block["text"].as_str().unwrap_or("")),
        "tool_use" => format!(
            "tool_use:{}:{}:{}",
            block["id"], block["name"], block["input"]
        ),
        "tool_result" => {
            let content = content_text(&block["content"]);
            format!(
                "tool_result:{}:{}:{}",
                block["tool_use_id"],
                block["is_error"].as_bool().unwrap_or(false),
                content
            )
        }
        other => format!("{other}:{block}"),
    }
}

/// `(role, block signatures)` of each message of a conversation.
fn conversation_signature(messages: &Value) -> Vec<(String, Vec<String>)> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let blocks = match &m["content"] {
                Value::String(s) => vec![format!("text:{s}")],
                Value::Array(blocks) => blocks.iter().map(block_signature).collect(),
                other => panic!("unexpected content {other}"),
            };
            (m["role"].as_str().unwrap().to_string(), blocks)
        })
        .collect()
}

/// The requests of the session whose first prompt is `prompt`.
fn requests_of<'a>(requests: &'a [RecordedRequest], prompt: &str) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| r.body["messages"][0].to_string().contains(prompt))
        .collect()
}

fn spawn_run(home: &Path, ws: &Path, url: &str, prompt: &str, extra: &[&str]) -> Child {
    run_cmd(home, ws, url, prompt, extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for every child; returns `(stdout, stderr)` of each, and fails
/// the test on a non-zero exit or a lock message on stderr.
fn finish_all(children: Vec<Child>, what: &str) -> Vec<(String, String)> {
    let mut outputs = Vec::new();
    let mut problems = Vec::new();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = texts(&out);
        let lower = stderr.to_lowercase();
        if !out.status.success() {
            problems.push(format!("{what} {i} exited {}: {stderr}", out.status));
        } else if lower.contains("locked") || lower.contains("busy") {
            problems.push(format!("{what} {i} reported contention: {stderr}"));
        }
        outputs.push((stdout, stderr));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    outputs
}

#[test]
fn twenty_concurrent_runs_on_one_home_lose_no_write() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "one line of notes\n").unwrap();
    let server = MockServer::start_blocking(scenario()).unwrap();
    let url = server.url();

    let sessions: Vec<String> = (0..PROCESSES).map(|_| tascer::new_id()).collect();
    let children: Vec<Child> = sessions
        .iter()
        .enumerate()
        .map(|(i, id)| spawn_run(&home, &ws, &url, &prompt(i), &["--session-id", id]))
        .collect();
    let outputs = finish_all(children, "run");
    for (i, (stdout, _)) in outputs.iter().enumerate() {
        let frames = json_lines(stdout.as_bytes());
        let result = frames.last().unwrap();
        assert_eq!(result["type"], "result", "run {i}: {stdout}");
        assert_eq!(result["is_error"], false, "run {i}: {result}");
        assert_eq!(result["num_turns"], TOOL_CALLS + 1, "run {i}: {result}");
    }

    // Every session's stored history is what the model was sent last,
    // followed by the model's final answer.
    let requests = server.requests();
    let store = tascer::SessionStore::open_in_home(&home).unwrap();
    for (i, id) in sessions.iter().enumerate() {
        let mine = requests_of(&requests, &prompt(i));
        assert_eq!(mine.len(), TOOL_CALLS + 1, "session {i}: model calls");
        let last = mine
            .iter()
            .max_by_key(|r| r.body["messages"].as_array().map_or(0, Vec::len))
            .unwrap();
        let history = serde_json::to_value(store.history(id).unwrap()).unwrap();
        let mut stored = conversation_signature(&history);
        let final_answer = stored.pop().unwrap();
        assert_eq!(
            final_answer,
            (
                "assistant".to_string(),
                vec!["text:All notes read.".to_string()]
            ),
            "session {i}"
        );
        assert_eq!(
            stored,
            conversation_signature(&last.body["messages"]),
            "session {i}: the stored history differs from what the model was sent"
        );
        let info = store.session(id).unwrap().unwrap();
        assert_eq!(info.num_turns as usize, TOOL_CALLS + 1, "session {i}");
        assert_eq!(info.status, "success", "session {i}");
    }
    drop(store);

    // Every session resumes (concurrently too) with its whole history.
    server.clear_requests();
    let children: Vec<Child> = sessions
        .iter()
        .enumerate()
        .map(|(i, id)| {
            spawn_run(
                &home,
                &ws,
                &url,
                &format!("resume {i}: anything left?"),
                &["--resume", id],
            )
        })
        .collect();
    finish_all(children, "resume");
    let requests = server.requests();
    for (i, _) in sessions.iter().enumerate() {
        let mine = requests_of(&requests, &prompt(i));
        assert_eq!(mine.len(), 1, "resumed session {i}: one model call");
        let sent = conversation_signature(&mine[0].body["messages"]);
        // prompt, 20 × (tool call, result), answer, new prompt
        assert_eq!(sent.len(), 2 * TOOL_CALLS + 3, "resumed session {i}");
    }

    let out = tascer(&home, &ws)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(
        out.status.success(),
        "verify --all failed:\n{stdout}\n{stderr}"
    );
    // Signed by default: the processes raced to create the home's key on
    // first use, and all of them sign with the one that won.
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with('✓') && l.contains("signed by"))
            .count(),
        PROCESSES,
        "{stdout}"
    );
}

/// A write that stays locked past every retry stops the session with an
/// error naming the database: no tool runs and no model call is made
/// after it, what was stored has no hole, and the session resumes and
/// verifies once the lock is gone.
#[test]
fn a_write_that_cannot_be_made_stops_the_session_naming_the_store() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool(
            "Bash",
            json!({"command": "touch lock-now; sleep 1; echo slept"}),
        ))
        .turn(Turn::tool("Bash", json!({"command": "touch must-not-run"})))
        .turn(Turn::text("done"));
    let server = MockServer::start_blocking(scenario).unwrap();
    let session = tascer::new_id();
    let child = run_cmd(&home, &ws, &server.url(), "go", &["--session-id", &session])
        .env("TASCER_DB_BUSY_TIMEOUT_MS", "100")
        .env("TASCER_DB_RETRIES", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While the first Bash call sleeps, another process takes the write
    // lock and keeps it until the run is over.
    let start = std::time::Instant::now();
    while !ws.join("lock-now").exists() {
        assert!(start.elapsed().as_secs() < 30, "the Bash call never ran");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let blocker = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = child.wait_with_output().unwrap();
    blocker.execute_batch("ROLLBACK").unwrap();
    drop(blocker);

    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let db = home.join("tascer.db").display().to_string();
    let result = json_lines(stdout.as_bytes()).pop().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["terminal_reason"], "store_error", "{result}");
    let text = result["result"].as_str().unwrap();
    assert!(text.contains(&db), "the error names the database: {text}");
    assert!(text.contains("TASCER_DB_BUSY_TIMEOUT_MS"), "{text}");
    assert!(stderr.contains(&db), "stderr names the database: {stderr}");
    assert!(
        !ws.join("must-not-run").exists(),
        "a tool ran after the failure"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "no model call after the failure"
    );

    // Stored: a prefix of the session (no hole). Resuming finishes it and
    // the ledger verifies.
    let store = tascer::SessionStore::open_in_home(&home).unwrap();
    let stored =
        conversation_signature(&serde_json::to_value(store.history(&session).unwrap()).unwrap());
    let sent = conversation_signature(&server.requests()[0].body["messages"]);
    assert!(stored.starts_with(&sent), "{stored:?}");
    drop(store);
    let out = run_cmd(&home, &ws, &server.url(), "go on", &["--resume", &session])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let out = tascer(&home, &ws)
        .args(["verify", &session])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
}
