//! Ed25519 keys: generation, files, key ids.
//!
//! Files under `<home>/keys/`:
//! - `tascer-ed25519.key`: the private key, PKCS#8 PEM
//!   (`-----BEGIN PRIVATE KEY-----`), mode 0600;
//! - `tascer-ed25519.pub.pem`: the public key, SubjectPublicKeyInfo PEM
//!   (`-----BEGIN PUBLIC KEY-----`).
//!
//! The key id Tascer records is the lowercase hex SHA-256 of the raw 32-byte
//! public key. DSSE envelopes carry securesystemslib's key id instead (see
//! [`sslib_keyid`]) so that standard in-toto tooling recognizes it.

use std::path::{Path, PathBuf};

use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::json;

use crate::digest::sha256_hex;
use crate::error::{LedgerError, Result, io_err};
use crate::jcs;

/// File name of the private key inside `<home>/keys`.
pub const PRIVATE_KEY_FILE: &str = "tascer-ed25519.key";
/// File name of the public key inside `<home>/keys`.
pub const PUBLIC_KEY_FILE: &str = "tascer-ed25519.pub.pem";

/// Where a home directory keeps its key pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPaths {
    /// The private key (PKCS#8 PEM).
    pub private: PathBuf,
    /// The public key (SPKI PEM).
    pub public: PathBuf,
}

impl KeyPaths {
    /// The key files of a Tascer home directory.
    pub fn in_home(home: impl AsRef<Path>) -> Self {
        let dir = home.as_ref().join("keys");
        KeyPaths {
            private: dir.join(PRIVATE_KEY_FILE),
            public: dir.join(PUBLIC_KEY_FILE),
        }
    }
}

/// Tascer's key id: lowercase hex SHA-256 of the raw 32-byte public key.
pub fn key_id(key: &VerifyingKey) -> String {
    sha256_hex(key.as_bytes())
}

/// securesystemslib's default key id: hex SHA-256 of the canonical JSON
/// `{"keytype":"ed25519","keyval":{"public":"<hex>"},"scheme":"ed25519"}`.
pub fn sslib_keyid(key: &VerifyingKey) -> String {
    let doc = json!({
        "keytype": "ed25519",
        "scheme": "ed25519",
        "keyval": {"public": hex::encode(key.as_bytes())},
    });
    // This document has only strings, so it always has a canonical form.
    sha256_hex(&jcs::canonicalize(&doc).unwrap_or_default())
}

/// A new random key (32 bytes from the operating system's generator).
pub fn random_signing_key() -> Result<SigningKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| LedgerError::Key {
        path: PathBuf::from("<os random generator>"),
        detail: e.to_string(),
    })?;
    Ok(SigningKey::from_bytes(&seed))
}

/// The key whose 32-byte seed is `hex` (64 hex digits).
pub fn signing_key_from_seed_hex(hex: &str) -> Result<SigningKey> {
    let bad = |detail: String| LedgerError::Key {
        path: PathBuf::from("<seed hex>"),
        detail,
    };
    let bytes = hex::decode(hex.trim()).map_err(|e| bad(e.to_string()))?;
    let seed: [u8; 32] = bytes
        .try_into()
        .map_err(|b: Vec<u8>| bad(format!("seed is {} bytes, want 32", b.len())))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Generates a key pair and writes it under `<home>/keys/`. Refuses to
/// overwrite existing key files unless `force`.
pub fn generate_keypair(home: impl AsRef<Path>, force: bool) -> Result<(SigningKey, KeyPaths)> {
    let paths = KeyPaths::in_home(home);
    if !force {
        for p in [&paths.private, &paths.public] {
            if p.exists() {
                return Err(LedgerError::KeyExists(p.clone()));
            }
        }
    }
    let key = random_signing_key()?;
    write_keypair(&key, &paths)?;
    Ok((key, paths))
}

/// Writes `key` to the given paths (private 0600, public 0644).
pub fn write_keypair(key: &SigningKey, paths: &KeyPaths) -> Result<()> {
    if let Some(dir) = paths.private.parent() {
        std::fs::create_dir_all(dir).map_err(io_err("cannot create", dir))?;
    }
    write_private(&paths.private, private_pem(key, &paths.private)?.as_bytes())?;
    std::fs::write(&paths.public, public_pem(key, &paths.public)?)
        .map_err(io_err("cannot write", &paths.public))?;
    Ok(())
}

fn private_pem(
    key: &SigningKey,
    path: &Path,
) -> Result<ed25519_dalek::pkcs8::spki::der::zeroize::Zeroizing<String>> {
    key.to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| LedgerError::Key {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
}

fn public_pem(key: &SigningKey, path: &Path) -> Result<String> {
    key.verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| LedgerError::Key {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
}

/// Loads the private key of a Tascer home, creating the key pair when the
/// home has none (signing by default). Returns the key and, when it was
/// created by this call, the paths of the new files.
///
/// Safe when several processes start on a new home at once: the new
/// private key is written (mode 0600) to a temporary file and published
/// with a hard link, which fails when another process published first;
/// the process that lost the race loads the winner's key, so all of them
/// sign with the same key.
pub fn load_or_create_home_signing_key(
    home: impl AsRef<Path>,
) -> Result<(SigningKey, Option<KeyPaths>)> {
    let paths = KeyPaths::in_home(home);
    if paths.private.exists() {
        return Ok((load_signing_key(&paths.private)?, None));
    }
    let dir = paths
        .private
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(io_err("cannot create", &dir))?;
    let key = random_signing_key()?;
    let unique = format!(
        "{}.{}",
        std::process::id(),
        hex::encode(&key.to_bytes()[..4])
    );
    let tmp_private = dir.join(format!(".{PRIVATE_KEY_FILE}.{unique}.tmp"));
    write_private(&tmp_private, private_pem(&key, &paths.private)?.as_bytes())?;
    let published = std::fs::hard_link(&tmp_private, &paths.private);
    let _ = std::fs::remove_file(&tmp_private);
    match published {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Ok((load_signing_key(&paths.private)?, None));
        }
        Err(e) => return Err(io_err("cannot write", &paths.private)(e)),
    }
    let tmp_public = dir.join(format!(".{PUBLIC_KEY_FILE}.{unique}.tmp"));
    std::fs::write(&tmp_public, public_pem(&key, &paths.public)?)
        .map_err(io_err("cannot write", &tmp_public))?;
    std::fs::rename(&tmp_public, &paths.public).map_err(io_err("cannot write", &paths.public))?;
    Ok((key, Some(paths)))
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io_err("cannot write", path))?;
    // An existing file keeps its mode on open: set it explicitly.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(io_err("cannot chmod", path))?;
    file.write_all(bytes)
        .map_err(io_err("cannot write", path))?;
    file.sync_all().map_err(io_err("cannot sync", path))
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(io_err("cannot write", path))
}

/// Reads a PKCS#8 PEM private key.
pub fn load_signing_key(path: impl AsRef<Path>) -> Result<SigningKey> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(io_err("cannot read", path))?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| LedgerError::Key {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })
}

/// Reads a public key: SPKI PEM, or the raw key as 64 hex digits.
pub fn load_verifying_key(path: impl AsRef<Path>) -> Result<VerifyingKey> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(io_err("cannot read", path))?;
    parse_verifying_key(&text).map_err(|detail| LedgerError::Key {
        path: path.to_path_buf(),
        detail,
    })
}

/// Parses a public key from SPKI PEM text or 64 hex digits.
pub fn parse_verifying_key(text: &str) -> Result<VerifyingKey, String> {
    if text.contains("-----BEGIN PUBLIC KEY-----") {
        return VerifyingKey::from_public_key_pem(text.trim()).map_err(|e| e.to_string());
    }
    let bytes = hex::decode(text.trim()).map_err(|e| format!("not PEM or hex: {e}"))?;
    let raw: [u8; 32] = bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("key is {} bytes, want 32", b.len()))?;
    VerifyingKey::from_bytes(&raw).map_err(|e| e.to_string())
}

/// Loads the private key of a Tascer home, if it has one.
pub fn load_home_signing_key(home: impl AsRef<Path>) -> Result<Option<SigningKey>> {
    let paths = KeyPaths::in_home(home);
    if !paths.private.exists() {
        return Ok(None);
    }
    load_signing_key(&paths.private).map(Some)
}
