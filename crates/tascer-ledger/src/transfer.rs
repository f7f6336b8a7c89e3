//! Moving a session's ledger out of and into a store, as it is stored.
//!
//! Archives (`tascer-archive`) copy a session's entries, head and evidence
//! blobs out of the database, and verify an archive years later by loading
//! them, verbatim, into a fresh store and running
//! [`verify_session`](crate::verify_session) on it: the one verifier, with
//! no access to the original store.

use crate::error::Result;
use crate::sign::SignedHead;
use crate::store::{LedgerStore, RawEntry};

/// Every evidence blob a session keeps in the database, as
/// `(digest, bytes)`, ordered by digest; unchecked.
pub fn session_blobs(store: &LedgerStore, session_id: &str) -> Result<Vec<(String, Vec<u8>)>> {
    store.blobs(session_id)
}

/// Writes `rows` and `head` of one session into `store` exactly as given
/// (no hashing, no checks, no projections), in one transaction (in an
/// SQLite store, replacing rows with the same `(session_id, seq)`). Meant
/// for a fresh store that is then verified: whatever was changed in the
/// rows shows there.
pub fn import_raw(store: &LedgerStore, rows: &[RawEntry], head: Option<&SignedHead>) -> Result<()> {
    store.import_entries(rows)?;
    if let Some(head) = head {
        store.put_head(head)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryKind;
    use crate::verify::verify_session;
    use crate::{EvidenceStore, keys};
    use serde_json::json;

    #[test]
    fn exported_rows_verify_in_a_fresh_store_and_an_edit_shows() {
        let dir = tempfile::tempdir().unwrap();
        let key = keys::random_signing_key().unwrap();
        let src = LedgerStore::open(dir.path().join("a.db")).unwrap();
        src.append(
            "s",
            EntryKind::SessionStart,
            json!({"signing_key_id": keys::key_id(&key.verifying_key())}),
            Some(&key),
        )
        .unwrap();
        src.put_blob("s", &crate::sha256_ref(b"x"), b"x").unwrap();
        src.append(
            "s",
            EntryKind::Checkpoint,
            json!({"evidence": [crate::sha256_ref(b"x")]}),
            Some(&key),
        )
        .unwrap();
        let blobs = session_blobs(&src, "s").unwrap();
        assert_eq!(blobs, vec![(crate::sha256_ref(b"x"), b"x".to_vec())]);
        let rows = src.raw_entries("s").unwrap();
        let head = src.head("s").unwrap();

        let dst = LedgerStore::open(dir.path().join("b.db")).unwrap();
        import_raw(&dst, &rows, head.as_ref()).unwrap();
        let ev = EvidenceStore::new(dir.path().join("ev"));
        ev.put(b"x").unwrap();
        let report = verify_session(&dst, "s", &ev, Some(&key.verifying_key())).unwrap();
        assert!(report.ok && report.signed, "{report:?}");

        let mut edited = rows.clone();
        edited[1].payload = r#"{"evidence":[]}"#.into();
        let dst2 = LedgerStore::open(dir.path().join("c.db")).unwrap();
        import_raw(&dst2, &edited, head.as_ref()).unwrap();
        let report = verify_session(&dst2, "s", &ev, Some(&key.verifying_key())).unwrap();
        assert_eq!(report.first_broken.map(|b| b.seq), Some(2));
    }
}
