//! The audit trail of a real `tascer run` against the scripted mock model:
//! every tool call's permission decision is one row of the audit tables,
//! whoever made it (a rule, a PreToolUse hook, the mode, a policy), with
//! its input digest and time; the hooks that ran are in the tool records
//! and `tascer report`; `tascer audit query` and `tascer sessions show`
//! read the same rows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario, Turn};

use common::{json_lines, texts};

/// A Tascer home, its working directory, and the store it uses: its
/// SQLite file, or the PostgreSQL database `store` names.
struct Home {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    store: Option<String>,
}

impl Home {
    fn new(store: Option<String>) -> Home {
        Home {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
            store,
        }
    }

    fn ws(&self) -> &Path {
        self.ws.path()
    }

    /// `tascer ARGS` on this home and store.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = common::tascer(self.home.path(), self.ws.path());
        if let Some(url) = &self.store {
            cmd.env("TASCER_STORE", url);
        }
        cmd.args(args);
        cmd
    }
}

/// Hooks and rules of the session: a PreToolUse hook on Bash that refuses
/// `curl` (exit 2) and lets the rest through, a PostToolUse hook on Bash,
/// `Bash(echo:*)` allowed and `Bash(rm:*)` denied.
fn settings() -> String {
    json!({
        "permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "if grep -q curl; then echo 'no network in tests' >&2; exit 2; fi"}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "cat > /dev/null"}]}]
        }
    })
    .to_string()
}

/// Seven calls: rule allow, rule deny, hook deny, mode allow (an edit in
/// acceptEdits), policy deny (a sensitive file), the default's deny
/// (nobody to ask), mode allow (a read in the workspace).
fn scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Bash", json!({"command": "echo hi"}))
                .with_tool("Bash", json!({"command": "rm -rf build"}))
                .with_tool("Bash", json!({"command": "curl https://example.invalid"}))
                .with_tool("Write", json!({"file_path": "a.txt", "content": "x\n"}))
                .with_tool("Write", json!({"file_path": ".env", "content": "KEY=1\n"}))
                .with_tool("Read", json!({"file_path": "/etc/shadow"}))
                .with_tool("Read", json!({"file_path": "notes.txt"})),
        )
        .turn(Turn::text("done"))
}

/// The PreToolUse hook's command line: its name in the audit tables.
const PRE_HOOK: &str = "if grep -q curl; then echo 'no network in tests' >&2; exit 2; fi";

fn run_session(home: &Home, server: &MockServer) -> String {
    let settings = settings();
    let out = home
        .cmd(&[
            "run",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--settings",
            settings.as_str(),
            "go",
        ])
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    result["session_id"].as_str().unwrap().to_string()
}

/// Runs a session of `scenario` (the mock on this thread's runtime, the
/// `tascer` process on a blocking thread).
async fn session(home: &std::sync::Arc<Home>, scenario: Scenario) -> String {
    let server = MockServer::start(scenario).await.unwrap();
    let home = std::sync::Arc::clone(home);
    tokio::task::spawn_blocking(move || run_session(&home, &server))
        .await
        .unwrap()
}

/// `tascer ARGS`: its standard output (it must succeed).
fn ok(home: &Home, args: &[&str]) -> String {
    let out = home.cmd(args).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
    stdout
}

fn audit_json(home: &Home, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["audit", "query", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(home, &all)).unwrap()
}

/// `(tool, decision, decider_kind, decider)` of a decision row.
fn who(row: &Value) -> (String, String, String, String) {
    let text = |k: &str| row[k].as_str().unwrap_or("-").to_string();
    (
        text("tool"),
        text("decision"),
        text("decider_kind"),
        text("decider"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn every_decision_of_a_session_is_one_row_naming_who_made_it() {
    decisions_hooks_and_queries(Home::new(None)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_on_the_postgresql_store() {
    let test = "audit_cli_postgres";
    let Some(server) = PgServer::shared(test) else {
        return;
    };
    let url = server.fresh_database(test).unwrap();
    let home = Home::new(Some(url));
    decisions_hooks_and_queries(home).await;
}

async fn decisions_hooks_and_queries(home: Home) {
    let shared = std::sync::Arc::new(home);
    std::fs::write(shared.ws().join("notes.txt"), "notes\n").unwrap();
    let id = session(&shared, scenario()).await;
    let home = &*shared;
    if home.store.is_some() {
        assert!(
            !home.home.path().join("tascer.db").exists(),
            "everything went to PostgreSQL"
        );
    }

    // One row per call, naming who decided, with the input's digest and a time.
    let report: Value =
        serde_json::from_str(&ok(home, &["report", &id, "--format", "json"])).unwrap();
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 7);
    let rows = audit_json(home, &["--session", &id]);
    assert_eq!(rows.len(), 7, "exactly one decision per call: {rows:#?}");
    let mut decided: Vec<(String, String, String, String)> = Vec::new();
    for tool in tools {
        let record = &tool["record"];
        let call = record["tool_use_id"].as_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r["tool_use_id"] == call)
            .unwrap_or_else(|| panic!("no decision row for {call}: {rows:#?}"));
        assert_eq!(
            row["input_digest"],
            tascer_ledger::input_digest(&record["input"]),
            "{call}"
        );
        assert!(row["ts"].as_str().unwrap().starts_with("20"), "{row}");
        assert_eq!(row["session_id"], id.as_str());
        decided.push(who(row));
    }
    let s = |v: &str| v.to_string();
    assert_eq!(
        decided,
        [
            (s("Bash"), s("allow"), s("rule"), s("Bash(echo:*)")),
            (s("Bash"), s("deny"), s("rule"), s("Bash(rm:*)")),
            (s("Bash"), s("deny"), s("hook"), s(PRE_HOOK)),
            (s("Write"), s("allow"), s("mode"), s("acceptEdits")),
            (s("Write"), s("deny"), s("policy"), s("file-access")),
            (s("Read"), s("deny"), s("default"), s("-")),
            (s("Read"), s("allow"), s("mode"), s("acceptEdits")),
        ]
    );
    assert_eq!(
        rows.iter().find(|r| r["decider_kind"] == "hook").unwrap()["reason"],
        "no network in tests"
    );

    // The hooks that ran are in each record, and the report shows them.
    let hooks = |i: usize| -> Vec<(String, String)> {
        tools[i]["record"]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    s(h["event"].as_str().unwrap()),
                    s(h["outcome"].as_str().unwrap()),
                )
            })
            .collect()
    };
    assert_eq!(
        hooks(0),
        [
            (s("PreToolUse"), s("success")),
            (s("PostToolUse"), s("success"))
        ]
    );
    assert_eq!(hooks(1), [(s("PreToolUse"), s("success"))]);
    assert_eq!(hooks(2), [(s("PreToolUse"), s("blocked"))]);
    assert!(hooks(3).is_empty(), "no hook matches Write");
    let text = ok(home, &["report", &id]);
    for needle in [
        "permission decisions 7 (default 1, hook 1, mode 2, policy 1, rule 2)",
        "permission  allow (rule Bash(echo:*))   hooks run 2",
        "PostToolUse cat > /dev/null success (exit 0,",
        &format!("permission  deny (hook {PRE_HOOK})   hooks run 1"),
        &format!("PreToolUse {PRE_HOOK} blocked (exit 2,"),
        "permission  deny (policy file-access)   hooks run 0",
        "model calls 2:",
        "tool calls 7:",
        "hooks 4:",
        "verify: ✓",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }

    // `sessions show` reads the same rows.
    let shown = ok(home, &["sessions", "show", &id]);
    for needle in [
        "permission decisions 7 (default 1, hook 1, mode 2, policy 1, rule 2)   hook runs 4",
        "audit:",
        "deny (policy file-access):",
    ] {
        assert!(shown.contains(needle), "missing {needle:?} in\n{shown}");
    }

    // Who allowed what, across sessions.
    let other = session(
        &shared,
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo again"})))
            .turn(Turn::text("done")),
    )
    .await;
    let allowed_by_rule = audit_json(home, &["--decider", "rule", "--decision", "allow"]);
    let sessions: Vec<&str> = allowed_by_rule
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, [id.as_str(), other.as_str()]);
    assert_eq!(
        allowed_by_rule[1]["data"]["decided_by"]["rule"],
        "Bash(echo:*)"
    );
    let writes = audit_json(home, &["--tool", "Write", "--decision", "deny"]);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0]["decider"], "file-access");
    assert_eq!(audit_json(home, &["--decider", "Bash(rm:*)"]).len(), 1);
    assert_eq!(audit_json(home, &["--since", "1h"]).len(), 8);
    assert!(audit_json(home, &["--since", "2999-01-01"]).is_empty());
    assert_eq!(
        audit_json(home, &["--limit", "2"])[1]["session_id"],
        other.as_str()
    );
    let table = ok(home, &["audit", "query", "--decision", "deny"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 5, "a header and four denials:\n{table}");
    assert!(
        lines[0].starts_with("TIME") && lines[0].contains("DECISION"),
        "{table}"
    );
    assert!(table.contains("deny (rule Bash(rm:*))"), "{table}");
    let bad = home
        .cmd(&["audit", "query", "--since", "yesterday"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        texts(&bad)
            .1
            .contains("cannot read \"yesterday\" as a time"),
        "{}",
        texts(&bad).1
    );
}
