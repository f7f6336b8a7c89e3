//! Appending several entries in one transaction: the chain is the same as
//! one append each, the head is signed over the last, evidence goes in with
//! the entries, and a payload without a canonical form writes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{EntryKind, INLINE_EVIDENCE_LIMIT, Ledger, sha256_ref};

const S: &str = "batch-session";

fn ledger(dir: &tempfile::TempDir) -> Ledger {
    let key = random_signing_key().unwrap();
    Ledger::open(
        dir.path().join("tascer.db"),
        dir.path().join("evidence"),
        Some(key),
    )
    .unwrap()
}

#[test]
fn a_batch_extends_the_chain_and_signs_its_last_entry() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = ledger(&dir);
    ledger
        .append(S, EntryKind::SessionStart, json!({"model": "m"}))
        .unwrap();
    let small = b"tool output".to_vec();
    let large = vec![b'x'; INLINE_EVIDENCE_LIMIT + 1];
    let appended = ledger
        .append_many(
            S,
            vec![
                (
                    EntryKind::ModelResponse,
                    json!({"content_digest": sha256_ref(&small), "evidence": [sha256_ref(&small)]}),
                ),
                (
                    EntryKind::ToolCallOpened,
                    json!({"tool_use_id": "t1", "tool": "Noop", "input": {}, "evidence": [sha256_ref(&large)]}),
                ),
                (EntryKind::PermissionDecision, json!({"decision": "allow"})),
            ],
            &[small.clone(), large.clone()],
        )
        .unwrap();
    assert_eq!(
        appended.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [2, 3, 4]
    );
    assert_eq!(appended[1].prev_hash, appended[0].hash);
    let head = ledger.head(S).unwrap().unwrap();
    assert_eq!((head.seq, &head.hash), (4, &appended[2].hash));
    assert!(head.signature.is_some());
    assert_eq!(ledger.get_evidence(S, &sha256_ref(&small)).unwrap(), small);
    assert!(
        ledger.evidence(S).contains(&sha256_ref(&large)),
        "large evidence is a file"
    );
    let report = ledger.verify(S, None).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!(report.entries_checked, 4);

    // The next single append continues after the batch.
    let next = ledger
        .append(S, EntryKind::SessionEnd, json!({"status": "success"}))
        .unwrap();
    assert_eq!((next.seq, &next.prev_hash), (5, &appended[2].hash));
}

#[test]
fn a_batch_with_a_bad_payload_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = ledger(&dir);
    ledger
        .append(S, EntryKind::SessionStart, json!({"model": "m"}))
        .unwrap();
    // 2^53 + 1 has no exact I-JSON form, so RFC 8785 refuses it.
    let err = ledger
        .append_many(
            S,
            vec![
                (EntryKind::PermissionDecision, json!({"decision": "allow"})),
                (
                    EntryKind::HookExecution,
                    json!({"n": 9_007_199_254_740_993u64}),
                ),
            ],
            &[b"staged".to_vec()],
        )
        .unwrap_err();
    assert!(err.to_string().contains("9007199254740993"), "{err}");
    assert_eq!(ledger.store().entries(S).unwrap().len(), 1);
    assert!(ledger.get_evidence(S, &sha256_ref(b"staged")).is_err());
    assert!(ledger.verify(S, None).unwrap().ok);
}
