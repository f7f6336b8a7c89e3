//! Ledger entries and their hashes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::digest::sha256_hex;
use crate::jcs;

/// What an entry records. Serialized in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EntryKind {
    /// The session began: model, options digest, system prompt digest, and
    /// the id of the key that signs the session (or null).
    SessionStart,
    /// A user prompt.
    UserPrompt,
    /// A model response: digest of its content, usage, model.
    ModelResponse,
    /// A tool call was opened (appended before the tool runs).
    ToolCallOpened,
    /// A closed tool call: the full [`ToolRecord`](crate::ToolRecord).
    ToolRecord,
    /// A permission decision.
    PermissionDecision,
    /// A hook ran.
    HookExecution,
    /// A gate ran.
    GateResult,
    /// A checkpoint (e.g. the head was signed on request).
    Checkpoint,
    /// The session ended: usage, cost, status.
    SessionEnd,
}

impl EntryKind {
    /// Every kind, in declaration order.
    pub const ALL: [EntryKind; 10] = [
        EntryKind::SessionStart,
        EntryKind::UserPrompt,
        EntryKind::ModelResponse,
        EntryKind::ToolCallOpened,
        EntryKind::ToolRecord,
        EntryKind::PermissionDecision,
        EntryKind::HookExecution,
        EntryKind::GateResult,
        EntryKind::Checkpoint,
        EntryKind::SessionEnd,
    ];

    /// The snake_case name stored and hashed.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::SessionStart => "session_start",
            EntryKind::UserPrompt => "user_prompt",
            EntryKind::ModelResponse => "model_response",
            EntryKind::ToolCallOpened => "tool_call_opened",
            EntryKind::ToolRecord => "tool_record",
            EntryKind::PermissionDecision => "permission_decision",
            EntryKind::HookExecution => "hook_execution",
            EntryKind::GateResult => "gate_result",
            EntryKind::Checkpoint => "checkpoint",
            EntryKind::SessionEnd => "session_end",
        }
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not an [`EntryKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ledger entry kind {0:?}")]
pub struct UnknownKind(pub String);

impl FromStr for EntryKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EntryKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// One entry of a session's hash chain.
///
/// `hash = hex(sha256(jcs({seq, session_id, ts, kind, payload, prev_hash})))`:
/// every field but the hash itself is covered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Position in the session, from 1, without gaps.
    pub seq: u64,
    /// The session this entry belongs to.
    pub session_id: String,
    /// When it was appended: RFC 3339, UTC, milliseconds (`…T12:00:00.000Z`).
    pub ts: String,
    /// What it records.
    pub kind: EntryKind,
    /// The recorded data (any JSON with a canonical form).
    pub payload: Value,
    /// The previous entry's hash; 64 zeros for seq 1.
    pub prev_hash: String,
    /// Lowercase hex SHA-256 of the canonical entry without this field.
    pub hash: String,
}

impl LedgerEntry {
    /// Builds an entry and computes its hash.
    pub fn new(
        seq: u64,
        session_id: impl Into<String>,
        ts: impl Into<String>,
        kind: EntryKind,
        payload: Value,
        prev_hash: impl Into<String>,
    ) -> Result<Self, jcs::JcsError> {
        let mut entry = LedgerEntry {
            seq,
            session_id: session_id.into(),
            ts: ts.into(),
            kind,
            payload,
            prev_hash: prev_hash.into(),
            hash: String::new(),
        };
        entry.hash = entry.compute_hash()?;
        Ok(entry)
    }

    /// The canonical bytes the hash covers: JCS of the entry without `hash`.
    pub fn hashed_bytes(&self) -> Result<Vec<u8>, jcs::JcsError> {
        self.hashed_bytes_with_seq(self.seq)
    }

    /// The canonical bytes as they would be if the entry had sequence
    /// number `seq` (used to tell a moved entry from an edited one).
    pub fn hashed_bytes_with_seq(&self, seq: u64) -> Result<Vec<u8>, jcs::JcsError> {
        jcs::canonicalize(&json!({
            "seq": seq,
            "session_id": self.session_id,
            "ts": self.ts,
            "kind": self.kind.as_str(),
            "payload": self.payload,
            "prev_hash": self.prev_hash,
        }))
    }

    /// Recomputes the hash from the other fields.
    pub fn compute_hash(&self) -> Result<String, jcs::JcsError> {
        Ok(sha256_hex(&self.hashed_bytes()?))
    }

    /// The hash this entry would have at sequence number `seq`.
    pub fn compute_hash_with_seq(&self, seq: u64) -> Result<String, jcs::JcsError> {
        Ok(sha256_hex(&self.hashed_bytes_with_seq(seq)?))
    }

    /// True when the stored hash matches the recomputed one.
    pub fn hash_is_valid(&self) -> bool {
        self.compute_hash().is_ok_and(|h| h == self.hash)
    }
}

/// The current time as the ledger writes it: RFC 3339, UTC, milliseconds.
pub fn now_ts() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::GENESIS_PREV_HASH;

    #[test]
    fn hash_covers_every_field() {
        let e = LedgerEntry::new(
            1,
            "s",
            "2026-01-01T00:00:00.000Z",
            EntryKind::UserPrompt,
            json!({"text": "hi"}),
            GENESIS_PREV_HASH,
        )
        .unwrap();
        assert!(e.hash_is_valid());
        let expected = sha256_hex(
            br#"{"kind":"user_prompt","payload":{"text":"hi"},"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000","seq":1,"session_id":"s","ts":"2026-01-01T00:00:00.000Z"}"#,
        );
        assert_eq!(e.hash, expected);
        for edit in [
            |e: &mut LedgerEntry| e.seq = 2,
            |e: &mut LedgerEntry| e.session_id = "t".into(),
            |e: &mut LedgerEntry| e.ts = "2026-01-01T00:00:00.001Z".into(),
            |e: &mut LedgerEntry| e.kind = EntryKind::Checkpoint,
            |e: &mut LedgerEntry| e.payload = json!({"text": "ho"}),
            |e: &mut LedgerEntry| e.prev_hash = "1".repeat(64),
        ] {
            let mut copy = e.clone();
            edit(&mut copy);
            assert!(!copy.hash_is_valid());
        }
    }

    #[test]
    fn kind_names_round_trip() {
        for kind in EntryKind::ALL {
            assert_eq!(kind.as_str().parse::<EntryKind>().unwrap(), kind);
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                Value::String(kind.as_str().into())
            );
        }
        assert!("nope".parse::<EntryKind>().is_err());
    }
}
