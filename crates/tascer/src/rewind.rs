//! `rewind_files`: the files the session's tools changed since a prompt,
//! restored to what they held when it was sent (a file created since is
//! removed), from the session's file checkpoints
//! ([`crate::file_checkpoint`]).
//!
//! A file whose content is not what the session last left (a person, or
//! a Bash command, changed it since) is never overwritten: the rewind is
//! refused naming it, and nothing is restored. A rewind is recorded in the
//! ledger (a `checkpoint` entry, `event: "rewind_files"`) before any file
//! is touched, and in the checkpoints, so a later rewind sees the files as
//! this one left them.

use std::collections::BTreeMap;

use serde_json::json;
use similar::{ChangeTag, TextDiff};
use tascer_core::Message;
use tascer_ledger::digest::sha256_hex;
use tascer_store::{FileChange, MAX_CHECKPOINT_FILE_BYTES, StoreError};

use crate::loop_env::LoopEnv;

/// What a rewind restored (or, on a dry run, would restore).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewindSummary {
    /// Each file restored or removed, as recorded.
    pub files_changed: Vec<String>,
    /// Lines the restored contents add back.
    pub insertions: u64,
    /// Lines they take away.
    pub deletions: u64,
}

/// Why a rewind was refused (nothing was changed).
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    /// The session was started without file checkpointing.
    #[error("File rewinding is not enabled.")]
    NotEnabled,
    /// The id is not a prompt of this session.
    #[error("No file checkpoint found for this message: {0} is not a user message of this session")]
    UnknownMessage(String),
    /// Files changed outside the session since it last wrote them.
    #[error(
        "Failed to rewind: changed outside the session since it last wrote them (not \
         overwritten): {}",
        .0.join(", ")
    )]
    ChangedSince(Vec<String>),
    /// Files whose earlier content was too large to keep.
    #[error(
        "Failed to rewind: the content before the session changed them was over \
         {MAX_CHECKPOINT_FILE_BYTES} bytes and not kept: {}",
        .0.join(", ")
    )]
    NotKept(Vec<String>),
    /// The store could not be read or written.
    #[error("Failed to rewind: {0}")]
    Store(#[from] StoreError),
    /// The ledger could not record the rewind (nothing was restored).
    #[error("Failed to rewind: the ledger could not record it, so no file was restored")]
    NotRecorded,
    /// A file could not be written or removed.
    #[error("Failed to rewind {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// One file to put back.
struct Restore {
    path: String,
    /// What it holds now (`None`: absent).
    current: Option<Vec<u8>>,
    /// What it held at the prompt (`None`: it did not exist).
    target: Option<Vec<u8>>,
}

/// Rewinds the session of `env` to `user_message_id` (see the module
/// docs); with `dry_run`, only says what it would restore.
pub(crate) fn rewind(
    env: &LoopEnv,
    user_message_id: &str,
    dry_run: bool,
) -> Result<RewindSummary, RewindError> {
    if env.checkpoints.is_none() {
        return Err(RewindError::NotEnabled);
    }
    let prompts = prompt_uuids(&env.store.messages(&env.session_id)?);
    let index = prompts
        .iter()
        .position(|p| p == user_message_id)
        .ok_or_else(|| RewindError::UnknownMessage(user_message_id.to_string()))?;
    let since: Vec<&String> = prompts[index..].iter().collect();
    let restores = plan(&env.store.file_changes(&env.session_id)?, &since)?;
    let summary = summarize(&restores);
    if dry_run || restores.is_empty() {
        return Ok(summary);
    }
    let recorded = env.proof.rewind(json!({
        "event": "rewind_files",
        "user_message_id": user_message_id,
        "files": restores.iter().map(|r| json!({
            "path": r.path,
            "action": if r.target.is_some() { "restored" } else { "removed" },
            "sha256": r.target.as_deref().map(sha256_hex),
        })).collect::<Vec<_>>(),
    }));
    if !recorded {
        return Err(RewindError::NotRecorded);
    }
    let latest = prompts.last().cloned().unwrap_or_default();
    for restore in restores {
        apply(&restore)?;
        env.store.record_file_change(
            &env.session_id,
            &FileChange {
                prompt_uuid: latest.clone(),
                existed: restore.current.is_some(),
                before: restore
                    .current
                    .filter(|c| c.len() <= MAX_CHECKPOINT_FILE_BYTES),
                after_sha256: restore.target.as_deref().map(sha256_hex),
                tool_use_id: "rewind".to_string(),
                path: restore.path,
            },
        )?;
    }
    Ok(summary)
}

/// The uuids of the session's prompts (user text messages of the main
/// thread), in order.
fn prompt_uuids(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| crate::history::is_prompt(m))
        .map(|m| m.uuid().to_string())
        .collect()
}

/// The files to restore: each file changed in the turns of `since`, to
/// its content before the first of those changes. Refuses files changed
/// since the session last wrote them, and files whose earlier content was
/// not kept.
fn plan(changes: &[FileChange], since: &[&String]) -> Result<Vec<Restore>, RewindError> {
    // Per path: the first change in the rewound turns, and the last change.
    let mut files: BTreeMap<&str, (Option<&FileChange>, &FileChange)> = BTreeMap::new();
    for change in changes {
        let rewound = since.contains(&&change.prompt_uuid);
        let entry = files.entry(change.path.as_str()).or_insert((None, change));
        entry.1 = change;
        if rewound && entry.0.is_none() {
            entry.0 = Some(change);
        }
    }
    let (mut restores, mut changed, mut not_kept) = (Vec::new(), Vec::new(), Vec::new());
    for (path, (first, last)) in files {
        let Some(first) = first else { continue };
        let current = std::fs::read(path).ok();
        if current.as_deref().map(sha256_hex) != last.after_sha256 {
            changed.push(path.to_string());
        } else if !first.restorable() {
            not_kept.push(path.to_string());
        } else if current != first.before {
            restores.push(Restore {
                path: path.to_string(),
                current,
                target: first.before.clone(),
            });
        }
    }
    if !changed.is_empty() {
        return Err(RewindError::ChangedSince(changed));
    }
    if !not_kept.is_empty() {
        return Err(RewindError::NotKept(not_kept));
    }
    Ok(restores)
}

/// The files and the lines a rewind changes.
fn summarize(restores: &[Restore]) -> RewindSummary {
    let mut summary = RewindSummary::default();
    for r in restores {
        summary.files_changed.push(r.path.clone());
        let old = String::from_utf8_lossy(r.current.as_deref().unwrap_or_default());
        let new = String::from_utf8_lossy(r.target.as_deref().unwrap_or_default());
        for change in TextDiff::from_lines(old.as_ref(), new.as_ref()).iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => summary.insertions += 1,
                ChangeTag::Delete => summary.deletions += 1,
                ChangeTag::Equal => {}
            }
        }
    }
    summary
}

/// Writes a file's earlier content back, or removes a file created since.
fn apply(restore: &Restore) -> Result<(), RewindError> {
    let io = |source| RewindError::Io {
        path: restore.path.clone(),
        source,
    };
    match &restore.target {
        Some(bytes) => {
            if let Some(parent) = std::path::Path::new(&restore.path).parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&restore.path, bytes).map_err(io)
        }
        None => match std::fs::remove_file(&restore.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        },
    }
}
