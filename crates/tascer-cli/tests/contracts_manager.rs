//! A manager session with the `ExecuteContracts` tool (`tascer run
//! --execute-contracts`) against the mock: the tool runs the pending
//! contracts and returns their summary; the manager's ledger names each
//! child session and its head, so `tascer verify MANAGER` covers the tree
//! and fails when a child is tampered with.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

const ALPHA: &str = "# Contract: Alpha\n\n## Status\npending\n\n## Task\nWrite a.txt.\n\n## Constraints\n- Files: a.txt\n";

fn scenario() -> Scenario {
    Scenario::new()
        .turn(Turn::tool("ExecuteContracts", json!({})))
        .turn(Turn::text("Reviewed: all contracts done."))
        .conversation(
            "Contract: Alpha",
            vec![
                Turn::tool("Write", json!({"file_path": "a.txt", "content": "alpha\n"})),
                Turn::text("Wrote a.txt."),
            ],
        )
}

#[test]
fn a_manager_runs_contracts_and_its_verify_covers_the_children() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    let out = tascer(&home, &ws)
        .args(["keys", "generate"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    std::fs::write(ws.join("contracts/01-alpha.md"), ALPHA).unwrap();
    let server = MockServer::start_blocking(scenario()).unwrap();
    let manager = tascer::new_id();

    let out = run_cmd(
        &home,
        &ws,
        &server.url(),
        "Run the contracts and review them.",
        &["--execute-contracts", "contracts", "--session-id", &manager],
    )
    .output()
    .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    let calls = exchanges(&frames);
    let tool = calls.iter().find(|c| c.name == "ExecuteContracts").unwrap();
    let summary = tool.text();
    assert!(!tool.result().is_error, "{summary}");
    assert!(summary.contains("1 contract(s): 1 completed"), "{summary}");
    assert!(summary.contains("summary: Wrote a.txt."), "{summary}");
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["result"], "Reviewed: all contracts done.");

    // The contract ran and moved; its session is the child in the ledger.
    let done = std::fs::read_to_string(ws.join("contracts_completed/01-alpha.md")).unwrap();
    let child = done
        .lines()
        .find_map(|l| l.strip_prefix("- Session: "))
        .unwrap()
        .trim_matches('`')
        .to_string();
    assert!(summary.contains(&child), "{summary}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    let links: Vec<LedgerRow> = ledger_rows(&home, &manager)
        .into_iter()
        .filter(|r| r.kind == "checkpoint" && r.payload["child_session"].is_string())
        .collect();
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].payload["child_session"], child.as_str());
    assert_eq!(links[0].payload["contract"], "01-alpha");
    let child_rows = ledger_rows(&home, &child);
    let recorded_seq = links[0].payload["child_seq"].as_i64().unwrap();
    let at = child_rows.iter().find(|r| r.seq == recorded_seq).unwrap();
    assert_eq!(links[0].payload["child_head"], at.hash.as_str());

    // verify MANAGER covers the child.
    let out = tascer(&home, &ws)
        .args(["verify", &manager, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["children"][0]["link"]["session_id"], child.as_str());
    assert_eq!(report["children"][0]["report"]["ok"], true);

    // Tampering with the child breaks the manager's verification.
    let db = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    db.execute(
        "UPDATE ledger_entries SET payload = json_set(payload, '$.tampered', 1) \
         WHERE session_id = ?1 AND seq = 2",
        [&child],
    )
    .unwrap();
    drop(db);
    let out = tascer(&home, &ws)
        .args(["verify", &manager])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("✗ {child}")), "{stdout}");
}

/// The mission's set-up: the manager on an OpenAI-compatible router (key +
/// the router's extra headers), contractors on Anthropic with an OAuth
/// bearer token and no API key. Each request reaches the mock with the
/// right credentials and headers.
#[test]
fn manager_on_a_router_and_contractors_on_an_oauth_token() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/01-alpha.md"), ALPHA).unwrap();
    let server = MockServer::start_blocking(scenario()).unwrap();

    let out = tascer(&home, &ws)
        .env("OPENAI_API_KEY", "router-key")
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .env(
            "TASCER_EXTRA_HEADERS",
            r#"{"HTTP-Referer": "https://tascer.example", "X-Title": "Tascer manager"}"#,
        )
        .env("TASCER_CONTRACTOR_CLAUDE_CODE_OAUTH_TOKEN", "oat-secret")
        .env("TASCER_CONTRACTOR_ANTHROPIC_BASE_URL", server.url())
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
            "--execute-contracts",
            "contracts",
            "Run the contracts.",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        ws.join("contracts_completed/01-alpha.md").is_file(),
        "{stdout}"
    );

    let requests = server.requests();
    let manager: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    let contractor: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/v1/messages"))
        .collect();
    assert_eq!(manager.len(), 2, "{requests:#?}");
    assert_eq!(contractor.len(), 2, "{requests:#?}");
    for r in manager {
        assert_eq!(r.headers["authorization"], "Bearer router-key");
        assert_eq!(r.headers["http-referer"], "https://tascer.example");
        assert_eq!(r.headers["x-title"], "Tascer manager");
    }
    for r in contractor {
        assert_eq!(r.headers["authorization"], "Bearer oat-secret");
        assert!(r.headers["anthropic-beta"].contains("oauth-2025-04-20"));
        assert!(!r.headers.contains_key("x-api-key"), "{:?}", r.headers);
        assert!(
            !r.headers.contains_key("x-title"),
            "router headers stay with the manager"
        );
    }
}
