//! `tascer verify` cross-checks a session's stored summary (the `sessions`
//! row and its messages) against the ledger: editing the model, the cost
//! or the turn count in the database, or deleting a stored message, makes
//! verify fail naming the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

fn verify(home: &Path, ws: &Path, session: &str) -> (Option<i32>, String, Value) {
    let text = tascer(home, ws).args(["verify", session]).output().unwrap();
    let json = tascer(home, ws)
        .args(["verify", session, "--json"])
        .output()
        .unwrap();
    assert_eq!(text.status.code(), json.status.code());
    let (stdout, stderr) = texts(&text);
    let report = serde_json::from_slice(&json.stdout).unwrap();
    (text.status.code(), format!("{stdout}{stderr}"), report)
}

fn sql(home: &Path, statement: &str, session: &str) {
    let conn = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    let changed = conn.execute(statement, [session]).unwrap();
    assert!(changed > 0, "{statement} changed nothing");
}

#[test]
fn verify_names_each_summary_field_edited_in_the_database() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": "a.txt"})))
        .turn(Turn::tool("Read", json!({"file_path": "a.txt"})))
        .turn(Turn::text("done"));
    let server = MockServer::start_blocking(scenario).unwrap();
    let session = tascer::new_id();
    let out = run_cmd(&home, &ws, &server.url(), "go", &["--session-id", &session])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));

    let (code, text, report) = verify(&home, &ws, &session);
    assert_eq!(code, Some(0), "{text}");
    assert!(report.get("summary_mismatches").is_none(), "{report}");

    let edits = [
        (
            "model",
            "UPDATE sessions SET model = 'claude-opus-4-1' WHERE id = ?1",
            "UPDATE sessions SET model = (SELECT json_extract(payload, '$.model')
                 FROM ledger_entries WHERE session_id = ?1 AND seq = 1) WHERE id = ?1",
        ),
        (
            "total_cost_usd",
            "UPDATE sessions SET total_cost_usd = total_cost_usd + 12.5 WHERE id = ?1",
            "UPDATE sessions SET total_cost_usd = total_cost_usd - 12.5 WHERE id = ?1",
        ),
        (
            "num_turns",
            "UPDATE sessions SET num_turns = num_turns - 1 WHERE id = ?1",
            "UPDATE sessions SET num_turns = num_turns + 1 WHERE id = ?1",
        ),
    ];
    for (field, edit, restore) in edits {
        sql(&home, edit, &session);
        let (code, text, report) = verify(&home, &ws, &session);
        assert_eq!(code, Some(1), "{field}: {text}");
        assert!(
            text.contains(&format!("{field}: the session store says")),
            "{text}"
        );
        assert_eq!(report["ok"], false, "{report}");
        let fields: Vec<&str> = report["summary_mismatches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, [field], "{report}");
        sql(&home, restore, &session);
        let (code, text, _) = verify(&home, &ws, &session);
        assert_eq!(code, Some(0), "after restoring {field}: {text}");
    }

    // A stored assistant message deleted: the store lost a model call the
    // ledger recorded.
    sql(
        &home,
        "DELETE FROM messages WHERE session_id = ?1 AND seq =
             (SELECT MAX(seq) FROM messages WHERE session_id = ?1 AND kind = 'assistant')",
        &session,
    );
    let (code, text, _) = verify(&home, &ws, &session);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("assistant_messages: the session store says 2, the ledger says 3"),
        "{text}"
    );

    // verify --all fails too.
    let out = tascer(&home, &ws)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{:?}", texts(&out));
}
