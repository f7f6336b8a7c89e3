//! The fixture session both the tamper tests and the backend suite
//! record.
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::json;
use tascer_ledger::{EntryKind, GateOutcome, Ledger, SessionStart, ToolRecord, ToolStatus};

/// More than `INLINE_EVIDENCE_LIMIT` bytes: a file with SQLite, a blob
/// with PostgreSQL.
pub fn large_output() -> Vec<u8> {
    b"line of a long listing\n".repeat(4000)
}

/// seq 1 start, 2 prompt, 3 tool opened, 4 tool record (small and large
/// evidence), 5 model response, 6 end. Returns the two evidence digests.
pub fn record_session(ledger: &Ledger, session: &str) -> (String, String) {
    ledger
        .start_session(
            session,
            &SessionStart {
                model: "claude-test".into(),
                options_digest: tascer_ledger::sha256_ref(b"{}"),
                system_prompt_digest: tascer_ledger::sha256_ref(b"be nice"),
                signing_key_id: None,
                context: json!({"cwd": "/tmp/x"}),
            },
        )
        .unwrap();
    ledger
        .append(
            session,
            EntryKind::UserPrompt,
            json!({"text": "hello world"}),
        )
        .unwrap();
    let mut record = ToolRecord::open(
        "toolu_1",
        "Bash",
        json!({"command": "ls"}),
        "2026-01-01T00:00:00.000Z",
    );
    ledger.open_tool_call(session, &record).unwrap();
    let small = ledger.put_evidence(session, b"file-a\nfile-b\n").unwrap();
    let large = ledger.put_evidence(session, &large_output()).unwrap();
    record.output_digest = Some(small.clone());
    record.evidence = vec![small.clone(), large.clone()];
    record.finished_at = Some("2026-01-01T00:00:01.000Z".into());
    record.post_gates = vec![GateOutcome {
        gate: "tests".into(),
        passed: true,
        message: "ok".into(),
        duration_ms: 12,
    }];
    record.status = ToolStatus::Validated;
    ledger.close_tool_call(session, &mut record).unwrap();
    ledger
        .append(
            session,
            EntryKind::ModelResponse,
            json!({"content_digest": tascer_ledger::sha256_ref(b"done"), "model": "claude-test",
                   "usage": {"input_tokens": 10, "output_tokens": 2}}),
        )
        .unwrap();
    ledger
        .append(
            session,
            EntryKind::SessionEnd,
            json!({"status": "success", "cost_usd": 0.0123, "usage": {"input_tokens": 10}}),
        )
        .unwrap();
    (small, large)
}

pub mod under;
