//! The messages a run yields. Serialized, each is one Claude Code
//! `stream-json` frame (see `shared/reference/claude-compat.md` §2.3).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::ContentBlock;
use crate::conversation::StopReason;
use crate::usage::{ModelUsage, Usage};

/// One message of a run, tagged by `type` as on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// A user frame: a prompt or tool results.
    User(UserMessage),
    /// An assistant frame: one model response (or part of one).
    Assistant(AssistantMessage),
    /// A system frame such as `init`.
    System(SystemMessage),
    /// The closing frame of a turn.
    Result(ResultMessage),
    /// A raw streaming event (only with `include_partial_messages`).
    StreamEvent(StreamEvent),
}

impl Message {
    /// The session id every frame carries.
    pub fn session_id(&self) -> &str {
        match self {
            Message::User(m) => &m.session_id,
            Message::Assistant(m) => &m.session_id,
            Message::System(m) => &m.session_id,
            Message::Result(m) => &m.session_id,
            Message::StreamEvent(m) => &m.session_id,
        }
    }

    /// The uuid every frame carries.
    pub fn uuid(&self) -> &str {
        match self {
            Message::User(m) => &m.uuid,
            Message::Assistant(m) => &m.uuid,
            Message::System(m) => &m.uuid,
            Message::Result(m) => &m.uuid,
            Message::StreamEvent(m) => &m.uuid,
        }
    }

    /// The result, if this is the closing frame.
    pub fn as_result(&self) -> Option<&ResultMessage> {
        match self {
            Message::Result(r) => Some(r),
            _ => None,
        }
    }
}

/// The content of a user message: a plain string or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// A plain prompt.
    Text(String),
    /// Blocks, e.g. tool results.
    Blocks(Vec<ContentBlock>),
}

impl UserContent {
    /// The content as blocks.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            UserContent::Text(t) => vec![ContentBlock::text(t)],
            UserContent::Blocks(b) => b,
        }
    }
}

/// `message` of a user frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserPayload {
    /// Always `"user"`.
    pub role: String,
    /// The content.
    pub content: UserContent,
}

/// A user frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The message.
    pub message: UserPayload,
    /// Set when the message belongs to a subagent run.
    pub parent_tool_use_id: Option<String>,
    /// Session id.
    pub session_id: String,
    /// Unique id of this frame.
    pub uuid: String,
    /// Raw tool output, for tool-result frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<Value>,
}

impl UserMessage {
    /// A user frame with the given content.
    pub fn new(content: UserContent, session_id: &str) -> Self {
        UserMessage {
            message: UserPayload {
                role: "user".into(),
                content,
            },
            parent_tool_use_id: None,
            session_id: session_id.to_string(),
            uuid: crate::new_id(),
            tool_use_result: None,
        }
    }
}

/// `message` of an assistant frame: the API message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiAssistantMessage {
    /// Provider message id.
    pub id: String,
    /// Always `"message"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Always `"assistant"`.
    pub role: String,
    /// The model that answered.
    pub model: String,
    /// Content blocks.
    pub content: Vec<ContentBlock>,
    /// Why the model stopped (null while streaming).
    pub stop_reason: Option<StopReason>,
    /// Which stop sequence matched, if any.
    pub stop_sequence: Option<String>,
    /// Usage of the call that produced this message.
    pub usage: Usage,
}

/// An assistant frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The API message.
    pub message: ApiAssistantMessage,
    /// Set when the message belongs to a subagent run.
    pub parent_tool_use_id: Option<String>,
    /// Session id.
    pub session_id: String,
    /// Unique id of this frame.
    pub uuid: String,
}

impl AssistantMessage {
    /// All text blocks, joined.
    pub fn text(&self) -> String {
        self.message
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("")
    }
}

/// A system frame. `init` carries `cwd`, `tools`, `model`, `permissionMode`,
/// `mcp_servers`, `apiKeySource` … in `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemMessage {
    /// e.g. `init`, `api_retry`.
    pub subtype: String,
    /// Session id.
    pub session_id: String,
    /// Unique id of this frame.
    pub uuid: String,
    /// Every other field of the frame.
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSubtype {
    /// The turn finished (also used for API errors, with `is_error`).
    Success,
    /// `max_turns` was reached.
    ErrorMaxTurns,
    /// `max_budget_usd` was reached.
    ErrorMaxBudgetUsd,
    /// Something failed during execution (including interrupts).
    ErrorDuringExecution,
    /// The final answer never matched the output schema within the allowed
    /// fix requests.
    ErrorMaxStructuredOutputRetries,
}

/// A tool call that permissions denied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    /// Tool name.
    pub tool_name: String,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The input the model asked for.
    pub tool_input: Value,
}

/// The closing frame of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultMessage {
    /// How the turn ended.
    pub subtype: ResultSubtype,
    /// Whether it ended in error.
    pub is_error: bool,
    /// Wall time of the turn, ms.
    pub duration_ms: u64,
    /// Time spent waiting on the model API, ms.
    pub duration_api_ms: u64,
    /// Model calls made in the turn.
    pub num_turns: u32,
    /// The final text, or the error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The last API stop reason.
    pub stop_reason: Option<StopReason>,
    /// Session id.
    pub session_id: String,
    /// Cost of the session so far, USD (cumulative), its child sessions'
    /// (contracts run by a manager) included.
    pub total_cost_usd: f64,
    /// Models called whose cost is unknown (no price, and the provider
    /// reported none): `total_cost_usd` leaves them out, so it is a lower
    /// bound. Empty when every cost is known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Usage of this turn.
    pub usage: Usage,
    /// Cumulative usage per model.
    #[serde(rename = "modelUsage", default)]
    pub model_usage: Map<String, Value>,
    /// Calls denied by permissions.
    #[serde(default)]
    pub permission_denials: Vec<PermissionDenial>,
    /// Error texts, when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// HTTP status of an API failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<u16>,
    /// Why the turn ended, e.g. `completed`, `max_turns`, `aborted_tools`.
    pub terminal_reason: String,
    /// The final answer as JSON, valid against the session's output
    /// schema (only with structured output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    /// Unique id of this frame.
    pub uuid: String,
}

impl ResultMessage {
    /// Records per-model usage in `modelUsage`.
    pub fn set_model_usage(&mut self, per_model: &[(String, ModelUsage)]) {
        self.model_usage = per_model
            .iter()
            .map(|(name, u)| (name.clone(), serde_json::to_value(u).unwrap_or(Value::Null)))
            .collect();
    }
}

/// A raw streaming event, forwarded with `include_partial_messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    /// Unique id of this frame.
    pub uuid: String,
    /// Session id.
    pub session_id: String,
    /// The event, in Anthropic's SSE event shape.
    pub event: Value,
    /// Set when the event belongs to a subagent run.
    pub parent_tool_use_id: Option<String>,
}
