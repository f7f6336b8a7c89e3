//! The archive manifest and its signature.
//!
//! `manifest.json` is a DSSE envelope (payload type [`MANIFEST_PAYLOAD_TYPE`])
//! whose payload is the RFC 8785 canonical JSON of a [`Manifest`], signed
//! with the Tascer key (Ed25519). It lists every other object of the archive
//! with its size and SHA-256, every file inside the working-directory
//! tarball, the ledger head and the signer.

use serde::{Deserialize, Serialize};
use tascer_ledger::{Envelope, SigningKey, VerifyingKey, jcs, key_id, sslib_keyid};

use crate::error::{ArchiveError, Result};

/// DSSE payload type of an archive manifest.
pub const MANIFEST_PAYLOAD_TYPE: &str = "application/vnd.tascer.archive-manifest+json";
/// Value of [`Manifest::format`].
pub const MANIFEST_FORMAT: &str = "tascer-archive/v1";
/// Object name of the manifest inside an archive.
pub const MANIFEST_NAME: &str = "manifest.json";
/// Object name of the working-directory tarball.
pub const WORKDIR_NAME: &str = "workdir.tar.gz";
/// Object name of the ledger entries (one JSON entry per line).
pub const LEDGER_NAME: &str = "ledger.jsonl";
/// Object name of the signed ledger head.
pub const HEAD_NAME: &str = "head.json";
/// Object name of the exported attestation (DSSE envelope, one line).
pub const ATTESTATION_NAME: &str = "attestation.intoto.jsonl";
/// Folder of the evidence objects (`evidence/sha256/<2 hex>/<64 hex>`).
pub const EVIDENCE_DIR: &str = "evidence";

/// One file: where, how big, what digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the archive (objects) or the working directory
    /// (tarball members), `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Lowercase hex SHA-256 of the content.
    pub sha256: String,
}

/// A working-directory file left out of the tarball, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Path relative to the working directory.
    pub path: String,
    /// Why it was left out ("larger than …", "symlink", …).
    pub reason: String,
}

/// The ledger head the archive holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerHead {
    /// Last seq (= number of entries).
    pub seq: u64,
    /// Hash of the last entry.
    pub hash: String,
    /// Key id that signed the head, if signed.
    pub key_id: Option<String>,
}

/// Who signed the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signer {
    /// Tascer key id (hex SHA-256 of the raw public key).
    pub key_id: String,
    /// The raw 32-byte Ed25519 public key, hex. Not a trust anchor by
    /// itself: pin the key id (or pass the public key) when verifying.
    pub public_key: String,
}

/// The manifest of one archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: String,
    /// Session id.
    pub session_id: String,
    /// When the archive was made (RFC 3339, UTC).
    pub created_at: String,
    /// The working directory the tarball was made from (as it was named on
    /// the archiving host).
    pub workdir: String,
    /// Every object of the archive except the manifest.
    pub objects: Vec<FileEntry>,
    /// Every file inside `workdir.tar.gz`.
    pub workdir_files: Vec<FileEntry>,
    /// Working-directory files left out, and why.
    pub skipped: Vec<Skipped>,
    /// The ledger head.
    pub ledger_head: LedgerHead,
    /// The signer of this manifest.
    pub signer: Signer,
    /// The Tascer version that wrote the archive.
    pub tascer_version: String,
}

impl Manifest {
    /// Signs the manifest's canonical JSON with `key` into a DSSE envelope.
    pub fn sign(&self, key: &SigningKey) -> Result<Envelope> {
        let value = serde_json::to_value(self)?;
        let payload = jcs::canonicalize(&value).map_err(tascer_ledger::LedgerError::from)?;
        Ok(Envelope::sign(
            MANIFEST_PAYLOAD_TYPE,
            &payload,
            key,
            &sslib_keyid(&key.verifying_key()),
        ))
    }

    /// Reads the manifest out of an envelope WITHOUT checking the signature
    /// (use [`open_manifest`] for that).
    pub fn unverified(envelope: &Envelope, url: &str) -> Result<Manifest> {
        let bad = |detail: String| ArchiveError::BadManifest {
            url: url.to_string(),
            detail,
        };
        let bytes = envelope.payload_bytes().map_err(|e| bad(e.to_string()))?;
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a manifest: {e}")))?;
        if manifest.format != MANIFEST_FORMAT {
            return Err(bad(format!(
                "format {:?} is not {MANIFEST_FORMAT:?}",
                manifest.format
            )));
        }
        Ok(manifest)
    }

    /// The signer's public key as recorded.
    pub fn signer_key(&self) -> Result<VerifyingKey, String> {
        tascer_ledger::keys::parse_verifying_key(&self.signer.public_key)
    }
}

/// Why [`open_manifest`] rejected a manifest, with the manifest when it
/// could at least be read.
#[derive(Debug, Clone)]
pub struct ManifestRejected {
    /// The manifest as read (unverified), if it parsed.
    pub manifest: Option<Box<Manifest>>,
    /// Why it is rejected.
    pub detail: String,
}

fn rejected(manifest: Option<Manifest>, detail: impl Into<String>) -> ManifestRejected {
    ManifestRejected {
        manifest: manifest.map(Box::new),
        detail: detail.into(),
    }
}

/// Checks a manifest envelope's signature and returns the manifest and the
/// key that verified it. With `trusted`, only that key is accepted;
/// without, the signer key the manifest names is used (and must match its
/// key id) — which proves integrity, not who made the archive.
pub fn open_manifest(
    envelope: &Envelope,
    trusted: Option<&VerifyingKey>,
    url: &str,
) -> Result<(Manifest, VerifyingKey), ManifestRejected> {
    let manifest =
        Manifest::unverified(envelope, url).map_err(|e| rejected(None, e.to_string()))?;
    let named = match manifest.signer_key() {
        Ok(k) => k,
        Err(e) => {
            return Err(rejected(
                Some(manifest),
                format!("the signer's public key is malformed: {e}"),
            ));
        }
    };
    if key_id(&named) != manifest.signer.key_id {
        return Err(rejected(
            Some(manifest),
            "the signer's key id does not match its public key".to_string(),
        ));
    }
    let key = match trusted {
        Some(t) if key_id(t) != manifest.signer.key_id => {
            let detail = format!(
                "the manifest is signed by key {}, not by the trusted key {}",
                manifest.signer.key_id,
                key_id(t)
            );
            return Err(rejected(Some(manifest), detail));
        }
        Some(t) => *t,
        None => named,
    };
    match envelope.verify(&key, MANIFEST_PAYLOAD_TYPE) {
        Ok(signed) => {
            // The signed payload is what we parsed (same envelope), but
            // re-read it from the verified bytes to be certain.
            match serde_json::from_slice::<Manifest>(&signed) {
                Ok(m) => Ok((m, key)),
                Err(e) => Err(rejected(
                    Some(manifest),
                    format!("signed payload is not a manifest: {e}"),
                )),
            }
        }
        Err(e) => Err(rejected(Some(manifest), format!("manifest signature: {e}"))),
    }
}
