//! The tool execution record.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_core::ToolOutput;

use crate::digest::sha256_hex;
use crate::jcs::{self, JcsError};

/// Outputs up to this size are kept inline in the tool record (besides
/// their evidence).
const INLINE_OUTPUT_LIMIT: usize = 4096;

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Opened, not (yet) closed: still running, or interrupted.
    Pending,
    /// Ran and every gate passed.
    Validated,
    /// Ran and failed, or a post-gate failed.
    Failed,
    /// Not run: denied by permission, a hook or a pre-gate.
    Blocked,
}

impl ToolStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Pending => "pending",
            ToolStatus::Validated => "validated",
            ToolStatus::Failed => "failed",
            ToolStatus::Blocked => "blocked",
        }
    }
}

/// The result of one gate (a check run before or after a tool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateOutcome {
    /// Gate name.
    pub gate: String,
    /// Whether it passed.
    pub passed: bool,
    /// What it said.
    #[serde(default)]
    pub message: String,
    /// How long it took.
    #[serde(default)]
    pub duration_ms: u64,
}

/// Everything recorded about one tool call, appended as a
/// [`EntryKind::ToolRecord`](crate::EntryKind::ToolRecord) entry when the
/// call closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// The model's `tool_use` id.
    pub tool_use_id: String,
    /// Tool name.
    pub tool: String,
    /// Tool input as the model sent it.
    pub input: Value,
    /// The output inline, when small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// `sha256:<hex>` of the output, when it is kept as evidence instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_digest: Option<String>,
    /// Evidence files (`sha256:<hex>`) this record refers to; verification
    /// checks each against the evidence store.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The evidence the tool's validation asked for, by kind (`stdout`,
    /// `stderr`, `diff`, `file`): each digest is also in
    /// [`evidence`](Self::evidence), where verification checks it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub evidence_by_kind: BTreeMap<String, Vec<String>>,
    /// When the tool started (RFC 3339 UTC).
    pub started_at: String,
    /// When it finished, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Execution context: git state, environment, cwd, versions (free form).
    #[serde(default)]
    pub context: Value,
    /// Gates run before the tool.
    #[serde(default)]
    pub pre_gates: Vec<GateOutcome>,
    /// Gates run after the tool.
    #[serde(default)]
    pub post_gates: Vec<GateOutcome>,
    /// The permission decision (free form for now).
    #[serde(default)]
    pub permission: Value,
    /// Hook runs (free form for now).
    #[serde(default)]
    pub hooks: Vec<Value>,
    /// Where the call stands.
    pub status: ToolStatus,
    /// `hex(sha256(jcs(record without proof_hash)))`, set by
    /// [`seal`](ToolRecord::seal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_hash: Option<String>,
}

impl ToolRecord {
    /// A pending record for a call that is about to run.
    pub fn open(
        tool_use_id: impl Into<String>,
        tool: impl Into<String>,
        input: Value,
        started_at: impl Into<String>,
    ) -> Self {
        ToolRecord {
            tool_use_id: tool_use_id.into(),
            tool: tool.into(),
            input,
            output: None,
            output_digest: None,
            evidence: Vec::new(),
            evidence_by_kind: BTreeMap::new(),
            started_at: started_at.into(),
            finished_at: None,
            context: Value::Null,
            pre_gates: Vec::new(),
            post_gates: Vec::new(),
            permission: Value::Null,
            hooks: Vec::new(),
            status: ToolStatus::Pending,
            proof_hash: None,
        }
    }

    /// Fills in how the call ended: `digest` of the output's evidence
    /// (`text`, the output as text), the output inline when small (its
    /// raw value, else `text`), the end time and `status`.
    pub fn finish(
        &mut self,
        output: &ToolOutput,
        text: String,
        digest: String,
        status: ToolStatus,
    ) {
        self.output_digest = Some(digest.clone());
        self.evidence.push(digest);
        if let Some(raw) = &output.raw
            && raw.to_string().len() <= INLINE_OUTPUT_LIMIT
        {
            self.output = Some(raw.clone());
        } else if text.len() <= INLINE_OUTPUT_LIMIT {
            self.output = Some(Value::String(text));
        }
        self.finished_at =
            Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        self.status = status;
    }

    /// Lists `digest` as evidence of `kind` (once in
    /// [`evidence`](Self::evidence), however many kinds share it).
    pub fn add_evidence(&mut self, kind: &str, digest: String) {
        if !self.evidence.contains(&digest) {
            self.evidence.push(digest.clone());
        }
        self.evidence_by_kind
            .entry(kind.to_string())
            .or_default()
            .push(digest);
    }

    /// The record's own digest: hex SHA-256 of its canonical JSON without
    /// `proof_hash`.
    pub fn compute_proof_hash(&self) -> Result<String, JcsError> {
        let mut copy = self.clone();
        copy.proof_hash = None;
        Ok(sha256_hex(&jcs::canonicalize_serialize(&copy)?))
    }

    /// Sets `proof_hash` from the current content.
    pub fn seal(&mut self) -> Result<(), JcsError> {
        self.proof_hash = Some(self.compute_proof_hash()?);
        Ok(())
    }

    /// True when `proof_hash` is set and matches the content.
    pub fn proof_is_valid(&self) -> bool {
        match &self.proof_hash {
            Some(h) => self.compute_proof_hash().is_ok_and(|c| &c == h),
            None => false,
        }
    }

    /// True when every pre- and post-gate passed.
    pub fn gates_passed(&self) -> bool {
        self.pre_gates
            .iter()
            .chain(&self.post_gates)
            .all(|g| g.passed)
    }

    /// The payload JSON (NaN and infinities are rejected).
    pub fn to_payload(&self) -> Result<Value, JcsError> {
        jcs::to_value_strict(self)
    }
}
