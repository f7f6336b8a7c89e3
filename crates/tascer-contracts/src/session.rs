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
use crate::report::SessionOutcome;
use tascer::Client;
use tascer::Options;

/// The limits a session ran under, to say which one stopped it.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_turns: Option<u32>,
    budget: Option<f64>,
    time_limit: Option<Duration>,
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
    let limits = Limits {
        max_turns: options.max_turns,
        budget: options.max_budget_usd,
        time_limit,
    };
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
    let stops = Stops::start(&client, time_limit, cancel);
    let (result, start_error) = drive(&mut client, contract, prompt, progress, cancel).await;
    let timed_out = stops.finish();
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
    judge(
        &mut out,
        &result,
        limits,
        cancelled,
        timed_out.load(Ordering::SeqCst),
    );
    out
}

/// What stops a running session early: its time limit (which sets
/// `timed_out`) and the run's cancellation.
struct Stops {
    timed_out: Arc<AtomicBool>,
    timer: Option<tokio::task::JoinHandle<()>>,
    stopper: Option<tokio::task::JoinHandle<()>>,
}

impl Stops {
    /// Starts watching `client`'s session.
    fn start(
        client: &Client,
        time_limit: Option<Duration>,
        cancel: Option<&CancellationToken>,
    ) -> Self {
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
        Stops {
            timed_out,
            timer,
            stopper,
        }
    }

    /// Stops watching; the flag is set when the time limit interrupted
    /// the session.
    fn finish(self) -> Arc<AtomicBool> {
        if let Some(timer) = self.timer {
            timer.abort();
        }
        if let Some(stopper) = self.stopper {
            stopper.abort();
        }
        self.timed_out
    }
}

/// Sends `prompt` and reads the response to its end, reporting turns and
/// cost; the result message, or why the prompt could not be sent.
async fn drive(
    client: &mut Client,
    contract: &Contract,
    prompt: String,
    progress: Option<&ProgressFn>,
    cancel: Option<&CancellationToken>,
) -> (Option<ResultMessage>, Option<String>) {
    let query = if cancel.is_some_and(CancellationToken::is_cancelled) {
        Err("cancelled before it started".to_string())
    } else {
        client.query(prompt).await.map_err(|e| e.to_string())
    };
    if let Err(err) = query {
        return (None, Some(err));
    }
    let mut result = None;
    let mut stream = client.receive_response();
    let mut turn = 0u32;
    while let Some(message) = stream.next().await {
        match message {
            Message::Assistant(a) => {
                turn += 1;
                if let Some(report) = progress {
                    let tool = a.message.content.iter().find_map(|b| match b {
                        tascer_core::ContentBlock::ToolUse { name, .. } => Some(name.clone()),
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
                        unpriced_models: r.unpriced_models.clone(),
                    });
                }
                result = Some(r);
            }
            _ => {}
        }
    }
    (result, None)
}

/// Fills `out` from the session's result: turns, cost, summary, refused
/// calls, and whether the contract is done and why.
fn judge(
    out: &mut SessionOutcome,
    result: &ResultMessage,
    limits: Limits,
    cancelled: bool,
    timed_out: bool,
) {
    out.turns = result.num_turns;
    out.cost_usd = result.total_cost_usd;
    out.unpriced_models = result.unpriced_models.clone();
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
    } else if timed_out {
        format!(
            "exceeded its time budget of {} s",
            limits.time_limit.map(|t| t.as_secs()).unwrap_or_default()
        )
    } else if result.subtype == ResultSubtype::ErrorMaxTurns {
        format!(
            "exceeded its turn budget of {} turns",
            limits.max_turns.unwrap_or_default()
        )
    } else if result.subtype == ResultSubtype::ErrorMaxBudgetUsd {
        format!(
            "exceeded its cost budget of ${:.2}",
            limits.budget.unwrap_or_default()
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
