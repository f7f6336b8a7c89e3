//! in-toto Statement v1.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::digest::sha256_hex;
use crate::error::{Result, io_err};
use crate::jcs;

/// `_type` of an in-toto Statement v1.
pub const STATEMENT_V1: &str = "https://in-toto.io/Statement/v1";

/// Tascer's predicate type: a session summary plus its ledger head.
pub const SESSION_PREDICATE_TYPE: &str = "https://tascer.dev/attestation/session/v1";

/// An artifact the statement is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// Name (a path relative to the workspace, or a URI).
    pub name: String,
    /// Digests by algorithm (`sha256` → lowercase hex).
    pub digest: BTreeMap<String, String>,
}

impl Subject {
    /// A subject with a SHA-256 digest.
    pub fn sha256(name: impl Into<String>, hex: impl Into<String>) -> Self {
        Subject {
            name: name.into(),
            digest: BTreeMap::from([("sha256".to_string(), hex.into())]),
        }
    }

    /// A subject for bytes.
    pub fn from_bytes(name: impl Into<String>, bytes: &[u8]) -> Self {
        Subject::sha256(name, sha256_hex(bytes))
    }

    /// A subject for a file's current content.
    pub fn from_file(name: impl Into<String>, path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(io_err("cannot read", path))?;
        Ok(Subject::from_bytes(name, &bytes))
    }
}

/// An in-toto Statement v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// Always [`STATEMENT_V1`].
    #[serde(rename = "_type")]
    pub type_: String,
    /// The artifacts.
    pub subject: Vec<Subject>,
    /// What the predicate means.
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    /// The claim.
    pub predicate: Value,
}

impl Statement {
    /// A Statement v1.
    pub fn new(subject: Vec<Subject>, predicate_type: impl Into<String>, predicate: Value) -> Self {
        Statement {
            type_: STATEMENT_V1.to_string(),
            subject,
            predicate_type: predicate_type.into(),
            predicate,
        }
    }

    /// The canonical (RFC 8785) bytes used as the DSSE payload.
    pub fn to_canonical(&self) -> Result<Vec<u8>> {
        Ok(jcs::canonicalize_serialize(self)?)
    }
}
