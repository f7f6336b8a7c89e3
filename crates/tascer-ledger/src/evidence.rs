//! The content-addressed evidence store.
//!
//! Evidence is named by the SHA-256 of its bytes; entries refer to it as
//! `sha256:<hex>`. Evidence up to [`INLINE_EVIDENCE_LIMIT`] bytes is kept in
//! the database's `ledger_evidence` table, written in the same transaction
//! as the entry that refers to it (one file per small tool output cost more
//! than the rest of a tool call's governance). Larger evidence is a file at
//! `<dir>/sha256/<first two hex digits>/<64 hex digits>` ([`EvidenceStore`]),
//! except in a store that keeps all evidence (the shared PostgreSQL store:
//! a session is then complete in the database, wherever its host was).
//! [`SessionEvidence`] reads and checks both.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::digest::{parse_sha256_ref, sha256_hex, sha256_ref};
use crate::error::{LedgerError, Result, io_err};
use crate::store::LedgerStore;

/// Evidence up to this many bytes is stored in the database; larger
/// evidence is stored as a file.
pub const INLINE_EVIDENCE_LIMIT: usize = 64 * 1024;

/// True when evidence of `len` bytes is kept in the database.
pub fn is_inline(len: usize) -> bool {
    len <= INLINE_EVIDENCE_LIMIT
}

/// Evidence bytes with their digest, hashed once (the digest goes into an
/// entry's payload, the bytes into the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    digest: String,
    bytes: Vec<u8>,
}

impl Evidence {
    /// `bytes` and their digest `sha256:<hex>`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Evidence {
            digest: sha256_ref(&bytes),
            bytes,
        }
    }

    /// `sha256:<hex>` of the bytes.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// One session's evidence: blobs in the ledger store and files in the
/// session's evidence directory.
#[derive(Debug, Clone, Copy)]
pub struct SessionEvidence<'a> {
    store: &'a LedgerStore,
    session_id: &'a str,
    files: &'a EvidenceStore,
}

impl<'a> SessionEvidence<'a> {
    /// The evidence of `session_id` in `store` and `files`.
    pub fn new(store: &'a LedgerStore, session_id: &'a str, files: &'a EvidenceStore) -> Self {
        SessionEvidence {
            store,
            session_id,
            files,
        }
    }

    /// Stores `bytes` (in the database when small or when the store keeps
    /// all evidence, else as a file) and returns their digest
    /// `sha256:<hex>`. Storing the same bytes twice is a no-op.
    pub fn put(&self, bytes: &[u8]) -> Result<String> {
        if is_inline(bytes.len()) || self.store.keeps_large_evidence() {
            let digest = sha256_ref(bytes);
            self.store.put_blob(self.session_id, &digest, bytes)?;
            Ok(digest)
        } else {
            self.files.put(bytes)
        }
    }

    /// The bytes stored under `digest` (the database first, then the
    /// files), checked against it.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>> {
        parse_sha256_ref(digest)?;
        match self.store.blob(self.session_id, &normalize(digest))? {
            Some(bytes) => checked(digest, bytes),
            None => self.files.get(digest),
        }
    }

    /// Checks that evidence `digest` exists and still has that digest.
    pub fn verify(&self, digest: &str) -> Result<()> {
        self.get(digest).map(|_| ())
    }
}

/// A directory of evidence files named by their SHA-256 (the large
/// evidence; see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceStore {
    dir: PathBuf,
}

impl EvidenceStore {
    /// An evidence store rooted at `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        EvidenceStore { dir: dir.into() }
    }

    /// The session evidence directory under an evidence root:
    /// `<root>/<session_id>`.
    pub fn for_session(root: impl AsRef<Path>, session_id: &str) -> Self {
        EvidenceStore::new(root.as_ref().join(session_id))
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the file for `digest` (`sha256:<hex>` or bare hex) lives.
    pub fn path_of(&self, digest: &str) -> Result<PathBuf> {
        let hex = parse_sha256_ref(digest)?;
        Ok(self.dir.join("sha256").join(&hex[..2]).join(hex))
    }

    /// Stores `bytes` and returns their digest `sha256:<hex>`. Storing the
    /// same bytes twice is a no-op. The file is written to a temporary name,
    /// then renamed, so a crash never leaves a partial file under a digest
    /// name. It is not fsynced: evidence has the durability of the SQLite
    /// store (WAL, `synchronous=NORMAL`) — it survives a killed process, and
    /// an OS crash may lose the last writes, which `verify` then reports.
    pub fn put(&self, bytes: &[u8]) -> Result<String> {
        self.put_hashed(&sha256_ref(bytes), bytes)
    }

    /// [`put`](Self::put) when the digest (`sha256:<hex>` of `bytes`) is
    /// already known: the bytes are not hashed again.
    pub fn put_hashed(&self, digest: &str, bytes: &[u8]) -> Result<String> {
        let hex = parse_sha256_ref(digest)?;
        let digest = normalize(digest);
        let path = self.path_of(&digest)?;
        if path.is_file() && self.verify(&digest).is_ok() {
            return Ok(digest);
        }
        let parent = path.parent().unwrap_or(&self.dir).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(io_err("cannot create", &parent))?;
        let tmp = parent.join(format!(".{hex}.{}.tmp", std::process::id()));
        {
            let mut file = std::fs::File::create(&tmp).map_err(io_err("cannot write", &tmp))?;
            file.write_all(bytes)
                .map_err(io_err("cannot write", &tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(io_err("cannot rename into", &path))?;
        Ok(digest)
    }

    /// The bytes stored under `digest`, checked against it.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>> {
        let path = self.path_of(digest)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LedgerError::EvidenceMissing(normalize(digest)));
            }
            Err(e) => return Err(io_err("cannot read", &path)(e)),
        };
        checked(digest, bytes)
    }

    /// Checks that the file for `digest` exists and still has that digest.
    pub fn verify(&self, digest: &str) -> Result<()> {
        self.get(digest).map(|_| ())
    }

    /// True when a file for `digest` exists (not checked).
    pub fn contains(&self, digest: &str) -> bool {
        self.path_of(digest).is_ok_and(|p| p.is_file())
    }
}

/// `bytes` when they hash to `digest`, else [`LedgerError::EvidenceChanged`].
fn checked(digest: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
    let actual = sha256_hex(&bytes);
    if actual != parse_sha256_ref(digest)? {
        return Err(LedgerError::EvidenceChanged {
            digest: normalize(digest),
            actual: format!("sha256:{actual}"),
        });
    }
    Ok(bytes)
}

fn normalize(digest: &str) -> String {
    if digest.starts_with("sha256:") {
        digest.to_string()
    } else {
        format!("sha256:{digest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_verify() {
        let dir = tempfile::tempdir().unwrap();
        let store = EvidenceStore::new(dir.path());
        let d = store.put(b"hello").unwrap();
        assert_eq!(
            d,
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        let path = store.path_of(&d).unwrap();
        assert!(path.ends_with(
            "sha256/2c/2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        ));
        assert_eq!(store.get(&d).unwrap(), b"hello");
        assert_eq!(store.put(b"hello").unwrap(), d);
        store.verify(&d).unwrap();
        std::fs::write(&path, b"hellO").unwrap();
        assert!(matches!(
            store.verify(&d),
            Err(LedgerError::EvidenceChanged { .. })
        ));
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            store.verify(&d),
            Err(LedgerError::EvidenceMissing(_))
        ));
        assert!(matches!(
            store.get("sha256:../../etc/passwd"),
            Err(LedgerError::BadDigest(_))
        ));
    }
}
