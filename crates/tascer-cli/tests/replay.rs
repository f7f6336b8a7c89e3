//! `tascer replay` on sessions recorded by real `tascer run`s against the
//! scripted mock model in real git repositories: a 20-call session (Read,
//! Write, Edit, Bash, Glob, Grep and one denied call) replays with no
//! divergence into a new signed session that names its source, leaving
//! the original tree untouched; a changed starting tree (`--tree`) names
//! the first divergent result; `--until` stops early; `--fork` goes on
//! with a live (mock) model; an unknown session, a session without a
//! model answer and a dirty starting tree are precise errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use common::{git_in, json_lines, ledger_rows, texts};

/// A git repository with a few files and project settings that allow the
/// Bash commands the session runs and deny `rm`; committed, clean.
fn repo() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join(".tascer")).unwrap();
    std::fs::write(dir.join("src/a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.join("src/b.txt"), "beta\n").unwrap();
    std::fs::write(dir.join("notes.md"), "# Notes\nTODO: ship\n").unwrap();
    let settings = json!({"permissions": {
        "allow": ["Bash(cat:*)", "Bash(ls:*)", "Bash(wc:*)", "Bash(echo:*)"],
        "deny": ["Bash(rm:*)"],
    }});
    std::fs::write(dir.join(".tascer/settings.json"), settings.to_string()).unwrap();
    git_in(dir, &["init", "-q", "-b", "main"]).unwrap();
    git_in(dir, &["add", "-A"]).unwrap();
    git_in(dir, &["commit", "-q", "-m", "start"]).unwrap();
    ws
}

/// Twenty tool calls, one per model turn, then a final answer.
fn twenty_calls(ws: &Path) -> Vec<(&'static str, Value)> {
    let absolute = ws.join("notes2.md").display().to_string();
    vec![
        ("Glob", json!({"pattern": "**/*.txt"})),
        ("Read", json!({"file_path": "src/a.txt"})),
        ("Grep", json!({"pattern": "TODO"})),
        ("Bash", json!({"command": "cat src/b.txt"})),
        (
            "Write",
            json!({"file_path": "out/c.txt", "content": "gamma\n"}),
        ),
        ("Read", json!({"file_path": "out/c.txt"})),
        (
            "Edit",
            json!({"file_path": "src/a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
        ),
        ("Read", json!({"file_path": "src/a.txt"})),
        ("Bash", json!({"command": "ls src"})),
        (
            "Grep",
            json!({"pattern": "ALPHA", "path": "src", "output_mode": "content"}),
        ),
        ("Bash", json!({"command": "rm src/b.txt"})),
        ("Read", json!({"file_path": "src/b.txt"})),
        (
            "Write",
            json!({"file_path": absolute, "content": "more notes\n"}),
        ),
        (
            "Edit",
            json!({"file_path": "notes.md", "old_string": "TODO", "new_string": "DONE"}),
        ),
        ("Bash", json!({"command": "wc -l notes.md"})),
        ("Glob", json!({"pattern": "*.md"})),
        ("Read", json!({"file_path": "notes.md"})),
        ("Bash", json!({"command": "echo finished"})),
        (
            "Grep",
            json!({"pattern": "gamma", "output_mode": "content"}),
        ),
        ("Read", json!({"file_path": "src/b.txt"})),
    ]
}

fn scenario(calls: Vec<(&'static str, Value)>) -> Scenario {
    calls
        .into_iter()
        .fold(Scenario::new(), |s, (tool, input)| {
            s.turn(Turn::new().with_tool(tool, input))
        })
        .turn(Turn::text("all done"))
}

/// Runs `scenario` as `tascer run --permission-mode acceptEdits` in `ws`;
/// returns the session id and how many calls were refused.
async fn record(home: &Path, ws: &Path, scenario: Scenario) -> (String, usize) {
    let result =
        common::record_run(home, ws, scenario, &["--permission-mode", "acceptEdits"]).await;
    let denials = result["permission_denials"].as_array().unwrap().len();
    (result["session_id"].as_str().unwrap().to_string(), denials)
}

/// `tascer replay --json ARGS` in `cwd`: its exit code, report and stderr.
fn replay_json(home: &Path, cwd: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = common::tascer(home, cwd)
        .args(["replay", "--json"])
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), value, stderr)
}

/// `tascer replay ARGS` (text) in `cwd`.
fn replay_text(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    common::tascer(home, cwd)
        .arg("replay")
        .args(args)
        .output()
        .unwrap()
}

/// The tool records of a session, in ledger order.
fn tool_records(home: &Path, session: &str) -> Vec<Value> {
    ledger_rows(home, session)
        .into_iter()
        .filter(|r| r.kind == "tool_record")
        .map(|r| r.payload)
        .collect()
}

/// Every file of the tree under `dir` (but `.git`) with its content.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The tree the session started from, as a commit checked out elsewhere.
fn checkout(ws: &Path, commit: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let target = copy.path().join("tree");
    let ws_text = ws.display().to_string();
    git_in(copy.path(), &["clone", "-q", &ws_text, "tree"]).unwrap();
    git_in(&target, &["checkout", "-q", commit]).unwrap();
    copy
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_session_replays_without_divergence_into_a_signed_session_naming_its_source() {
    let home = tempfile::tempdir().unwrap();
    let ws = repo();
    let (id, denials) = record(home.path(), ws.path(), scenario(twenty_calls(ws.path()))).await;
    assert_eq!(denials, 1, "rm was refused");
    assert_eq!(tool_records(home.path(), &id).len(), 20);
    let before = snapshot(ws.path());
    let status = git_in(ws.path(), &["status", "--porcelain"]).unwrap();
    let head = git_in(ws.path(), &["rev-parse", "HEAD"]).unwrap();

    let (code, report, stderr) = replay_json(home.path(), ws.path(), &[&id]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(report["divergences"], json!([]), "{report:#}");
    assert_eq!(report["matches"], true);
    assert_eq!(report["compared_calls"], 20);
    assert_eq!(report["recorded_calls"], 20);
    assert_eq!(report["tree"]["kind"], "commit");
    assert_eq!(report["tree"]["commit"], head);
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 20);
    // The absolute path of call 13 was moved to the scratch tree and back.
    assert_eq!(calls[12]["tool"], "Write");
    assert_eq!(calls[12]["result"], "path_mapped", "{report:#}");
    assert!(calls.iter().all(|c| c["diverged"] == false));

    // The original tree, its files and its git state are untouched; the
    // scratch worktree is gone.
    assert_eq!(snapshot(ws.path()), before);
    assert_eq!(
        git_in(ws.path(), &["status", "--porcelain"]).unwrap(),
        status
    );
    let worktrees = git_in(ws.path(), &["worktree", "list"]).unwrap();
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}");
    let scratch = report["scratch_dir"].as_str().unwrap();
    assert!(!Path::new(scratch).exists(), "{scratch} was removed");

    // The replay is a new session with its own 20 calls, the denied one
    // denied again by the same rule; its ledger verifies and names its source.
    let replayed = report["replay_session"].as_str().unwrap();
    assert_ne!(replayed, id);
    let records = tool_records(home.path(), replayed);
    assert_eq!(records.len(), 20);
    let denied: Vec<&Value> = records
        .iter()
        .filter(|r| r["status"] == "blocked")
        .collect();
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0]["input"]["command"], "rm src/b.txt");
    assert_eq!(denied[0]["permission"]["decided_by"]["rule"], "Bash(rm:*)");
    let start = ledger_rows(home.path(), replayed)
        .into_iter()
        .find(|r| r.kind == "session_start")
        .unwrap();
    let replay_of = &start.payload["context"]["replay_of"];
    assert_eq!(replay_of["session_id"], id.as_str(), "{:#}", start.payload);
    assert_eq!(replay_of["tree"]["commit"], head);
    assert_eq!(
        start.payload["context"]["governance"]["permission_mode"],
        "acceptEdits"
    );
    let verify = common::tascer(home.path(), ws.path())
        .args(["verify", replayed])
        .output()
        .unwrap();
    let (out, err) = texts(&verify);
    assert!(verify.status.success(), "{out}\n{err}");

    // The text report says the same.
    let out = replay_text(home.path(), ws.path(), &[&id]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("20 of 20 recorded tool calls compared: 0 divergences"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_starting_tree_names_the_first_divergent_result() {
    let home = tempfile::tempdir().unwrap();
    let ws = repo();
    let (id, _) = record(home.path(), ws.path(), scenario(twenty_calls(ws.path()))).await;
    let head = git_in(ws.path(), &["rev-parse", "HEAD"]).unwrap();

    // The same commit, with src/b.txt changed on a branch.
    let copy = checkout(ws.path(), &head);
    let tree = copy.path().join("tree");
    git_in(&tree, &["checkout", "-q", "-b", "changed"]).unwrap();
    std::fs::write(tree.join("src/b.txt"), "BETA changed\n").unwrap();
    git_in(&tree, &["commit", "-q", "-am", "change b"]).unwrap();
    let tree_arg = tree.display().to_string();

    let (code, report, stderr) = replay_json(home.path(), ws.path(), &[&id, "--tree", &tree_arg]);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let first = &report["divergences"][0];
    assert_eq!(first["call"], 4, "{report:#}");
    assert_eq!(first["tool"], "Bash");
    assert_eq!(first["aspect"], "result");
    assert_eq!(first["recorded"], "beta");
    assert_eq!(first["replayed"], "BETA changed");
    assert_eq!(report["tree"]["kind"], "copy");
    // The later reads of src/b.txt diverge too, and nothing before call 4.
    let calls: Vec<u64> = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["call"].as_u64().unwrap())
        .collect();
    assert!(calls.contains(&12) && calls.contains(&20), "{calls:?}");
    assert!(calls.iter().all(|c| *c >= 4), "{calls:?}");

    let out = replay_text(home.path(), ws.path(), &[&id, "--tree", &tree_arg]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "first divergence: tool call #4 Bash cat src/b.txt: result differs: \
             recorded \"beta\" / replayed \"BETA changed\""
        ),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn until_replays_that_many_calls() {
    let home = tempfile::tempdir().unwrap();
    let ws = repo();
    let (id, _) = record(home.path(), ws.path(), scenario(twenty_calls(ws.path()))).await;
    let (code, report, stderr) = replay_json(home.path(), ws.path(), &[&id, "--until", "5"]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(report["compared_calls"], 5);
    assert_eq!(report["calls"].as_array().unwrap().len(), 5);
    let replayed = report["replay_session"].as_str().unwrap();
    let records = tool_records(home.path(), replayed);
    let tools: Vec<&str> = records
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Glob", "Read", "Grep", "Bash", "Write"]);
    let start = ledger_rows(home.path(), replayed)
        .into_iter()
        .find(|r| r.kind == "session_start")
        .unwrap();
    assert_eq!(start.payload["context"]["replay_of"]["until"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_continues_with_the_live_model_and_records_its_calls() {
    let home = tempfile::tempdir().unwrap();
    let ws = repo();
    let (id, _) = record(home.path(), ws.path(), scenario(twenty_calls(ws.path()))).await;
    // The mock plays the turn whose index is the number of answers in the
    // history: the first three come from the record, so its script starts
    // at the fourth (the first three turns are never played).
    let unplayed = || Turn::text("not played: the record answers these");
    let live = MockServer::start(
        Scenario::new()
            .turn(unplayed())
            .turn(unplayed())
            .turn(unplayed())
            .turn(Turn::new().with_tool("Bash", json!({"command": "echo live"})))
            .turn(Turn::text("live done")),
    )
    .await
    .unwrap();
    let url = live.url();
    let home_path = home.path().to_path_buf();
    let ws_path = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        common::tascer(&home_path, &ws_path)
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", url)
            .args(["replay", "--json", &id, "--until", "3", "--fork"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["forked"], true);
    assert_eq!(report["compared_calls"], 3);
    assert_eq!(report["live_requests"], 2, "{report:#}");
    assert_eq!(report["live_calls"], 1);
    assert_eq!(live.requests().len(), 2, "the live model was asked twice");
    let replayed = report["replay_session"].as_str().unwrap();
    let records = tool_records(home.path(), replayed);
    let commands: Vec<&str> = records
        .iter()
        .filter_map(|r| r["input"]["command"].as_str())
        .collect();
    assert_eq!(records.len(), 4, "3 replayed and 1 live call");
    assert_eq!(commands, ["echo live"]);
    let verify = common::tascer(home.path(), ws.path())
        .args(["verify", replayed])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{:?}", texts(&verify));
}

#[tokio::test(flavor = "multi_thread")]
async fn what_cannot_be_replayed_is_a_precise_error() {
    let home = tempfile::tempdir().unwrap();
    let ws = repo();
    // A session whose provider could not be reached: no model answer.
    let mut cmd = common::tascer(home.path(), ws.path());
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("TASCER_MAX_RETRIES", "0")
        .args(["run", "--output-format", "stream-json", "--verbose", "go"]);
    let out = cmd.output().unwrap();
    let frames = json_lines(&out.stdout);
    let no_answer = frames
        .iter()
        .find(|f| f["type"] == "result")
        .and_then(|f| f["session_id"].as_str())
        .expect("a result frame")
        .to_string();

    let (code, _, stderr) = replay_json(home.path(), ws.path(), &["no-such-session"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no session no-such-session is recorded in"),
        "{stderr}"
    );
    let (code, _, stderr) = replay_json(home.path(), ws.path(), &[&no_answer]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("session {no_answer} has no recorded model answer")),
        "{stderr}"
    );

    // A session that started with uncommitted changes cannot be rebuilt
    // from its commit: the error says so and asks for --tree.
    std::fs::write(ws.path().join("draft.txt"), "draft\n").unwrap();
    let calls = vec![("Read", json!({"file_path": "draft.txt"}))];
    let (dirty, _) = record(home.path(), ws.path(), scenario(calls)).await;
    let (code, _, stderr) = replay_json(home.path(), ws.path(), &[&dirty]);
    assert_eq!(code, 2);
    assert!(stderr.contains("uncommitted changes"), "{stderr}");
    assert!(stderr.contains("draft.txt"), "{stderr}");
    assert!(stderr.contains("--tree DIR"), "{stderr}");
    // With the tree given, it replays.
    let ws_arg = ws.path().display().to_string();
    let (code, report, stderr) = replay_json(home.path(), ws.path(), &[&dirty, "--tree", &ws_arg]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(report["compared_calls"], 1);
}
