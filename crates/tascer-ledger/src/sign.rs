//! Signed session heads.
//!
//! The message signed for a session head is the RFC 8785 canonical JSON of
//! `{"entries": <count>, "hash": "<hex of last entry>", "seq": <last seq>,
//! "session_id": "<id>"}` — for example
//! `{"entries":3,"hash":"ab…","seq":3,"session_id":"s1"}` — signed with
//! Ed25519 (RFC 8032, pure, no prehash). The signature is stored as
//! standard base64 (with padding).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde_json::json;
pub use tascer_store::SignedHead;

use crate::entry::now_ts;
use crate::jcs::{self, JcsError};
use crate::keys::key_id;

/// The exact bytes signed for a head.
pub fn head_message(
    session_id: &str,
    seq: u64,
    hash: &str,
    entries: u64,
) -> Result<Vec<u8>, JcsError> {
    jcs::canonicalize(&json!({
        "session_id": session_id,
        "seq": seq,
        "hash": hash,
        "entries": entries,
    }))
}

/// Signing and checking a session head ([`SignedHead`], the store's own
/// row type): the ledger's part of it, since the store holds no key.
pub trait HeadSigning: Sized {
    /// A head signed with `key` now.
    fn sign(
        session_id: impl Into<String>,
        seq: u64,
        hash: impl Into<String>,
        key: &SigningKey,
    ) -> Result<Self, JcsError>;

    /// The bytes the signature covers ([`head_message`]).
    fn message(&self) -> Result<Vec<u8>, JcsError>;

    /// Checks the signature with `key`; `Err` says why it fails.
    fn verify(&self, key: &VerifyingKey) -> Result<(), String>;
}

impl HeadSigning for SignedHead {
    fn sign(
        session_id: impl Into<String>,
        seq: u64,
        hash: impl Into<String>,
        key: &SigningKey,
    ) -> Result<Self, JcsError> {
        let mut head = SignedHead::unsigned(session_id, seq, hash);
        let message = head.message()?;
        let signature: Signature = key.sign(&message);
        head.signature = Some(STANDARD.encode(signature.to_bytes()));
        head.key_id = Some(key_id(&key.verifying_key()));
        head.signed_at = Some(now_ts());
        Ok(head)
    }

    fn message(&self) -> Result<Vec<u8>, JcsError> {
        head_message(&self.session_id, self.seq, &self.hash, self.seq)
    }

    fn verify(&self, key: &VerifyingKey) -> Result<(), String> {
        let sig_b64 = self.signature.as_deref().ok_or("head is not signed")?;
        let bytes = STANDARD
            .decode(sig_b64)
            .map_err(|e| format!("signature is not base64: {e}"))?;
        let signature =
            Signature::from_slice(&bytes).map_err(|e| format!("signature is malformed: {e}"))?;
        let expected_id = key_id(key);
        if let Some(id) = &self.key_id
            && id != &expected_id
        {
            return Err(format!(
                "head was signed by key {id}, not by the trusted key {expected_id}"
            ));
        }
        let message = self.message().map_err(|e| e.to_string())?;
        key.verify_strict(&message, &signature)
            .map_err(|_| "signature does not verify with the trusted key".to_string())
    }
}
