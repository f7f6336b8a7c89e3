//! Ledger entries and their hashes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// An LLM reviewer's verdict (tool-approve, tool-appeal,
    /// error-acknowledge, plan-validate, style-drift, claude-md-validate,
    /// intent-validate): reviewer, model, verdict,
    /// reason, duration, cache hit, and what a failure fell back to.
    ReviewerVerdict,
}

impl EntryKind {
    /// Every kind, in declaration order.
    pub const ALL: [EntryKind; 11] = [
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
        EntryKind::ReviewerVerdict,
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
            EntryKind::ReviewerVerdict => "reviewer_verdict",
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
    /// Parses a stored row into an entry (hash not checked); `Err` says
    /// what is malformed.
    pub fn from_row(row: &tascer_store::EntryRow) -> Result<Self, String> {
        let seq = u64::try_from(row.seq).map_err(|_| format!("negative seq {}", row.seq))?;
        let kind: EntryKind = row.kind.parse().map_err(|e| format!("{e}"))?;
        let payload: Value =
            serde_json::from_str(&row.payload).map_err(|e| format!("payload is not JSON: {e}"))?;
        Ok(LedgerEntry {
            seq,
            session_id: row.session_id.clone(),
            ts: row.ts.clone(),
            kind,
            payload,
            prev_hash: row.prev_hash.clone(),
            hash: row.hash.clone(),
        })
    }

    /// Builds an entry and computes its hash.
    pub fn new(
        seq: u64,
        session_id: impl Into<String>,
        ts: impl Into<String>,
        kind: EntryKind,
        payload: Value,
        prev_hash: impl Into<String>,
    ) -> Result<Self, jcs::JcsError> {
        let payload_text = jcs::canonical_string(&payload)?;
        Self::with_canonical_payload(seq, session_id, ts, kind, payload, &payload_text, prev_hash)
    }

    /// [`new`](Self::new) when the payload's canonical JSON is already at
    /// hand (`payload_text`, which must be `jcs::canonical_string(&payload)`):
    /// the payload is not canonicalized again.
    pub fn with_canonical_payload(
        seq: u64,
        session_id: impl Into<String>,
        ts: impl Into<String>,
        kind: EntryKind,
        payload: Value,
        payload_text: &str,
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
        entry.hash = sha256_hex(&entry.hashed_bytes_from(seq, payload_text)?);
        Ok(entry)
    }

    /// The canonical bytes the hash covers: JCS of the entry without `hash`.
    pub fn hashed_bytes(&self) -> Result<Vec<u8>, jcs::JcsError> {
        self.hashed_bytes_with_seq(self.seq)
    }

    /// The canonical bytes as they would be if the entry had sequence
    /// number `seq` (used to tell a moved entry from an edited one).
    pub fn hashed_bytes_with_seq(&self, seq: u64) -> Result<Vec<u8>, jcs::JcsError> {
        self.hashed_bytes_from(seq, &jcs::canonical_string(&self.payload)?)
    }

    /// JCS of `{seq, session_id, ts, kind, payload, prev_hash}`, written
    /// member by member in JCS key order around the payload's canonical
    /// text (the same bytes as canonicalizing the whole object, without
    /// copying the payload).
    fn hashed_bytes_from(&self, seq: u64, payload_text: &str) -> Result<Vec<u8>, jcs::JcsError> {
        let mut out = String::with_capacity(payload_text.len() + 256);
        out.push_str("{\"kind\":");
        jcs::push_string(&mut out, self.kind.as_str());
        out.push_str(",\"payload\":");
        out.push_str(payload_text);
        out.push_str(",\"prev_hash\":");
        jcs::push_string(&mut out, &self.prev_hash);
        out.push_str(",\"seq\":");
        jcs::push_value(&mut out, &Value::from(seq))?;
        out.push_str(",\"session_id\":");
        jcs::push_string(&mut out, &self.session_id);
        out.push_str(",\"ts\":");
        jcs::push_string(&mut out, &self.ts);
        out.push('}');
        Ok(out.into_bytes())
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
    use serde_json::json;

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

    /// The member-by-member writer gives the same bytes as canonicalizing
    /// the whole object, also for strings that need escaping.
    #[test]
    fn hashed_bytes_equal_canonical_json_of_the_object() {
        let payload = json!({"z": [1, 2.5, "é\u{1}"], "a": {"\"q\"": null, "n": -0.0}});
        let e = LedgerEntry::new(
            9_007_199_254_740_991,
            "sess \"α\"\n\u{7f}😀",
            "2026-01-01T00:00:00.000Z",
            EntryKind::ToolRecord,
            payload.clone(),
            "ab".repeat(32),
        )
        .unwrap();
        let whole = jcs::canonicalize(&json!({
            "seq": e.seq,
            "session_id": e.session_id,
            "ts": e.ts,
            "kind": e.kind.as_str(),
            "payload": payload,
            "prev_hash": e.prev_hash,
        }))
        .unwrap();
        assert_eq!(e.hashed_bytes().unwrap(), whole);
        assert_eq!(e.hash, sha256_hex(&whole));
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
