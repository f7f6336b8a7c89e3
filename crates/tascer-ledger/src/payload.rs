//! Typed payloads for the common entry kinds.
//!
//! Entries store their payload as free JSON; these types give the loop a
//! checked shape for the kinds whose fields the design fixes. Each turns
//! into a payload with [`to_payload`](SessionStart::to_payload).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_core::Usage;

use crate::jcs::{self, JcsError};

/// Payload of [`EntryKind::SessionStart`](crate::EntryKind::SessionStart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStart {
    /// The model the session starts with.
    pub model: String,
    /// `sha256:<hex>` of the canonical JSON of the session options.
    pub options_digest: String,
    /// `sha256:<hex>` of the system prompt text.
    pub system_prompt_digest: String,
    /// Key id of the key that signs this session's head, or `None`.
    ///
    /// [`Ledger::append`](crate::Ledger::append) fills it in from the
    /// configured key; verification then requires a valid head signature.
    pub signing_key_id: Option<String>,
    /// Working directory, Tascer version, … (free form).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
}

/// Payload of [`EntryKind::ModelResponse`](crate::EntryKind::ModelResponse):
/// what the ledger records of a model call's response (a digest of its
/// content, not the content; `tascer_model::ModelResponse` is the response
/// itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponsePayload {
    /// `sha256:<hex>` of the canonical JSON of the response content blocks.
    pub content_digest: String,
    /// Token usage of the call.
    pub usage: Usage,
    /// The model that answered.
    pub model: String,
    /// Evidence files holding the content, if stored (`sha256:<hex>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Set for a subagent's model call: the `tool_use` id of the Task call
    /// that runs it (main-loop calls leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
    /// How long the provider took to answer (all attempts), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The call's cost in US dollars, when known (the provider's figure,
    /// else the usage at the model's price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Set for a call made to answer an MCP server's sampling request:
    /// the server's name. Such a call is not a turn of the session and
    /// leaves no assistant message in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_sampling_server: Option<String>,
}

/// Payload of [`EntryKind::SessionEnd`](crate::EntryKind::SessionEnd).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEnd {
    /// Total usage.
    pub usage: Usage,
    /// Total cost in US dollars.
    pub cost_usd: f64,
    /// `success`, `error_max_turns`, `interrupted`, …
    pub status: String,
    /// Number of model calls.
    #[serde(default)]
    pub num_turns: u32,
}

/// Payload of [`EntryKind::ReviewerVerdict`](crate::EntryKind::ReviewerVerdict):
/// what one LLM reviewer said and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewerVerdict {
    /// `tool-approve`, `tool-appeal`, `error-acknowledge`,
    /// `plan-validate`, `style-drift`, `claude-md-validate` or
    /// `intent-validate`.
    pub reviewer: String,
    /// The model asked (empty when none was asked: a skipped review).
    pub model: String,
    /// The verdict acted on: the reviewer's own (`allow`/`deny`,
    /// `acknowledged`/`unacknowledged`, `complete`/`incomplete`), or the
    /// one its fail mode stood in for.
    pub verdict: String,
    /// The reviewer's reason, or what went wrong.
    pub reason: String,
    /// `decided` (the reviewer answered), `failed_open` / `failed_closed`
    /// (it did not: timeout, provider error, malformed answer; the fail
    /// mode decided) or `skipped` (a limit was reached; nothing asked).
    pub outcome: String,
    /// What went wrong, when the review failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the review took, model call included.
    pub duration_ms: u64,
    /// True when the verdict came from the review cache (no model call).
    pub cache_hit: bool,
    /// The tool call reviewed (none for a Stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Its tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Token usage of the model call (none on a cache hit or a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

macro_rules! to_payload {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// The payload JSON (NaN and infinities are rejected).
            pub fn to_payload(&self) -> Result<Value, JcsError> {
                jcs::to_value_strict(self)
            }
        }
    )*};
}

to_payload!(
    SessionStart,
    ModelResponsePayload,
    SessionEnd,
    ReviewerVerdict
);
