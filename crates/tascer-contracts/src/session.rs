//! One contract as one governed session: run it, then say what happened.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tascer_core::{Message, ResultMessage, ResultSubtype};
use tascer_guard::permissions::EDIT_TOOLS;
use tascer_ledger::{ReportData, ToolStatus};
use tokio_util::sync::CancellationToken;

use crate::parse::Contract;
use crate::progress::{Progress, ProgressFn};
use tascer::Client;
use tascer::Options;

/// What one contract's session produced.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SessionOutcome {
    /// True when the contract is done within its constraints.
    pub completed: bool,
    /// Why it completed or failed, in one sentence.
    pub why: String,
    /// The agent's final text.
    pub summary: Option<String>,
    /// Session id (empty when the session could not start).
    pub session_id: String,
    /// Model calls made.
    pub turns: u32,
    /// Cost, USD.
    pub cost_usd: f64,
    /// Wall time, ms.
    pub duration_ms: u64,
    /// Files the session's edit tools changed, relative to its working
    /// directory when inside it.
    pub files_changed: Vec<String>,
    /// Hash of the session's last ledger entry.
    pub ledger_head: Option<String>,
    /// Number of ledger entries under that head.
    pub ledger_seq: Option<u64>,
    /// Key id of the key that signed the head (`None`: unsigned).
    pub signing_key: Option<String>,
    /// Tool calls that were refused, as `Tool(detail)`.
    pub refused: Vec<String>,
    /// With `--parallel`: the contract's branch.
    pub branch: Option<String>,
    /// With `--parallel`: the commit Tascer made on it (`None`: no changes).
    pub commit: Option<String>,
    /// Where the session was archived (see [`crate::SessionArchiver`]).
    pub archive: Option<String>,
    /// Why archiving the session failed, when it did.
    pub archive_error: Option<String>,
}

/// Runs `prompt` as a session with `options`, stopping it after
/// `time_limit` or when `cancel` is cancelled, and reports on it.
pub(crate) async fn run_session(
    contract: &Contract,
    prompt: String,
    options: Options,
    time_limit: Option<Duration>,
    progress: Option<&ProgressFn>,
    cancel: Option<&CancellationToken>,
) -> SessionOutcome {
    let started = Instant::now();
    let cwd = options.cwd.clone().unwrap_or_default();
    let max_turns = options.max_turns;
    let budget = options.max_budget_usd;
    let mut client = match Client::connect(options).await {
        Ok(c) => c,
        Err(err) => {
            return SessionOutcome {
                why: format!("the session could not start: {err}"),
                duration_ms: started.elapsed().as_millis() as u64,
                ..SessionOutcome::default()
            };
        }
    };
    let session_id = client.session_id().to_string();
    let timed_out = Arc::new(AtomicBool::new(false));
    let timer = time_limit.map(|limit| {
        let interrupter = client.interrupter();
        let flag = Arc::clone(&timed_out);
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            flag.store(true, Ordering::SeqCst);
            interrupter.interrupt();
        })
    });
    let stopper = cancel.map(|token| {
        let interrupter = client.interrupter();
        let token = token.clone();
        tokio::spawn(async move {
            token.cancelled().await;
            interrupter.interrupt();
        })
    });
    let mut result: Option<ResultMessage> = None;
    let mut start_error = None;
    let query = if cancel.is_some_and(CancellationToken::is_cancelled) {
        Err("cancelled before it started".to_string())
    } else {
        client.query(prompt).await.map_err(|e| e.to_string())
    };
    match query {
        Ok(()) => {
            let mut stream = client.receive_response();
            let mut turn = 0u32;
            while let Some(message) = stream.next().await {
                match message {
                    Message::Assistant(a) => {
                        turn += 1;
                        if let Some(report) = progress {
                            let tool = a.message.content.iter().find_map(|b| match b {
                                tascer_core::ContentBlock::ToolUse { name, .. } => {
                                    Some(name.clone())
                                }
                                _ => None,
                            });
                            report(Progress::Turn {
                                name: contract.name.clone(),
                                turn,
                                tool,
                            });
                        }
                    }
                    Message::Result(r) => {
                        if let Some(report) = progress {
                            report(Progress::Cost {
                                name: contract.name.clone(),
                                cost_usd: r.total_cost_usd,
                            });
                        }
                        result = Some(r);
                    }
                    _ => {}
                }
            }
        }
        Err(err) => start_error = Some(err),
    }
    if let Some(timer) = timer {
        timer.abort();
    }
    if let Some(stopper) = stopper {
        stopper.abort();
    }
    let cancelled = cancel.is_some_and(CancellationToken::is_cancelled);
    let report = client.validation_report().await.ok();
    client.disconnect().await;
    let mut out = SessionOutcome {
        session_id,
        duration_ms: started.elapsed().as_millis() as u64,
        ..SessionOutcome::default()
    };
    if let Some(report) = &report {
        out.files_changed = files_changed(report, &cwd);
        if let Some(head) = &report.head {
            out.ledger_head = Some(head.hash.clone());
            out.ledger_seq = Some(head.seq);
            out.signing_key = head.key_id.clone();
        }
    }
    let Some(result) = result else {
        out.why = match start_error {
            _ if cancelled => "stopped before it finished: the run was cancelled".to_string(),
            Some(e) => format!("the session failed: {e}"),
            None => "the session ended without a result".to_string(),
        };
        return out;
    };
    out.turns = result.num_turns;
    out.cost_usd = result.total_cost_usd;
    out.summary = result.result.clone().filter(|s| !s.trim().is_empty());
    out.refused = result
        .permission_denials
        .iter()
        .map(|d| format!("{}({})", d.tool_name, denial_detail(&d.tool_input)))
        .collect();
    let refused_writes: Vec<&str> = result
        .permission_denials
        .iter()
        .filter(|d| EDIT_TOOLS.contains(&d.tool_name.as_str()))
        .filter_map(|d| d.tool_input.get("file_path").and_then(|v| v.as_str()))
        .collect();
    out.why = if cancelled {
        "stopped before it finished: the run was cancelled".to_string()
    } else if timed_out.load(Ordering::SeqCst) {
        format!(
            "exceeded its time budget of {} s",
            time_limit.map(|t| t.as_secs()).unwrap_or_default()
        )
    } else if result.subtype == ResultSubtype::ErrorMaxTurns {
        format!(
            "exceeded its turn budget of {} turns",
            max_turns.unwrap_or_default()
        )
    } else if result.subtype == ResultSubtype::ErrorMaxBudgetUsd {
        format!(
            "exceeded its cost budget of ${:.2}",
            budget.unwrap_or_default()
        )
    } else if result.is_error {
        let detail = if result.errors.is_empty() {
            result.result.clone().unwrap_or_default()
        } else {
            result.errors.join("; ")
        };
        format!(
            "the session ended in error ({}): {detail}",
            result.terminal_reason
        )
    } else if !refused_writes.is_empty() {
        format!(
            "tried to write outside its allowed files: {} (refused)",
            refused_writes.join(", ")
        )
    } else {
        out.completed = true;
        format!("the agent finished ({})", result.terminal_reason)
    };
    out
}

/// `file_path`, `command`, … of a refused call, shortened.
fn denial_detail(input: &serde_json::Value) -> String {
    let detail = ["file_path", "notebook_path", "command", "path", "url"]
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
        .unwrap_or("");
    let mut s: String = detail.chars().take(80).collect();
    if detail.chars().count() > 80 {
        s.push('…');
    }
    s
}

/// Files the session's edit tools changed (not the refused ones), relative
/// to `cwd` when inside it, sorted and without repeats.
pub(crate) fn files_changed(report: &ReportData, cwd: &Path) -> Vec<String> {
    let mut files = std::collections::BTreeSet::new();
    for tool in &report.tools {
        let r = &tool.record;
        if !EDIT_TOOLS.contains(&r.tool.as_str())
            || matches!(r.status, ToolStatus::Blocked | ToolStatus::Pending)
        {
            continue;
        }
        let Some(file) = ["file_path", "notebook_path"]
            .iter()
            .find_map(|k| r.input.get(*k).and_then(|v| v.as_str()))
        else {
            continue;
        };
        let path = PathBuf::from(file);
        let shown = path
            .strip_prefix(cwd)
            .map(Path::to_path_buf)
            .unwrap_or(path);
        files.insert(shown.to_string_lossy().into_owned());
    }
    files.into_iter().collect()
}
