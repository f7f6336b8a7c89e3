//! `tascer sessions list|show` (`rename|delete|export`: `sessions_admin`): the store's sessions and messages, and
//! with `show`, the session's permission decisions, hook runs and metrics
//! from the audit tables.

use std::process::ExitCode;

use anyhow::Context;
use tascer::{ContentBlock, Message, SessionStore, UserContent};
use tascer_ledger::ReportAudit;
use tascer_ledger::report_audit::{decision_counts, decision_text, hook_text, metric_lines};
use tascer_store::DecisionFilter;

/// The home's session store.
pub(crate) fn open_store() -> anyhow::Result<SessionStore> {
    let home = tascer::tascer_home();
    SessionStore::open_in_home(&home)
        .with_context(|| format!("cannot open the session store in {}", home.display()))
}

/// Lists recent sessions.
pub fn list(limit: usize, json: bool) -> anyhow::Result<ExitCode> {
    let sessions = open_store()?.list(limit)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        outln!("no sessions yet (run `tascer run \"…\"` or `tascer demo`)");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<36}  {:<20}  {:>5}  {:>9}  {:<7}  TITLE OR PROMPT",
        "SESSION",
        "UPDATED",
        "TURNS",
        "COST",
        "STATUS"
    );
    for s in sessions {
        let prompt: String = s
            .title
            .or(s.first_prompt)
            .unwrap_or_default()
            .replace('\n', " ")
            .chars()
            .take(50)
            .collect();
        outln!(
            "{:<36}  {:<20}  {:>5}  {:>9}  {:<7}  {}",
            s.id,
            s.updated_at.get(..19).unwrap_or(&s.updated_at),
            s.num_turns,
            format!("${:.4}", s.total_cost_usd),
            s.status,
            prompt
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Shows one session's messages.
pub fn show(id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let info = store
        .session(id)?
        .with_context(|| format!("No conversation found with session ID: {id}"))?;
    let messages = store.messages(id)?;
    if json {
        for m in &messages {
            outln!("{}", serde_json::to_string(m)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    outln!("session {}", info.id);
    if let Some(title) = &info.title {
        outln!("  title    {title}");
    }
    outln!("  cwd      {}", info.cwd);
    outln!("  model    {}", info.model);
    outln!("  created  {}", info.created_at);
    outln!(
        "  turns    {}   cost ${:.4}   status {}",
        info.num_turns,
        info.total_cost_usd,
        info.status
    );
    if let Some(from) = &info.forked_from {
        outln!("  forked from {from}");
    }
    let audit = audit_of(id)?;
    if let Some(audit) = &audit {
        outln!(
            "  permission decisions {}   hook runs {}",
            decision_counts(&audit.decisions),
            audit.hook_runs.len()
        );
        for line in metric_lines(&audit.metrics) {
            outln!("  {line}");
        }
    }
    outln!();
    for m in &messages {
        match m {
            Message::User(u) => match &u.message.content {
                UserContent::Text(t) => outln!("> {t}"),
                UserContent::Blocks(blocks) => {
                    for b in blocks {
                        if let ContentBlock::ToolResult {
                            content, is_error, ..
                        } = b
                        {
                            let text = content.to_text();
                            let first = text.lines().next().unwrap_or("");
                            let mark = if is_error.unwrap_or(false) {
                                "✗"
                            } else {
                                "⎿"
                            };
                            outln!("  {mark} {first}");
                        }
                    }
                }
            },
            Message::Assistant(a) => {
                for b in &a.message.content {
                    match b {
                        ContentBlock::Text { text } => outln!("{text}"),
                        ContentBlock::ToolUse { name, input, .. } => outln!("⏺ {name} {input}"),
                        _ => {}
                    }
                }
            }
            Message::Result(r) => outln!("{}", crate::render::closing_line(r)),
            Message::System(_) | Message::StreamEvent(_) => {}
        }
    }
    if let Some(audit) = audit {
        audit_lines(&audit)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A session's rows of the audit tables (docs/audit.md), `None` when it
/// has no ledger entries.
fn audit_of(id: &str) -> anyhow::Result<Option<ReportAudit>> {
    let home = tascer::tascer_home();
    let ledger = tascer_ledger::audit::open_ledger(&home)?;
    let store = ledger.store();
    if store.last_entry(id)?.is_none() {
        return Ok(None);
    }
    Ok(Some(ReportAudit {
        decisions: store.decisions(&DecisionFilter {
            session: Some(id.to_string()),
            ..DecisionFilter::default()
        })?,
        hook_runs: store.hook_runs(id)?,
        metrics: store.metrics(id)?,
    }))
}

/// Every permission decision and hook run of the session, in order.
fn audit_lines(audit: &ReportAudit) -> anyhow::Result<()> {
    if audit.decisions.is_empty() && audit.hook_runs.is_empty() {
        return Ok(());
    }
    outln!();
    outln!("audit:");
    for d in &audit.decisions {
        outln!(
            "  {}  {} {}  {}: {}",
            d.ts,
            d.tool.as_deref().unwrap_or("?"),
            d.tool_use_id.as_deref().unwrap_or("?"),
            decision_text(d),
            d.reason
                .as_deref()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
        );
    }
    for h in &audit.hook_runs {
        let call = h.tool_use_id.as_deref().unwrap_or("session");
        outln!("  {}  hook {}  {call}", h.ts, hook_text(h));
    }
    Ok(())
}
