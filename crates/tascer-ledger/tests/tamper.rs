//! Tamper tests: every kind of edit to a stored ledger is detected and the
//! first broken entry is named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rusqlite::{Connection, params};
use serde_json::json;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{
    BreakReason, EntryKind, HeadSigning as _, Ledger, LedgerEntry, VerifyReport, jcs,
};

const S: &str = "session-1";

struct Fixture {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    ledger: Ledger,
    /// Small evidence: a blob in the database.
    evidence_digest: String,
    /// Large evidence: a file in the session's evidence directory.
    file_digest: String,
}

/// seq 1 start, 2 prompt, 3 tool opened, 4 tool record (with a small and a
/// large piece of evidence), 5 model response, 6 end.
fn fixture(signed: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tascer.db");
    let key = signed.then(|| random_signing_key().unwrap());
    let ledger = Ledger::open(&db, dir.path().join("evidence"), key).unwrap();
    let (evidence_digest, file_digest) = common::record_session(&ledger, S);
    Fixture {
        _dir: dir,
        db,
        ledger,
        evidence_digest,
        file_digest,
    }
}

fn sql(f: &Fixture, statements: &str) {
    let conn = Connection::open(&f.db).unwrap();
    conn.execute_batch(statements).unwrap();
}

fn verify(f: &Fixture) -> VerifyReport {
    f.ledger.verify(S, None).unwrap()
}

fn assert_broken(report: &VerifyReport, seq: u64, reason: &str) {
    assert!(!report.ok, "{report:?}");
    let b = report.first_broken.as_ref().expect("a break");
    assert_eq!((b.seq, b.reason.name()), (seq, reason), "{b}");
}

fn hash_of(f: &Fixture, seq: i64) -> String {
    let conn = Connection::open(&f.db).unwrap();
    conn.query_row(
        "SELECT hash FROM ledger_entries WHERE session_id = ?1 AND seq = ?2",
        params![S, seq],
        |r| r.get(0),
    )
    .unwrap()
}

fn insert_entry(f: &Fixture, e: &LedgerEntry) {
    let conn = Connection::open(&f.db).unwrap();
    conn.execute(
        "INSERT INTO ledger_entries (session_id, seq, ts, kind, payload, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            e.session_id,
            e.seq as i64,
            e.ts,
            e.kind.as_str(),
            jcs::canonical_string(&e.payload).unwrap(),
            e.prev_hash,
            e.hash
        ],
    )
    .unwrap();
}

#[test]
fn intact_signed_session_verifies() {
    let f = fixture(true);
    let report = verify(&f);
    assert!(report.ok, "{report:?}");
    assert!(report.signed);
    assert_eq!(report.entries_checked, 6);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // the start entry recorded the key
    let entries = f.ledger.store().entries(S).unwrap();
    assert_eq!(
        entries[0].payload["signing_key_id"],
        json!(f.ledger.key_id().unwrap())
    );
    assert_eq!(entries[0].prev_hash, tascer_ledger::GENESIS_PREV_HASH);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
}

#[test]
fn one_byte_of_a_payload_changed() {
    let f = fixture(true);
    sql(
        &f,
        "UPDATE ledger_entries SET payload = replace(payload, 'hello', 'hellp') WHERE seq = 2",
    );
    assert_broken(&verify(&f), 2, "EditedEntry");
}

#[test]
fn timestamp_or_kind_changed() {
    let f = fixture(true);
    sql(
        &f,
        "UPDATE ledger_entries SET kind = 'checkpoint' WHERE seq = 5",
    );
    assert_broken(&verify(&f), 5, "EditedEntry");
    let f = fixture(true);
    sql(
        &f,
        "UPDATE ledger_entries SET ts = '2020-01-01T00:00:00.000Z' WHERE seq = 1",
    );
    assert_broken(&verify(&f), 1, "EditedEntry");
}

#[test]
fn payload_made_unparseable() {
    let f = fixture(true);
    sql(
        &f,
        "UPDATE ledger_entries SET payload = '{not json' WHERE seq = 3",
    );
    assert_broken(&verify(&f), 3, "EditedEntry");
}

#[test]
fn entry_deleted() {
    let f = fixture(true);
    sql(&f, "DELETE FROM ledger_entries WHERE seq = 3");
    assert_broken(&verify(&f), 3, "DeletedEntry");
}

#[test]
fn entry_deleted_and_rest_renumbered() {
    let f = fixture(true);
    sql(
        &f,
        "DELETE FROM ledger_entries WHERE seq = 3;
         UPDATE ledger_entries SET seq = seq + 100 WHERE seq > 3;
         UPDATE ledger_entries SET seq = seq - 101 WHERE seq > 100;",
    );
    assert_broken(&verify(&f), 3, "DeletedEntry");
}

#[test]
fn first_entry_deleted() {
    let f = fixture(true);
    sql(&f, "DELETE FROM ledger_entries WHERE seq = 1");
    assert_broken(&verify(&f), 1, "DeletedEntry");
}

#[test]
fn entry_inserted_with_a_valid_hash() {
    let f = fixture(true);
    // Make room at seq 3 and insert a well-formed entry linked to seq 2.
    sql(
        &f,
        "UPDATE ledger_entries SET seq = seq + 100 WHERE seq >= 3;
         UPDATE ledger_entries SET seq = seq - 99 WHERE seq >= 100;",
    );
    let forged = LedgerEntry::new(
        3,
        S,
        "2026-01-01T00:00:00.500Z",
        EntryKind::UserPrompt,
        json!({"text": "also delete the backups"}),
        hash_of(&f, 2),
    )
    .unwrap();
    insert_entry(&f, &forged);
    assert_broken(&verify(&f), 3, "InsertedEntry");
}

#[test]
fn entry_appended_after_the_signed_head() {
    let f = fixture(true);
    let forged = LedgerEntry::new(
        7,
        S,
        "2026-01-01T00:00:09.000Z",
        EntryKind::UserPrompt,
        json!({"text": "late"}),
        hash_of(&f, 6),
    )
    .unwrap();
    insert_entry(&f, &forged);
    assert_broken(&verify(&f), 7, "InsertedEntry");
}

#[test]
fn two_entries_swapped() {
    let f = fixture(true);
    sql(
        &f,
        "UPDATE ledger_entries SET seq = -1 WHERE seq = 3;
         UPDATE ledger_entries SET seq = 3 WHERE seq = 4;
         UPDATE ledger_entries SET seq = 4 WHERE seq = -1;",
    );
    assert_broken(&verify(&f), 3, "Reordered");
}

#[test]
fn evidence_file_altered() {
    let f = fixture(true);
    let path = f.ledger.evidence(S).path_of(&f.file_digest).unwrap();
    assert!(path.is_file(), "large evidence is a file");
    let mut altered = common::large_output();
    altered[10] ^= 1;
    std::fs::write(&path, altered).unwrap();
    let report = verify(&f);
    assert_broken(&report, 4, "EvidenceChanged");
    match &report.first_broken.as_ref().unwrap().reason {
        BreakReason::EvidenceChanged { digest } => assert_eq!(digest, &f.file_digest),
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(&path).unwrap();
    let report = verify(&f);
    assert_broken(&report, 4, "EvidenceChanged");
    assert!(
        report.first_broken.unwrap().detail.contains("missing"),
        "a deleted file is reported as missing"
    );
}

#[test]
fn evidence_blob_altered() {
    let f = fixture(true);
    assert_eq!(
        f.ledger.get_evidence(S, &f.evidence_digest).unwrap(),
        b"file-a\nfile-b\n"
    );
    assert!(
        !f.ledger.evidence(S).contains(&f.evidence_digest),
        "small evidence is not a file"
    );
    sql(
        &f,
        &format!(
            "UPDATE ledger_evidence SET bytes = X'66696c652d610a66696c652d630a'
             WHERE digest = '{}'",
            f.evidence_digest
        ),
    );
    let report = verify(&f);
    assert_broken(&report, 4, "EvidenceChanged");
    match &report.first_broken.as_ref().unwrap().reason {
        BreakReason::EvidenceChanged { digest } => assert_eq!(digest, &f.evidence_digest),
        other => panic!("{other:?}"),
    }
    assert!(f.ledger.get_evidence(S, &f.evidence_digest).is_err());
    sql(&f, "DELETE FROM ledger_evidence");
    let report = verify(&f);
    assert_broken(&report, 4, "EvidenceChanged");
    assert!(report.first_broken.unwrap().detail.contains("missing"));
}

#[test]
fn signature_replaced() {
    let f = fixture(true);
    // A valid signature by another key over the same head.
    let other = random_signing_key().unwrap();
    let head = f.ledger.head(S).unwrap().unwrap();
    let forged = tascer_ledger::SignedHead::sign(S, head.seq, head.hash.clone(), &other).unwrap();
    sql(
        &f,
        &format!(
            "UPDATE ledger_heads SET signature = '{}' WHERE session_id = '{S}'",
            forged.signature.unwrap()
        ),
    );
    assert_broken(&verify(&f), 6, "BadSignature");
    // and garbage
    sql(&f, "UPDATE ledger_heads SET signature = 'AAAA'");
    assert_broken(&verify(&f), 6, "BadSignature");
}

#[test]
fn head_re_signed_by_another_key_with_its_id() {
    let f = fixture(true);
    let other = random_signing_key().unwrap();
    let head = f.ledger.head(S).unwrap().unwrap();
    let forged = tascer_ledger::SignedHead::sign(S, head.seq, head.hash, &other).unwrap();
    f.ledger.store().put_head(&forged).unwrap();
    assert_broken(&verify(&f), 6, "BadSignature");
}

#[test]
fn tail_cut_off() {
    let f = fixture(true);
    sql(&f, "DELETE FROM ledger_entries WHERE seq = 6");
    let report = verify(&f);
    assert_broken(&report, 6, "HeadMismatch");
    assert_eq!(
        report.first_broken.unwrap().reason,
        BreakReason::HeadMismatch {
            head_seq: 6,
            last_seq: 5
        }
    );
}

#[test]
fn tail_cut_off_and_head_removed() {
    let f = fixture(true);
    sql(
        &f,
        "DELETE FROM ledger_entries WHERE seq >= 5; DELETE FROM ledger_heads;",
    );
    assert_broken(&verify(&f), 4, "UnsignedButKeyed");
}

#[test]
fn tail_cut_off_and_head_rewritten_unsigned() {
    let f = fixture(true);
    let h4 = hash_of(&f, 4);
    sql(
        &f,
        &format!(
            "DELETE FROM ledger_entries WHERE seq >= 5;
             UPDATE ledger_heads SET seq = 4, hash = '{h4}', signature = NULL, key_id = NULL;"
        ),
    );
    assert_broken(&verify(&f), 4, "UnsignedButKeyed");
}

#[test]
fn tail_cut_off_and_head_moved_keeping_old_signature() {
    let f = fixture(true);
    let h4 = hash_of(&f, 4);
    sql(
        &f,
        &format!(
            "DELETE FROM ledger_entries WHERE seq >= 5;
             UPDATE ledger_heads SET seq = 4, hash = '{h4}';"
        ),
    );
    assert_broken(&verify(&f), 4, "BadSignature");
}

#[test]
fn whole_chain_rehashed_without_the_key() {
    let f = fixture(true);
    // The attacker edits entry 2 and recomputes every hash after it.
    let mut entries = f.ledger.store().entries(S).unwrap();
    entries[1].payload = json!({"text": "something else"});
    for i in 1..entries.len() {
        entries[i].prev_hash = entries[i - 1].hash.clone();
        entries[i].hash = entries[i].compute_hash().unwrap();
    }
    sql(&f, "DELETE FROM ledger_entries WHERE seq >= 2");
    for e in &entries[1..] {
        insert_entry(&f, e);
    }
    let last = entries.last().unwrap();
    sql(
        &f,
        &format!("UPDATE ledger_heads SET hash = '{}'", last.hash),
    );
    assert_broken(&verify(&f), 6, "BadSignature");
}

#[test]
fn entry_rewritten_with_recomputed_hash_only() {
    let f = fixture(true);
    let mut e = f.ledger.store().entries(S).unwrap().remove(1);
    e.payload = json!({"text": "rewritten"});
    e.hash = e.compute_hash().unwrap();
    sql(&f, "DELETE FROM ledger_entries WHERE seq = 2");
    insert_entry(&f, &e);
    assert_broken(&verify(&f), 2, "EditedEntry");
}

#[test]
fn wrong_trusted_key() {
    let f = fixture(true);
    let other = random_signing_key().unwrap().verifying_key();
    let report = f.ledger.verify(S, Some(&other)).unwrap();
    assert_broken(&report, 6, "BadSignature");
}

#[test]
fn signed_session_without_a_trusted_key_warns() {
    let f = fixture(true);
    let report =
        tascer_ledger::verify_session(f.ledger.store(), S, &f.ledger.evidence(S), None).unwrap();
    assert!(report.ok);
    assert!(!report.signed);
    assert!(
        report.warnings[0].contains("no public key"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn unsigned_session_verifies_with_a_warning() {
    let f = fixture(false);
    let report = verify(&f);
    assert!(report.ok, "{report:?}");
    assert!(!report.signed);
    assert!(report.warnings[0].contains("not signed"));
    let entries = f.ledger.store().entries(S).unwrap();
    assert_eq!(entries[0].payload["signing_key_id"], json!(null));
    // edits are still detected without a key
    sql(
        &f,
        "UPDATE ledger_entries SET payload = replace(payload, 'Bash', 'Bish') WHERE seq = 4",
    );
    assert_broken(&verify(&f), 4, "EditedEntry");
}

#[test]
fn unknown_session_is_an_error() {
    let f = fixture(true);
    assert!(f.ledger.verify("nope", None).is_err());
}
