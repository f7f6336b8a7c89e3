//! One test suite, run against both store backends: the SQLite file and a
//! real PostgreSQL server (`tascer_testkit::postgres::PgServer`: the one
//! `.ci/run` starts, or a throw-away cluster started by the first test of
//! this binary; each test gets its own database).
//!
//! Every body runs twice (`<name>::sqlite`, `<name>::postgres`): sessions
//! and messages, fork and resume history, ledger append and verify, a
//! message written with ledger entries, a session moved between backends,
//! tamper detection, and concurrent writers. PostgreSQL's own tests are in
//! `backend_postgres.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::under::{S, Under, new_session, user, verify};
use serde_json::json;
use tascer_core::Message;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::transfer::{import_raw, session_blobs};
use tascer_ledger::{EntryKind, Evidence, Ledger, SessionStart, ToolStatus, VerifyReport};
use tascer_store::{AttachedMessage, BackendKind, SessionStore, StoreError, Totals};

both!(
    sessions_messages_and_totals_persist,
    fork_copies_a_session_and_resume_rebuilds_history,
    fork_at_copies_through_a_message_with_its_file_checkpoints,
    bad_session_ids_get_precise_errors,
    a_ledger_appends_verifies_and_reports,
    a_message_is_written_with_its_ledger_entries_or_not_at_all,
    a_session_moves_between_backends_and_verifies_the_same,
    every_kind_of_edit_is_named_by_verify,
    concurrent_writers_leave_no_gap_and_no_duplicate,
);

// ---------------------------------------------------------------------------
// Sessions

fn sessions_messages_and_totals_persist(under: Under) {
    {
        let store = under.sessions();
        store.create_session(&new_session("s1", "/w")).unwrap();
        store.append_message("s1", &user("first", "s1")).unwrap();
        store
            .append_message_with_totals(
                "s1",
                &user("second", "s1"),
                Some(&tascer_store::Totals {
                    num_turns: 3,
                    total_cost_usd: 0.125,
                    status: "running".into(),
                }),
            )
            .unwrap();
        store.update_totals("s1", 4, 0.5, "success").unwrap();
        store.create_session(&new_session("s2", "/w")).unwrap();
        store.create_session(&new_session("s3", "/other")).unwrap();
    }
    // Another "process".
    let store = under.sessions();
    let info = store.session("s1").unwrap().unwrap();
    assert_eq!(
        (info.message_count, info.num_turns, info.total_cost_usd),
        (2, 4, 0.5)
    );
    assert_eq!(info.status, "success");
    assert_eq!(info.first_prompt.as_deref(), Some("first"));
    assert_eq!(info.cwd, "/w");
    let texts: Vec<String> = store
        .messages("s1")
        .unwrap()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap()["message"]["content"].to_string())
        .collect();
    assert_eq!(texts, ["\"first\"", "\"second\""]);
    assert_eq!(
        store.history("s1").unwrap().len(),
        1,
        "two user frames merge"
    );
    let ids: Vec<String> = store.list(10).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(store.latest_for_cwd("/other").unwrap().unwrap().id, "s3");
    assert!(store.latest_for_cwd("/none").unwrap().is_none());
    assert_eq!(store.list(1).unwrap().len(), 1);
    let summary = store.summary("s1").unwrap().unwrap();
    assert_eq!((summary.prompts, summary.assistant_messages), (2, 0));
    assert_eq!(summary.total_cost_usd, 0.5);
    assert!(store.summary("missing").unwrap().is_none());
}

fn fork_copies_a_session_and_resume_rebuilds_history(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("a", "/w")).unwrap();
    store.append_message("a", &user("hello", "a")).unwrap();
    store.append_message("a", &user("again", "a")).unwrap();
    let fork = store.fork("a", "b").unwrap();
    assert_eq!(fork.forked_from.as_deref(), Some("a"));
    assert_eq!(fork.message_count, 2);
    assert_eq!(fork.first_prompt.as_deref(), Some("hello"));
    // The copies carry the new session id; the original is untouched.
    for m in under.sessions().messages("b").unwrap() {
        assert_eq!(serde_json::to_value(&m).unwrap()["session_id"], "b");
    }
    for m in store.messages("a").unwrap() {
        assert_eq!(serde_json::to_value(&m).unwrap()["session_id"], "a");
    }
    // Resuming the fork in another process continues its own history.
    let resumed = under.sessions();
    resumed.append_message("b", &user("more", "b")).unwrap();
    assert_eq!(resumed.messages("b").unwrap().len(), 3);
    assert_eq!(resumed.messages("a").unwrap().len(), 2);
    assert_eq!(resumed.history("b").unwrap()[0].content.len(), 3);
}

fn fork_at_copies_through_a_message_with_its_file_checkpoints(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("p", "/w")).unwrap();
    let (first, second) = (user("first", "p"), user("second", "p"));
    store.append_message("p", &first).unwrap();
    store.append_message("p", &second).unwrap();
    let change = |prompt: &Message, path: &str| tascer_store::FileChange {
        prompt_uuid: prompt.uuid().to_string(),
        path: path.to_string(),
        existed: true,
        before: Some(b"before".to_vec()),
        after_sha256: Some("00".repeat(32)),
        tool_use_id: "toolu_1".to_string(),
    };
    store
        .record_file_change("p", &change(&first, "/w/a"))
        .unwrap();
    store
        .record_file_change("p", &change(&second, "/w/b"))
        .unwrap();

    // Cut after the first prompt: its message and its checkpoint only.
    let cut = store.fork_at("p", "cut", first.uuid()).unwrap();
    assert_eq!(cut.forked_from.as_deref(), Some("p"));
    assert_eq!(cut.message_count, 1);
    assert_eq!(store.file_changes("cut").unwrap(), [change(&first, "/w/a")]);
    // A whole fork keeps every checkpoint; the parent keeps its own.
    store.fork("p", "whole").unwrap();
    assert_eq!(
        store.file_changes("whole").unwrap(),
        [change(&first, "/w/a"), change(&second, "/w/b")]
    );
    assert_eq!(store.file_changes("p").unwrap().len(), 2);
    assert!(matches!(
        store.fork_at("p", "x", "no-such-message"),
        Err(StoreError::NoSuchMessage(uuid)) if uuid == "no-such-message"
    ));
    assert!(store.session("x").unwrap().is_none());
}

fn bad_session_ids_get_precise_errors(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("s", "/w")).unwrap();
    assert!(matches!(
        store.create_session(&new_session("s", "/w")),
        Err(StoreError::AlreadyExists(id)) if id == "s"
    ));
    assert!(matches!(store.fork("nope", "t"), Err(StoreError::NotFound(id)) if id == "nope"));
    assert!(matches!(
        store.fork("s", "s"),
        Err(StoreError::AlreadyExists(_))
    ));
    let err = store.history("nope").unwrap_err().to_string();
    assert_eq!(err, "No conversation found with session ID: nope");
}

// ---------------------------------------------------------------------------
// The ledger

/// The fixture session of [`common::record_session`] under id [`S`].
fn record_session(ledger: &Ledger) -> (String, String) {
    common::record_session(ledger, S)
}

/// A model response's entry and its assistant message: both written in
/// one transaction, with the running totals; when the message cannot be
/// stored (no such session row), the entry is not written either.
fn a_message_is_written_with_its_ledger_entries_or_not_at_all(under: Under) {
    let sessions = under.sessions();
    sessions.create_session(&new_session(S, "/w")).unwrap();
    let ledger = under.ledger(Some(random_signing_key().unwrap()));
    record_session(&ledger);
    let before = ledger.store().entries(S).unwrap().len();

    let response = Evidence::new(b"the response".to_vec());
    let row = SessionStore::message_row(&user("the answer", S)).unwrap();
    let totals = Totals {
        num_turns: 3,
        total_cost_usd: 0.25,
        status: "running".into(),
    };
    let attached = AttachedMessage {
        row: &row,
        totals: Some(&totals),
    };
    let payload = json!({"content_digest": response.digest(), "evidence": [response.digest()]});
    let written = ledger
        .append_batch_with_message(
            S,
            vec![(EntryKind::ModelResponse, payload.clone())],
            std::slice::from_ref(&response),
            attached,
        )
        .unwrap();
    assert_eq!(written.len(), 1);
    let entries = ledger.store().entries(S).unwrap();
    assert_eq!(entries.len(), before + 1);
    assert_eq!(entries.last().unwrap().kind, EntryKind::ModelResponse);
    let messages = sessions.messages(S).unwrap();
    assert_eq!(
        serde_json::to_string(messages.last().unwrap()).unwrap(),
        row.data
    );
    let summary = sessions.session(S).unwrap().unwrap();
    assert_eq!((summary.num_turns, summary.status.as_str()), (3, "running"));
    // The chain and its signed head take in the new entry (the stored
    // summary is this fixture's, not a real session's).
    let report = verify(&ledger);
    assert_eq!(report.first_broken, None, "{report:?}");
    assert_eq!(report.entries_checked as usize, before + 1, "{report:?}");

    // A message whose session row does not exist is refused by the
    // store; the entry of the same transaction is not written.
    const ROWLESS: &str = "no-session-row";
    let row = SessionStore::message_row(&user("orphan", ROWLESS)).unwrap();
    let attached = AttachedMessage {
        row: &row,
        totals: None,
    };
    common::record_session(&ledger, ROWLESS);
    let chain = ledger.store().entries(ROWLESS).unwrap();
    let err = ledger
        .append_batch_with_message(
            ROWLESS,
            vec![(EntryKind::ModelResponse, payload)],
            std::slice::from_ref(&response),
            attached,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("FOREIGN KEY") || err.to_string().contains("foreign key"),
        "{err}"
    );
    assert_eq!(ledger.store().entries(ROWLESS).unwrap(), chain);
    assert_eq!(
        ledger.store().head(ROWLESS).unwrap().unwrap().seq,
        chain.len() as u64
    );
}

fn a_ledger_appends_verifies_and_reports(under: Under) {
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    let (small, large) = record_session(&ledger);
    // A fresh handle (another process) sees the same, signed, intact chain.
    let again = under.ledger(None);
    let report = again.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!(report.entries_checked, 6);
    let head = again.head(S).unwrap().unwrap();
    assert_eq!(head.seq, 6);
    assert!(head.signature.is_some());
    // Projections.
    let calls = again.store().tool_calls(S).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolStatus::Validated);
    assert!(calls[0].proof_is_valid());
    let data = again.report(S).unwrap();
    assert_eq!(data.tools.len(), 1);
    // Evidence reads back either way; large evidence stays in the store
    // with PostgreSQL (complete in the database), in a file with SQLite.
    assert_eq!(again.get_evidence(S, &small).unwrap(), b"file-a\nfile-b\n");
    assert_eq!(
        again.get_evidence(S, &large).unwrap(),
        common::large_output()
    );
    let in_db: Vec<String> = session_blobs(again.store(), S)
        .unwrap()
        .into_iter()
        .map(|(digest, _)| digest)
        .collect();
    let large_file = again.evidence(S).path_of(&large).unwrap();
    match under.kind {
        BackendKind::Sqlite => {
            assert_eq!(in_db, vec![small.clone()]);
            assert!(large_file.is_file());
        }
        BackendKind::Postgres => {
            let mut both = vec![small.clone(), large.clone()];
            both.sort();
            assert_eq!(in_db, both);
            assert!(!large_file.exists());
        }
    }
    assert_eq!(again.store().sessions().unwrap(), vec![S.to_string()]);
    // A second session continues its own chain from 1.
    let entry = again
        .append("other", EntryKind::UserPrompt, json!({"text": "x"}))
        .unwrap();
    assert_eq!(entry.seq, 1);
    assert_eq!(again.store().sessions().unwrap(), vec!["other", S]);
}

fn a_session_moves_between_backends_and_verifies_the_same(under: Under) {
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    let (small, large) = record_session(&ledger);
    let here = ledger.verify(S, Some(&key.verifying_key())).unwrap();
    // Into the other kind of store, rows and blobs exactly as stored.
    let other = match under.kind {
        BackendKind::Sqlite => match Under::postgres("moves_from_sqlite") {
            Some(under) => under,
            None => return,
        },
        BackendKind::Postgres => Under::sqlite(),
    };
    let copy = other.ledger(None);
    let rows = ledger.store().raw_entries(S).unwrap();
    import_raw(copy.store(), &rows, ledger.head(S).unwrap().as_ref()).unwrap();
    for digest in [&small, &large] {
        let bytes = ledger.get_evidence(S, digest).unwrap();
        copy.store().put_blob(S, digest, &bytes).unwrap();
    }
    let there = copy.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(there.ok && there.signed, "{there:?}");
    assert_eq!(here, there, "the same report from either backend");
    assert_eq!(copy.store().raw_entries(S).unwrap(), rows);
}

fn assert_broken(report: &VerifyReport, seq: u64, reason: &str) {
    assert!(!report.ok, "{report:?}");
    let b = report.first_broken.as_ref().expect("a break");
    assert_eq!((b.seq, b.reason.name()), (seq, reason), "{b}");
}

fn every_kind_of_edit_is_named_by_verify(under: Under) {
    // Each edit on its own session of the same store.
    let cases: [(&str, &str, u64, &str); 5] = [
        (
            "edited",
            "UPDATE ledger_entries SET payload = '{\"text\":\"hello World\"}' \
             WHERE session_id = 'edited' AND seq = 2",
            2,
            "EditedEntry",
        ),
        (
            "deleted",
            "DELETE FROM ledger_entries WHERE session_id = 'deleted' AND seq = 3",
            3,
            "DeletedEntry",
        ),
        (
            "reordered",
            "UPDATE ledger_entries SET seq = 100 WHERE session_id = 'reordered' AND seq = 2; \
             UPDATE ledger_entries SET seq = 2 WHERE session_id = 'reordered' AND seq = 3; \
             UPDATE ledger_entries SET seq = 3 WHERE session_id = 'reordered' AND seq = 100",
            2,
            "Reordered",
        ),
        (
            "evidence",
            "UPDATE ledger_evidence SET bytes = CAST('file-a' AS BLOB_TYPE) \
             WHERE session_id = 'evidence'",
            4,
            "EvidenceChanged",
        ),
        (
            "cut",
            "DELETE FROM ledger_entries WHERE session_id = 'cut' AND seq = 6",
            6,
            "HeadMismatch",
        ),
    ];
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    for (session, ..) in &cases {
        record_session_as(&ledger, session);
    }
    let blob_type = match under.kind {
        BackendKind::Sqlite => "BLOB",
        BackendKind::Postgres => "BYTEA",
    };
    for (session, sql, seq, reason) in cases {
        assert!(ledger.verify(session, None).unwrap().ok, "{session} before");
        under.tamper(&sql.replace("BLOB_TYPE", blob_type));
        let report = ledger.verify(session, Some(&key.verifying_key())).unwrap();
        assert_broken(&report, seq, reason);
    }
    // Untouched: S itself.
    record_session(&ledger);
    assert!(verify(&ledger).ok);
}

/// [`record_session`] under another session id.
fn record_session_as(ledger: &Ledger, session: &str) {
    let start = SessionStart {
        model: "m".into(),
        options_digest: tascer_ledger::sha256_ref(b"{}"),
        system_prompt_digest: tascer_ledger::sha256_ref(b""),
        signing_key_id: None,
        context: json!({}),
    };
    ledger.start_session(session, &start).unwrap();
    ledger
        .append(
            session,
            EntryKind::UserPrompt,
            json!({"text": "hello world"}),
        )
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "two"}))
        .unwrap();
    let small = ledger.put_evidence(session, b"file-a\nfile-b\n").unwrap();
    ledger
        .append(session, EntryKind::Checkpoint, json!({"evidence": [small]}))
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "five"}))
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "six"}))
        .unwrap();
}

fn concurrent_writers_leave_no_gap_and_no_duplicate(under: Under) {
    const WRITERS: usize = 6;
    const EACH: usize = 15;
    let under = Arc::new(under);
    let key = random_signing_key().unwrap();
    under
        .sessions()
        .create_session(&new_session("shared", "/w"))
        .unwrap();
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let under = Arc::clone(&under);
            let key = key.clone();
            std::thread::spawn(move || {
                // Its own connections, as a separate process would have.
                let ledger = under.ledger(Some(key));
                let sessions = under.sessions();
                let own = format!("own-{w}");
                for i in 0..EACH {
                    ledger
                        .append(&own, EntryKind::UserPrompt, json!({"i": i}))
                        .unwrap();
                    ledger
                        .append_many(
                            "shared",
                            vec![
                                (EntryKind::UserPrompt, json!({"writer": w, "i": i})),
                                (EntryKind::Checkpoint, json!({"writer": w, "i": i})),
                            ],
                            &[format!("{w}/{i}").into_bytes()],
                        )
                        .unwrap();
                    sessions
                        .append_message("shared", &user(&format!("{w}/{i}"), "shared"))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let ledger = under.ledger(Some(key.clone()));
    for w in 0..WRITERS {
        let report = ledger
            .verify(&format!("own-{w}"), Some(&key.verifying_key()))
            .unwrap();
        assert!(report.ok && report.signed, "{report:?}");
        assert_eq!(report.entries_checked, EACH as u64);
    }
    let report = ledger.verify("shared", Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    let total = (WRITERS * EACH * 2) as u64;
    assert_eq!(report.entries_checked, total);
    let seqs: Vec<u64> = ledger
        .store()
        .entries("shared")
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=total).collect::<Vec<_>>());
    // Each batch stayed together: a prompt is followed by its checkpoint.
    let entries = ledger.store().entries("shared").unwrap();
    for pair in entries.chunks(2) {
        assert_eq!(pair[0].payload, pair[1].payload);
    }
    let messages = under.sessions().messages("shared").unwrap();
    assert_eq!(messages.len(), WRITERS * EACH);
    assert_eq!(
        under
            .sessions()
            .session("shared")
            .unwrap()
            .unwrap()
            .message_count,
        (WRITERS * EACH) as u64
    );
}
