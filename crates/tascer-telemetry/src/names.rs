//! Every name Tascer's telemetry emits (docs/telemetry.md lists them with
//! their attributes): the GenAI semantic conventions' span names and
//! attributes (their latest experimental names), Tascer's own attributes,
//! and Claude Code's metric and event names.

/// The span of one agent invocation (a prompt run to its result).
pub const SPAN_INVOKE_AGENT: &str = "invoke_agent";
/// The span of one model call: `chat {model}`.
pub const SPAN_CHAT: &str = "chat";
/// The span of one tool call: `execute_tool {name}`.
pub const SPAN_EXECUTE_TOOL: &str = "execute_tool";

/// `gen_ai.operation.name`: `invoke_agent`, `chat`, `execute_tool`.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name` (latest experimental; was `gen_ai.system`).
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.system`, the older name, still sent for older dashboards.
pub const GEN_AI_SYSTEM: &str = "gen_ai.system";
/// `gen_ai.request.model`.
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`.
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.id`.
pub const GEN_AI_RESPONSE_ID: &str = "gen_ai.response.id";
/// `gen_ai.response.finish_reasons` (a string array).
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`.
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`.
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.conversation.id`: the session id.
pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.agent.name`.
pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.tool.name`.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`.
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: `function` or `extension` (MCP).
pub const GEN_AI_TOOL_TYPE: &str = "gen_ai.tool.type";
/// `error.type`, on a span that failed.
pub const ERROR_TYPE: &str = "error.type";

/// `session.id` (Claude Code's attribute name; the session id).
pub const SESSION_ID: &str = "session.id";
/// `tascer.host`: `tascer` or `claude-code`.
pub const TASCER_HOST: &str = "tascer.host";
/// `tascer.permission.decision`: `allow`, `deny`, `ask`.
pub const TASCER_DECISION: &str = "tascer.permission.decision";
/// `tascer.permission.source`: who decided (`rule`, `mode`, `policy`,
/// `hook`, `callback`, `reviewer`, `user`, `cache`, `workaround`,
/// `default`).
pub const TASCER_DECISION_SOURCE: &str = "tascer.permission.source";
/// `tascer.permission.source_name`: the rule, mode, policy, hook or
/// reviewer that decided.
pub const TASCER_DECISION_SOURCE_NAME: &str = "tascer.permission.source_name";
/// `tascer.permission.reason`.
pub const TASCER_DECISION_REASON: &str = "tascer.permission.reason";
/// `tascer.tool.status`: `validated`, `failed`, `blocked`.
pub const TASCER_TOOL_STATUS: &str = "tascer.tool.status";
/// `tascer.gates.passed` / `tascer.gates.failed`: gate names.
pub const TASCER_GATES_PASSED: &str = "tascer.gates.passed";
/// Gates that failed.
pub const TASCER_GATES_FAILED: &str = "tascer.gates.failed";
/// `tascer.reviewers`: `reviewer=pass|fail` per verdict.
pub const TASCER_REVIEWERS: &str = "tascer.reviewers";
/// `tascer.ledger.entry_hash`: the hash of the ledger entry that closed
/// the call's record.
pub const TASCER_LEDGER_HASH: &str = "tascer.ledger.entry_hash";
/// `tascer.policy.digest`: the digest of the options and settings.
pub const TASCER_POLICY_DIGEST: &str = "tascer.policy.digest";
/// `tascer.cost_usd`.
pub const TASCER_COST_USD: &str = "tascer.cost_usd";

/// Span events: one per gate (`tascer.gate`), reviewer verdict
/// (`tascer.reviewer`) and hook run (`tascer.hook`).
pub const EVENT_GATE: &str = "tascer.gate";
/// A reviewer's verdict.
pub const EVENT_REVIEWER: &str = "tascer.reviewer";
/// A hook run.
pub const EVENT_HOOK: &str = "tascer.hook";

/// Claude Code's metric: sessions started.
pub const METRIC_SESSION_COUNT: &str = "claude_code.session.count";
/// Claude Code's metric: tokens (`type`: input, output, cacheRead,
/// cacheCreation; `model`).
pub const METRIC_TOKEN_USAGE: &str = "claude_code.token.usage";
/// Claude Code's metric: cost, USD (`model`).
pub const METRIC_COST_USAGE: &str = "claude_code.cost.usage";
/// Claude Code's metric: lines changed (`type`: added, removed).
pub const METRIC_LINES_OF_CODE: &str = "claude_code.lines_of_code.count";
/// Claude Code's metric: edit-tool permission decisions (`tool_name`,
/// `decision`: accept, reject; `source`; `language`).
pub const METRIC_CODE_EDIT_DECISION: &str = "claude_code.code_edit_tool.decision";

/// Claude Code's event: a permission decision on a tool call.
pub const EVENT_TOOL_DECISION: &str = "claude_code.tool_decision";
/// Claude Code's event: a tool call's result.
pub const EVENT_TOOL_RESULT: &str = "claude_code.tool_result";
/// Claude Code's event: a model call that answered.
pub const EVENT_API_REQUEST: &str = "claude_code.api_request";
/// Claude Code's event: a model call that failed.
pub const EVENT_API_ERROR: &str = "claude_code.api_error";
