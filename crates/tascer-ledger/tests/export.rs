//! Attestation export, checked in Rust.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{
    EntryKind, IN_TOTO_PAYLOAD_TYPE, Ledger, SESSION_PREDICATE_TYPE, STATEMENT_V1, Subject,
};

#[test]
fn envelope_carries_a_statement_about_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let key = random_signing_key().unwrap();
    let ledger = Ledger::open_in_home(dir.path(), Some(key.clone())).unwrap();
    ledger
        .append("s", EntryKind::SessionStart, json!({"model": "m"}))
        .unwrap();
    let end = ledger
        .append(
            "s",
            EntryKind::SessionEnd,
            json!({"status": "success", "cost_usd": 1.5}),
        )
        .unwrap();
    let env = ledger
        .export_attestation("s", vec![Subject::from_bytes("a.txt", b"a")])
        .unwrap();
    let payload = env
        .verify(&key.verifying_key(), IN_TOTO_PAYLOAD_TYPE)
        .unwrap();
    let st: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(st["_type"], STATEMENT_V1);
    assert_eq!(st["predicateType"], SESSION_PREDICATE_TYPE);
    assert_eq!(st["subject"][0]["name"], "a.txt");
    assert_eq!(st["predicate"]["ledger"]["head"], json!(end.hash));
    assert_eq!(st["predicate"]["ledger"]["last_seq"], 2);
    assert_eq!(st["predicate"]["ledger"]["signed"], true);
    assert_eq!(st["predicate"]["status"], "success");
    assert_eq!(
        env.signatures[0].keyid,
        tascer_ledger::sslib_keyid(&key.verifying_key())
    );
}

#[test]
fn broken_ledgers_are_not_attested() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open_in_home(dir.path(), Some(random_signing_key().unwrap())).unwrap();
    ledger
        .append("s", EntryKind::UserPrompt, json!({"text": "a"}))
        .unwrap();
    // Tampered with through the file, as anyone with access to it could.
    rusqlite::Connection::open(ledger.store().location())
        .unwrap()
        .execute("UPDATE ledger_entries SET payload = '{\"text\":\"b\"}'", [])
        .unwrap();
    assert!(ledger.export_attestation("s", Vec::new()).is_err());
    let unsigned = Ledger::open_in_home(dir.path(), None).unwrap();
    assert!(unsigned.export_attestation("s", Vec::new()).is_err());
}
