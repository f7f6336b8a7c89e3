//! `tascer sessions rename|delete|export`: a session's title, its removal
//! from the store (messages, file checkpoints, ledger, evidence files), and
//! its conversation written out.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use tascer::{ContentBlock, Message, SessionStore, UserContent};

use crate::args::{ExportFormat, SessionsCommand};

/// Runs `rename`, `delete` or `export` (`list` and `show` are
/// [`crate::sessions`]).
pub fn admin(command: SessionsCommand) -> anyhow::Result<ExitCode> {
    match command {
        SessionsCommand::Rename { id, title } => rename(&id, &title),
        SessionsCommand::Delete { id, yes } => delete(&id, yes),
        SessionsCommand::Export { id, format, output } => export(&id, format, output.as_deref()),
        SessionsCommand::List { limit, json } => crate::sessions::list(limit, json),
        SessionsCommand::Show { id, json } => crate::sessions::show(&id, json),
    }
}

/// Sets the title.
fn rename(id: &str, title: &str) -> anyhow::Result<ExitCode> {
    let title = title.trim();
    if title.is_empty() {
        bail!("the title is empty");
    }
    crate::sessions::open_store()?.rename(id, title)?;
    outln!("session {id} is now titled {title:?}");
    Ok(ExitCode::SUCCESS)
}

/// Deletes the session after asking (or with `--yes`).
fn delete(id: &str, yes: bool) -> anyhow::Result<ExitCode> {
    let store = crate::sessions::open_store()?;
    if !yes {
        let messages = store.session(id)?.map(|s| s.message_count).unwrap_or(0);
        if !confirm(&format!(
            "Delete session {id} ({messages} messages, its ledger and file checkpoints)? [y/N] "
        ))? {
            outln!("not deleted");
            return Ok(ExitCode::FAILURE);
        }
    }
    let cwd = store.session(id)?.map(|s| s.cwd);
    let deleted = store.delete_session(id)?;
    let home = tascer::tascer_home();
    let evidence = home.join("evidence").join(id);
    if evidence.is_dir() {
        std::fs::remove_dir_all(&evidence)
            .with_context(|| format!("cannot remove {}", evidence.display()))?;
    }
    let transcripts = match &cwd {
        Some(cwd) => remove_transcripts(&home, Path::new(cwd), id)?,
        None => 0,
    };
    outln!(
        "deleted session {id}: {} messages, {} ledger entries, {} file checkpoints, {transcripts} \
         transcript file(s)",
        deleted.messages,
        deleted.ledger_entries,
        deleted.file_changes
    );
    Ok(ExitCode::SUCCESS)
}

/// Removes the session's Claude Code–format transcripts: the one `tascer
/// run` writes in the home, and the one written for the SDKs in Claude
/// Code's configuration directory. Returns how many there were.
fn remove_transcripts(home: &Path, cwd: &Path, id: &str) -> anyhow::Result<usize> {
    let dirs =
        std::iter::once(home.to_path_buf()).chain(tascer::guard::settings::claude_config_dir());
    let mut removed = 0;
    for dir in dirs {
        let file = tascer::guard::settings::claude_transcript_file(&dir, cwd, id);
        if file.is_file() {
            std::fs::remove_file(&file)
                .with_context(|| format!("cannot remove {}", file.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Asks on the terminal; refuses when stdin is not one.
fn confirm(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("refusing to delete without confirmation: stdin is not a terminal (pass --yes)");
    }
    eprint!("{question}");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Writes the conversation in `format` to `output` (else stdout).
fn export(id: &str, format: ExportFormat, output: Option<&Path>) -> anyhow::Result<ExitCode> {
    let store = crate::sessions::open_store()?;
    let info = store
        .session(id)?
        .with_context(|| format!("No conversation found with session ID: {id}"))?;
    let messages = store.messages(id)?;
    let text = match format {
        ExportFormat::Jsonl => tascer::claude_transcript_lines(&messages, &info.cwd)
            .iter()
            .map(|line| format!("{line}\n"))
            .collect(),
        ExportFormat::Json => format!("{}\n", serde_json::to_string_pretty(&messages)?),
        ExportFormat::Markdown => markdown(&store, id, &messages)?,
    };
    match output {
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The conversation as Markdown: prompts, answers, tool calls and their
/// results (first lines), the closing line of each turn.
fn markdown(store: &SessionStore, id: &str, messages: &[Message]) -> anyhow::Result<String> {
    let info = store
        .session(id)?
        .with_context(|| format!("No conversation found with session ID: {id}"))?;
    let mut md = format!(
        "# {}\n\n- session `{}`\n- cwd `{}`\n- model `{}`\n- created {}\n",
        info.title.as_deref().unwrap_or("Session"),
        info.id,
        info.cwd,
        info.model,
        info.created_at
    );
    for m in messages {
        match m {
            Message::User(u) => match &u.message.content {
                UserContent::Text(t) => md.push_str(&format!("\n## User\n\n{t}\n")),
                UserContent::Blocks(blocks) => {
                    for b in blocks {
                        if let ContentBlock::ToolResult { content, .. } = b {
                            let text = content.to_text();
                            md.push_str(&format!("\n```text\n{}\n```\n", text.trim_end()));
                        }
                    }
                }
            },
            Message::Assistant(a) => {
                md.push_str("\n## Assistant\n\n");
                for b in &a.message.content {
                    match b {
                        ContentBlock::Text { text } => md.push_str(&format!("{text}\n")),
                        ContentBlock::ToolUse { name, input, .. } => {
                            md.push_str(&format!("\n**{name}** `{input}`\n"));
                        }
                        _ => {}
                    }
                }
            }
            Message::Result(r) => {
                md.push_str(&format!("\n_{}_\n", crate::render::closing_line(r)));
            }
            Message::System(_) | Message::StreamEvent(_) => {}
        }
    }
    Ok(md)
}
