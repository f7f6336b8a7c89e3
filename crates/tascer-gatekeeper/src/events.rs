//! Each tool call as a webhook event (`McpToolCall`, docs/mcp.md): queued
//! for the webhooks of the settings of the repository the call acts on (its
//! `working_dir`, read as `tascer hook` reads them), with the call's result
//! and the verdicts of the models it asked (`agents`). Queuing never
//! delays the answer by more than a write to the outbox; a detached
//! `tascer webhook flush` delivers (started as `tascer hook` starts it,
//! and reaped by a thread of this process).
//!
//! The verdicts are collected per call: a tool's handler runs inside
//! [`collect_agents`], and the code that asks a model notes its verdict
//! with [`note_agent`].

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tascer::reviewer::AgentVerdict;
use tascer::webhook::{Source, WebhookEvent, Webhooks};
use tascer_mcp::ServeToolResult;
use tascer_store::Db;

tokio::task_local! {
    /// The agents' verdicts of the tool call running on this task.
    static AGENTS: Mutex<Vec<Value>>;
}

/// How much of a result's text the event's `summary` keeps.
const SUMMARY_CHARS: usize = 2000;

/// Notes a model's verdict for the current tool call's event (nothing
/// outside a call).
pub(crate) fn note_agent(verdict: &AgentVerdict) {
    let _ = AGENTS.try_with(|agents| agents.lock().push(verdict.to_value()));
}

/// Runs `call` (a tool's handler) and returns its result with the agents'
/// verdicts it noted.
pub(crate) async fn collect_agents<F>(call: F) -> (ServeToolResult, Vec<Value>)
where
    F: Future<Output = ServeToolResult>,
{
    AGENTS
        .scope(Mutex::new(Vec::new()), async move {
            let result = call.await;
            let agents = AGENTS
                .try_with(|agents| std::mem::take(&mut *agents.lock()))
                .unwrap_or_default();
            (result, agents)
        })
        .await
}

/// The webhook side of a gatekeeper server: the home's local database
/// (the outbox), opened on the first event.
pub(crate) struct EventSink {
    home: PathBuf,
    db: OnceLock<Result<Arc<Db>, String>>,
}

impl EventSink {
    /// The sink of a server over the Tascer home `home`.
    pub fn new(home: PathBuf) -> Self {
        EventSink {
            home,
            db: OnceLock::new(),
        }
    }

    /// The home's local SQLite database (the store's own when it is
    /// SQLite), as `tascer hook` opens it.
    fn db(&self) -> Result<Arc<Db>, String> {
        self.db
            .get_or_init(|| {
                tascer_store::open_home_backend(&self.home)
                    .and_then(|backend| backend.local_db(&self.home))
                    .map_err(|e| format!("cannot open the local store: {e}"))
            })
            .clone()
    }

    /// Queues the `McpToolCall` event of `tool` called with `args` in
    /// `dir`, with its `result` and `agents`, for the webhooks the
    /// settings of `dir` configure; then starts the flusher when anything
    /// was queued. Problems are logged: the call's answer stands.
    pub fn send(&self, call: ToolCallEvent<'_>, result: &ServeToolResult, agents: Vec<Value>) {
        let hooks = match tascer::host::load_settings(call.dir, &self.home) {
            Ok(settings) => settings.webhooks(),
            Err(err) => {
                tracing::warn!("webhooks: cannot read Tascer's settings: {err}");
                return;
            }
        };
        if hooks.is_empty() {
            return;
        }
        let sink = match self
            .db()
            .and_then(|db| Webhooks::open(hooks, &db, Source::Mcp).map_err(|e| e.to_string()))
        {
            Ok(Some(sink)) => sink,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!(
                    "webhooks: the McpToolCall event of {} is not sent: {err}",
                    call.tool
                );
                return;
            }
        };
        let input = json!({
            "session_id": call.session,
            "cwd": call.dir.display().to_string(),
            "tool_name": call.tool,
            "tool_input": call.args,
        });
        let tascer = json!({
            "result": result_summary(result),
            "agents": agents,
        });
        if sink.send_event(WebhookEvent::McpToolCall, input, tascer) {
            self.start_flusher();
        }
    }

    /// Starts `tascer webhook flush` (this executable) unless one runs;
    /// `tascer_webhook` reaps it.
    fn start_flusher(&self) {
        let started = std::env::current_exe()
            .map_err(|e| format!("cannot find the tascer binary: {e}"))
            .and_then(|exe| tascer::webhook::spawn_flusher(&self.home, &exe));
        if let Err(err) = started {
            tracing::warn!(
                "webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
            );
        }
    }
}

/// What a tool call's event names: the call and where it acted.
pub(crate) struct ToolCallEvent<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its arguments.
    pub args: &'a Map<String, Value>,
    /// The directory it acted on.
    pub dir: &'a Path,
    /// The server's ledger session.
    pub session: &'a str,
}

/// The event's `result`: `ok`, the `verdict` the tool gave (when it gives
/// one) and the text the caller got, cut short.
fn result_summary(result: &ServeToolResult) -> Value {
    let value = &result.0;
    let ok = !value["isError"].as_bool().unwrap_or(false);
    let summary: String = value["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .take(SUMMARY_CHARS)
        .collect();
    json!({
        "ok": ok,
        "verdict": verdict(&value["structuredContent"], ok),
        "summary": summary,
    })
}

/// The verdict word of a tool's structured result: `confirm`'s own
/// (`CONFIRMED`, `DECLINED`), `ALIGNED`/`DRIFT` for `validate_intent`,
/// `PASSED`/`FAILED` for `check`, `COMMITTED`/`REFUSED` for `commit`;
/// else `ERROR` for a failed call and null for the others.
fn verdict(data: &Value, ok: bool) -> Value {
    if let Some(word) = data["verdict"].as_str() {
        return json!(word);
    }
    if let Some(aligned) = data["aligned"].as_bool() {
        return json!(if aligned { "ALIGNED" } else { "DRIFT" });
    }
    if let Some(passed) = data["passed"].as_bool() {
        return json!(if passed { "PASSED" } else { "FAILED" });
    }
    if data["committed"] == json!(false) {
        return json!("REFUSED");
    }
    if data["commit"].is_string() {
        return json!("COMMITTED");
    }
    if ok { Value::Null } else { json!("ERROR") }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn results_are_summed_up_with_their_verdict() {
        let r =
            ServeToolResult::structured("DECLINED\n- no", json!({"verdict": "DECLINED"}), false);
        let s = result_summary(&r);
        assert_eq!(
            s,
            json!({"ok": true, "verdict": "DECLINED", "summary": "DECLINED\n- no"})
        );
        let r = ServeToolResult::error("boom");
        assert_eq!(result_summary(&r)["verdict"], "ERROR");
        assert_eq!(result_summary(&r)["ok"], false);
        let r = ServeToolResult::structured("x", json!({"committed": false}), true);
        assert_eq!(result_summary(&r)["verdict"], "REFUSED");
        let r = ServeToolResult::text("3 sessions");
        assert_eq!(result_summary(&r)["verdict"], Value::Null);
    }

    #[tokio::test]
    async fn verdicts_noted_in_a_call_are_its_own() {
        let verdict = AgentVerdict::new(
            "confirm",
            "m",
            "CONFIRMED",
            tascer::reviewer::AgentLevel::Pass,
        );
        note_agent(&verdict); // outside a call: nowhere, no panic
        let (_, agents) = collect_agents(async {
            note_agent(&verdict);
            ServeToolResult::text("ok")
        })
        .await;
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0]["agent"], "confirm");
        let (_, none) = collect_agents(async { ServeToolResult::text("ok") }).await;
        assert!(none.is_empty());
    }
}
