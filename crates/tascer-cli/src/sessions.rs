//! `tascer sessions list|show`.

use std::process::ExitCode;

use anyhow::Context;
use tascer::{ContentBlock, Message, SessionStore, UserContent};

fn open_store() -> anyhow::Result<SessionStore> {
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
        "{:<36}  {:<20}  {:>5}  {:>9}  {:<7}  PROMPT",
        "SESSION",
        "UPDATED",
        "TURNS",
        "COST",
        "STATUS"
    );
    for s in sessions {
        let prompt: String = s
            .first_prompt
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
    Ok(ExitCode::SUCCESS)
}
