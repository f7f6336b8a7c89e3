//! The server as MCP clients see it: its name, instructions, and each
//! tool's name, description, input schema and annotations, bound to its
//! handler on the shared [`Server`].

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tascer_mcp::{McpServerSpec, ServeToolResult, ServedTool, ToolCallContext};

use crate::events::collect_agents;
use crate::server::Server;

/// What the server tells clients about itself.
const INSTRUCTIONS: &str = "Tascer's gate chain for a git repository (each tool takes \
`working_dir`, the work tree to act on): `commit` runs `check` (the project's lint and test \
commands) and `confirm` (a reviewer model's verdict on the diff) for the working tree as it is, \
and commits only when both pass; `check` and `confirm` can also be called on their own. `push` \
pushes. `validate_intent` reports drift from the user's request (a Claude Code session's \
transcript or a Tascer session); `sessions_list`, `session_report` and `session_verify` read \
Tascer's session store and signed ledger.";

/// The gatekeeper's MCP server (what `tascer mcp serve` serves): the
/// tools `check`, `confirm`, `commit`, `push`, `validate_intent`,
/// `sessions_list`, `session_report` and `session_verify`, working on the
/// repository at `cwd` (or the `working_dir` a call names, relative to it) and on
/// the session store and ledger of the Tascer home `home`. Serve it with
/// [`tascer_mcp::serve_stdio`] or [`tascer_mcp::HttpServer`].
///
/// The server keeps, per repository, the last check and confirm with the
/// working-tree state they were made for, and records every gate in a
/// ledger session of its own (`mcp-serve-<uuid>`).
pub fn server_spec(cwd: PathBuf, home: PathBuf) -> McpServerSpec {
    let server = Arc::new(Server::new(cwd, home));
    let spec = McpServerSpec::new("tascer", tascer::VERSION).instructions(INSTRUCTIONS);
    gate_tools(&server)
        .into_iter()
        .chain(audit_tools(&server))
        .fold(spec, McpServerSpec::tool)
}

/// `working_dir`: the framework's name for the directory a tool works in.
fn working_dir_prop() -> Value {
    json!({"type": "string", "description": "The git work tree to work in: an absolute path, or one relative to the server's working directory (default: the server's working directory)"})
}

/// `path`: the older name, relative to `working_dir`.
fn path_prop() -> Value {
    json!({"type": "string", "description": "A directory of the repository, relative to working_dir (kept for older callers)"})
}

/// Registers one tool whose handler calls `f` on the shared server, then
/// queues the call's `McpToolCall` event for the webhooks (see
/// `events.rs`).
fn tool<F, Fut>(
    server: &Arc<Server>,
    name: &str,
    description: &str,
    schema: Value,
    read_only: bool,
    f: F,
) -> ServedTool
where
    F: Fn(Arc<Server>, Map<String, Value>, ToolCallContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ServeToolResult> + Send + 'static,
{
    let server = server.clone();
    let tool_name = name.to_owned();
    ServedTool::new(name, description, schema, move |args, ctx| {
        let call = f(server.clone(), args.clone(), ctx);
        let (server, tool_name) = (server.clone(), tool_name.clone());
        async move {
            let (result, agents) = collect_agents(call).await;
            server.tool_event(&tool_name, &args, &result, agents);
            result
        }
    })
    .annotations(json!({"readOnlyHint": read_only}))
}

/// `check`, `confirm`, `commit`, `push`: the gate chain.
fn gate_tools(server: &Arc<Server>) -> Vec<ServedTool> {
    vec![
        tool(
            server,
            "check",
            "Run the repository's lint and test commands (from .tascer/settings.json `check`, or \
             detected: a Makefile's `check` target, Cargo.toml, package.json, go.mod, \
             pyproject.toml) and record the result for the current working-tree state. Returns \
             each command's exit code, duration and output tail.",
            json!({"type": "object", "properties": {
                "working_dir": working_dir_prop(),
                "path": path_prop(),
                "timeout_secs": {"type": "integer", "minimum": 1, "description": "Per-command timeout (default: settings' check.timeoutSecs, else 600)"},
            }}),
            false,
            |s, args, ctx| async move { s.check(args, ctx).await },
        ),
        tool(
            server,
            "confirm",
            "Binary gate: CONFIRMED or DECLINED, with reasons. Requires a passing `check` of the \
             current working-tree state; a reviewer model then judges the diff. Without a model \
             it DECLINES, unless Tascer's settings set mcpServe.confirmWithoutModel.",
            json!({"type": "object", "properties": {
                "working_dir": working_dir_prop(),
                "path": path_prop(),
                "intent": {"type": "string", "description": "What the change is meant to do (given to the reviewer)"},
            }}),
            false,
            |s, args, _ctx| async move { s.confirm(args).await },
        ),
        tool(
            server,
            "commit",
            "Check, review and commit in one call: runs `check` and then `confirm` for the \
             working tree as it is (unless they already passed for this exact state) and commits \
             every change (git add -A; git commit) only when both pass; otherwise refuses, naming \
             the failing step and its reason. The message is `message`, else written by the \
             model, else a summary of the changed files.",
            json!({"type": "object", "properties": {
                "working_dir": working_dir_prop(),
                "path": path_prop(),
                "message": {"type": "string", "description": "Commit message (optional; also tells the reviewer what the change is for)"},
                "intent": {"type": "string", "description": "What the change is meant to do (given to the reviewer; default: message)"},
            }}),
            false,
            |s, args, ctx| async move { s.commit(args, ctx).await },
        ),
        tool(
            server,
            "push",
            "git push (optionally to `remote` and `branch`); returns and records git's output.",
            json!({"type": "object", "properties": {
                "working_dir": working_dir_prop(),
                "path": path_prop(),
                "remote": {"type": "string"},
                "branch": {"type": "string", "description": "Refspec to push (needs `remote`)"},
            }}),
            false,
            |s, args, _ctx| async move { s.push(args).await },
        ),
    ]
}

/// `validate_intent`, `sessions_list`, `session_report`, `session_verify`:
/// the read-only tools.
fn audit_tools(server: &Arc<Server>) -> Vec<ServedTool> {
    vec![
        tool(
            server,
            "validate_intent",
            "Report where an agent's session drifted from the user's request. Give `transcript` \
             (text), `transcript_path` (a Claude Code session's .jsonl) or `session_id` (a Tascer \
             session or a Claude Code session); with none of them, the latest Claude Code \
             session of `working_dir` is judged. Optionally `request`. Needs a model \
             (ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL).",
            json!({"type": "object", "properties": {
                "transcript": {"type": "string"},
                "transcript_path": {"type": "string", "description": "A Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl), relative to working_dir"},
                "session_id": {"type": "string", "description": "A Tascer session id, else a Claude Code session id"},
                "working_dir": {"type": "string", "description": "The project whose Claude Code sessions are meant (default: the server's working directory)"},
                "request": {"type": "string", "description": "The user's request (default: the transcript's first user message)"},
            }}),
            true,
            |s, args, _ctx| async move { s.validate_intent(args).await },
        ),
        tool(
            server,
            "sessions_list",
            "List recent Tascer sessions (id, updated, turns, cost, status, first prompt).",
            json!({"type": "object", "properties": {
                "limit": {"type": "integer", "minimum": 1, "description": "How many (default 20)"},
            }}),
            true,
            |s, args, _ctx| async move { s.sessions_list(&args) },
        ),
        tool(
            server,
            "session_report",
            "A session's ledger report: tool calls with status, gates, permission, proof hash; \
             ledger head and verification.",
            json!({"type": "object", "properties": {"session_id": {"type": "string"}}, "required": ["session_id"]}),
            true,
            |s, args, _ctx| async move { s.session_report(&args) },
        ),
        tool(
            server,
            "session_verify",
            "Verify a session's ledger (or all with `all: true`): hashes, chain, evidence, \
             head signature; names the first broken entry.",
            json!({"type": "object", "properties": {
                "session_id": {"type": "string"},
                "all": {"type": "boolean"},
            }}),
            true,
            |s, args, _ctx| async move { s.session_verify(&args) },
        ),
    ]
}
