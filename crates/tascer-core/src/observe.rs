//! What the loop and the hosts report about a session as it runs, for an
//! [`Observer`] (OpenTelemetry in `tascer-telemetry`, docs/telemetry.md).
//!
//! The facts are plain data, filled in after the fact (a call's facts are
//! reported when its record is closed): an observer never sits inside a
//! tool call, and the code that reports knows nothing of exporters.

use std::time::SystemTime;

use crate::Usage;

/// Receives the facts of sessions as they happen. Every method has an
/// empty default; an implementation must return quickly (queue, never
/// wait on the network).
pub trait Observer: Send + Sync {
    /// A session was opened (once per process and session).
    fn session_opened(&self, _session: &SessionFacts) {}
    /// One prompt starts running through the agent loop (an agent
    /// invocation).
    fn agent_started(&self, _agent: &AgentFacts) {}
    /// One model call ended (answered or failed).
    fn model_call(&self, _call: &ModelCallFacts) {}
    /// One tool call ended: its record is closed in the ledger.
    fn tool_call(&self, _call: &ToolCallFacts) {}
    /// The agent invocation [`agent_started`](Self::agent_started) named
    /// ended.
    fn agent_ended(&self, _agent: &AgentEndFacts) {}
}

/// A session, as it is opened.
#[derive(Debug, Clone, Default)]
pub struct SessionFacts {
    /// The session id (for Claude Code, its `session_id`).
    pub session_id: String,
    /// Who runs the tools: `tascer` (the loop) or `claude-code` (`tascer hook`).
    pub host: String,
    /// The model (empty when not known, as under `tascer hook`).
    pub model: String,
    /// The provider (`anthropic`, `openai`), when known.
    pub provider: String,
}

/// An agent invocation: one prompt run to its result.
#[derive(Debug, Clone, Default)]
pub struct AgentFacts {
    /// The session it belongs to.
    pub session_id: String,
    /// The model asked.
    pub model: String,
    /// The provider (`anthropic`, `openai`).
    pub provider: String,
    /// The digest of the options and settings that govern the session
    /// (the ledger's `options_digest`), `sha256:…`.
    pub policy_digest: Option<String>,
    /// The Task call that started it, for a subagent.
    pub parent_tool_use_id: Option<String>,
    /// When it started.
    pub start: Option<SystemTime>,
}

/// How an agent invocation ended.
#[derive(Debug, Clone, Default)]
pub struct AgentEndFacts {
    /// The session it belongs to.
    pub session_id: String,
    /// `success` or `error`.
    pub status: String,
    /// The result's subtype (`success`, `error_max_turns`, …).
    pub subtype: String,
    /// Model calls made.
    pub num_turns: u32,
    /// Tokens used by the invocation's model calls.
    pub usage: Usage,
    /// What the session has cost so far, USD.
    pub cost_usd: f64,
    /// When it started, for a host that reports the invocation only at
    /// its end (`tascer hook`); `None` when [`Observer::agent_started`]
    /// said it.
    pub start: Option<SystemTime>,
    /// When it ended.
    pub end: Option<SystemTime>,
}

/// One model call.
#[derive(Debug, Clone, Default)]
pub struct ModelCallFacts {
    /// The session it belongs to.
    pub session_id: String,
    /// The provider (`anthropic`, `openai`).
    pub provider: String,
    /// The model asked.
    pub request_model: String,
    /// The model that answered (empty on an error).
    pub response_model: String,
    /// The provider's message id.
    pub response_id: String,
    /// Tokens used.
    pub usage: Usage,
    /// What it cost, USD, when priced.
    pub cost_usd: Option<f64>,
    /// Why the model stopped (`end_turn`, `tool_use`, …).
    pub finish_reason: Option<String>,
    /// HTTP attempts made.
    pub attempts: u32,
    /// The error, for a call that failed.
    pub error: Option<String>,
    /// When the call started.
    pub start: Option<SystemTime>,
    /// When the call ended.
    pub end: Option<SystemTime>,
}

/// The permission decision of a tool call and who made it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecisionFacts {
    /// `allow`, `deny` or `ask`.
    pub behavior: String,
    /// Who decided: `rule`, `mode`, `policy`, `hook`, `callback`,
    /// `reviewer`, `user`, `cache`, `workaround`, `default`.
    pub source: String,
    /// The rule, mode, policy, hook or reviewer that decided, when named.
    pub source_name: Option<String>,
    /// Why.
    pub reason: String,
}

/// One gate's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateFacts {
    /// The gate's name.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// Its message.
    pub message: String,
    /// `pre` or `post`.
    pub phase: String,
}

/// One LLM reviewer's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerdictFacts {
    /// The reviewer (`tool-approve`, …).
    pub reviewer: String,
    /// Whether it passed the call.
    pub passed: bool,
    /// Its reason.
    pub reason: String,
}

/// One hook run of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookFacts {
    /// The hook event (`PreToolUse`, …).
    pub event: String,
    /// How it ended (`success`, `blocking`, …), as recorded.
    pub outcome: String,
    /// How long it ran, milliseconds.
    pub duration_ms: u64,
}

/// One tool call, as its closed record tells it.
#[derive(Debug, Clone, Default)]
pub struct ToolCallFacts {
    /// The session it belongs to.
    pub session_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The model's (or Claude Code's) `tool_use` id.
    pub tool_use_id: String,
    /// `function` for a built-in or custom tool, `extension` for an MCP tool.
    pub tool_type: String,
    /// The tool's input as recorded.
    pub input: serde_json::Value,
    /// The permission decision, when one was made.
    pub decision: Option<DecisionFacts>,
    /// Whether the tool ran (false when it was refused).
    pub ran: bool,
    /// The record's status: `validated`, `failed` or `blocked`.
    pub status: String,
    /// The tool's output was an error.
    pub is_error: bool,
    /// The error text (or refusal) for a call that did not succeed.
    pub error: Option<String>,
    /// Gate results, pre and post.
    pub gates: Vec<GateFacts>,
    /// LLM reviewer verdicts on the call.
    pub verdicts: Vec<VerdictFacts>,
    /// Hook runs.
    pub hooks: Vec<HookFacts>,
    /// The hash of the ledger entry that closed the call's record.
    pub ledger_hash: Option<String>,
    /// The digest of the options and settings that governed the call.
    pub policy_digest: Option<String>,
    /// When the call started.
    pub start: Option<SystemTime>,
    /// When it ended.
    pub end: Option<SystemTime>,
}
