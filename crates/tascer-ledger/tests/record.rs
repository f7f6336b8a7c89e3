//! Tool records and report data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{GateOutcome, HeadSigning as _, Ledger, ToolRecord, ToolStatus};

fn full_record() -> ToolRecord {
    let mut r = ToolRecord::open(
        "toolu_9",
        "Edit",
        json!({"file_path": "a.rs"}),
        "2026-01-01T00:00:00.000Z",
    );
    r.output = Some(json!({"ok": true}));
    r.output_digest = Some(tascer_ledger::sha256_ref(b"out"));
    r.evidence = vec![tascer_ledger::sha256_ref(b"out")];
    r.finished_at = Some("2026-01-01T00:00:00.250Z".into());
    r.context = json!({"git": {"head": "abc"}, "cwd": "/w", "version": "0.1.0"});
    r.pre_gates = vec![GateOutcome {
        gate: "fmt".into(),
        passed: true,
        message: String::new(),
        duration_ms: 3,
    }];
    r.post_gates = vec![GateOutcome {
        gate: "tests".into(),
        passed: false,
        message: "1 failed".into(),
        duration_ms: 900,
    }];
    r.permission = json!({"behavior": "allow", "rule": "Edit(*)"});
    r.hooks = vec![json!({"event": "PreToolUse", "exit": 0})];
    r.status = ToolStatus::Failed;
    r
}

#[test]
fn tool_record_round_trips_through_json() {
    let mut r = full_record();
    r.seal().unwrap();
    let text = serde_json::to_string(&r).unwrap();
    let back: ToolRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
    assert!(back.proof_is_valid());
    assert!(!back.gates_passed());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["status"], "failed");
    assert_eq!(v["post_gates"][0]["duration_ms"], 900);
    // any change breaks the proof
    let mut changed = back.clone();
    changed.status = ToolStatus::Validated;
    assert!(!changed.proof_is_valid());
    // a minimal record parses with defaults
    let minimal: ToolRecord = serde_json::from_value(json!({
        "tool_use_id": "t", "tool": "Read", "input": {}, "started_at": "x", "status": "pending"
    }))
    .unwrap();
    assert_eq!(minimal.status, ToolStatus::Pending);
    assert!(minimal.evidence.is_empty());
}

#[test]
fn report_lists_tools_with_status_and_proof() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_in_home(dir.path(), Some(random_signing_key().unwrap())).unwrap();
    let s = "s-report";
    ledger
        .append(
            s,
            tascer_ledger::EntryKind::SessionStart,
            json!({"model": "m"}),
        )
        .unwrap();
    let mut done = full_record();
    ledger.put_evidence(s, b"out").unwrap();
    ledger.open_tool_call(s, &done).unwrap();
    let closed = ledger.close_tool_call(s, &mut done).unwrap();
    let pending = ToolRecord::open("toolu_10", "Bash", json!({"command": "sleep 99"}), "t");
    ledger.open_tool_call(s, &pending).unwrap();
    ledger
        .append(
            s,
            tascer_ledger::EntryKind::SessionEnd,
            json!({"status": "interrupted", "cost_usd": 0.5}),
        )
        .unwrap();
    let report = ledger.report(s).unwrap();
    assert_eq!(report.model.as_deref(), Some("m"));
    assert_eq!(report.status.as_deref(), Some("interrupted"));
    assert_eq!(report.tools.len(), 2);
    assert_eq!(report.tools[0].record.status, ToolStatus::Failed);
    assert_eq!(report.tools[0].entry_hash, closed.hash);
    assert!(report.tools[0].proof_valid);
    assert_eq!(report.tools[0].opened_seq, Some(2));
    assert_eq!(report.tools[0].closed_seq, Some(3));
    assert_eq!(report.tools[1].closed_seq, None);
    assert_eq!(report.tool_status_counts["failed"], 1);
    assert_eq!(report.tool_status_counts["pending"], 1);
    // projections
    let calls = ledger.store().tool_calls(s).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].status, ToolStatus::Failed);
    assert!(ledger.verify(s, None).unwrap().ok);
}

#[test]
fn nan_payloads_are_rejected_before_storage() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_in_home(dir.path(), None).unwrap();
    let end = tascer_ledger::SessionEnd {
        usage: Default::default(),
        cost_usd: f64::NAN,
        status: "success".into(),
        num_turns: 1,
    };
    assert!(end.to_payload().is_err());
    assert!(
        ledger
            .append(
                "s",
                tascer_ledger::EntryKind::UserPrompt,
                json!({"n": 9_007_199_254_740_993u64})
            )
            .is_err()
    );
    assert!(ledger.store().entries("s").unwrap().is_empty());
}

#[test]
fn checkpoint_signs_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let key = random_signing_key().unwrap();
    let ledger = Ledger::open_in_home(dir.path(), Some(key.clone())).unwrap();
    ledger
        .append(
            "s",
            tascer_ledger::EntryKind::UserPrompt,
            json!({"text": "x"}),
        )
        .unwrap();
    let head = ledger
        .sign_checkpoint("s", Some(json!({"reason": "manual"})))
        .unwrap();
    assert_eq!(head.seq, 2);
    head.verify(&key.verifying_key()).unwrap();
    let unsigned = Ledger::open_in_home(dir.path(), None).unwrap();
    assert!(unsigned.sign_checkpoint("s", None).is_err());
}
