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

/// Payload of [`EntryKind::ModelResponse`](crate::EntryKind::ModelResponse).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
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

to_payload!(SessionStart, ModelResponse, SessionEnd);
