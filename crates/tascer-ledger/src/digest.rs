//! SHA-256 digests and their text forms.

use sha2::{Digest as _, Sha256};

use crate::error::{LedgerError, Result};

/// The `prev_hash` of the first entry of every session: 64 zeros.
pub const GENESIS_PREV_HASH: &str =
    "0000000000000000000000000000000000000000000000000000000000000000";

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `sha256:<hex>` of `bytes`: the form entries use to reference content.
pub fn sha256_ref(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// True when `s` is 64 lowercase hex digits.
pub fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The hex part of `sha256:<hex>` (or of bare `<hex>`), validated.
pub fn parse_sha256_ref(digest: &str) -> Result<&str> {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    if is_hex64(hex) {
        Ok(hex)
    } else {
        Err(LedgerError::BadDigest(digest.to_string()))
    }
}
