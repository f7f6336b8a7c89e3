//! The audit tools: `sessions_list` (the session store), `session_report`
//! and `session_verify` (the signed ledger, through `tascer_ledger::audit`,
//! the same data and lines as `tascer report` and `tascer verify`).

use serde_json::{Map, Value, json};
use tascer_mcp::ServeToolResult;

use crate::error::GatekeeperError;
use crate::server::{Server, str_arg, tool_error};

impl Server {
    /// The `sessions_list` tool.
    pub(crate) fn sessions_list(&self, args: &Map<String, Value>) -> ServeToolResult {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(20, |l| usize::try_from(l).unwrap_or(usize::MAX));
        let sessions = match self.store() {
            Ok(Some(store)) => match store.list(limit) {
                Ok(s) => s,
                Err(e) => return tool_error(&e.into()),
            },
            Ok(None) => Vec::new(),
            Err(e) => return tool_error(&e),
        };
        let data = json!({"sessions": sessions, "home": self.home.display().to_string()});
        let text = if sessions.is_empty() {
            format!("no sessions in {}", self.home.display())
        } else {
            sessions
                .iter()
                .map(|s| {
                    let prompt: String = s
                        .first_prompt
                        .clone()
                        .unwrap_or_default()
                        .replace('\n', " ")
                        .chars()
                        .take(60)
                        .collect();
                    format!(
                        "{}  {}  {} turns  ${:.4}  {}  {prompt}",
                        s.id, s.updated_at, s.num_turns, s.total_cost_usd, s.status
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        ServeToolResult::structured(text, data, false)
    }

    /// The `session_report` tool.
    pub(crate) fn session_report(&self, args: &Map<String, Value>) -> ServeToolResult {
        let Some(id) = str_arg(args, "session_id") else {
            return ServeToolResult::error("session_report needs `session_id`");
        };
        match tascer_ledger::audit::report_session(&self.home, id) {
            Ok(report) => {
                let text = report.lines().join("\n");
                let verify_json = match &report.verify {
                    Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
                    Err(e) => json!({"ok": false, "error": tascer_core::error_chain(e)}),
                };
                let value = json!({
                    "report": serde_json::to_value(&report.data).unwrap_or(Value::Null),
                    "verify": verify_json,
                });
                ServeToolResult::structured(text, value, false)
            }
            Err(e) => tool_error(&GatekeeperError::Audit(e)),
        }
    }

    /// The `session_verify` tool.
    pub(crate) fn session_verify(&self, args: &Map<String, Value>) -> ServeToolResult {
        let session = str_arg(args, "session_id");
        let all = args.get("all").and_then(Value::as_bool).unwrap_or(false);
        if session.is_none() && !all {
            return ServeToolResult::error("session_verify needs `session_id` or `all: true`");
        }
        match tascer_ledger::audit::verify_sessions(&self.home, session.filter(|_| !all), None) {
            Ok(outcome) => {
                let data = json!({"ok": outcome.ok, "reports": outcome.reports});
                ServeToolResult::structured(outcome.lines.join("\n"), data, !outcome.ok)
            }
            Err(e) => tool_error(&GatekeeperError::Audit(e)),
        }
    }
}
