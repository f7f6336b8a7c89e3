//! File checkpoints (the SDKs' `enable_file_checkpointing`): when on, each
//! change a file-writing tool (Write, Edit, MultiEdit, NotebookEdit) makes
//! is kept in the store with the file's content before it (up to
//! [`MAX_CHECKPOINT_FILE_BYTES`]) and the digest of what it left, under
//! the prompt whose turn made it, so [`crate::rewind`] can restore the
//! files as they were at any prompt. Bash commands are not tracked.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;
use tascer_ledger::digest::sha256_hex;
use tascer_store::{FileChange, MAX_CHECKPOINT_FILE_BYTES, SessionStore};

use crate::call_context::changed_files;

/// The tools whose changes are kept.
const CHECKPOINTED_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// A session's file checkpoints, shared by its agents (subagents' changes
/// count under the prompt whose turn ran them).
pub(crate) struct FileCheckpoints {
    store: Arc<SessionStore>,
    session_id: String,
    /// The uuid of the prompt whose turn is running.
    prompt: Mutex<Option<String>>,
}

/// What a file held before a call (a file's state).
pub(crate) struct FileState {
    path: PathBuf,
    /// `None`: the file did not exist.
    content: Option<Vec<u8>>,
}

/// The files a call may change, read before it runs.
pub(crate) struct BeforeCall {
    files: Vec<FileState>,
}

impl FileCheckpoints {
    /// The checkpoints of `session_id`, kept in `store`.
    pub fn new(store: Arc<SessionStore>, session_id: String) -> Self {
        FileCheckpoints {
            store,
            session_id,
            prompt: Mutex::new(None),
        }
    }

    /// A prompt's turn starts: its changes are kept under `uuid`.
    pub fn set_prompt(&self, uuid: &str) {
        *self.prompt.lock() = Some(uuid.to_string());
    }

    /// Reads the files a call of `tool_name` with `input` may change
    /// (`None` for a tool that is not tracked).
    pub fn before(&self, tool_name: &str, input: &Value, cwd: &Path) -> Option<BeforeCall> {
        if !CHECKPOINTED_TOOLS.contains(&tool_name) {
            return None;
        }
        let files = changed_files(tool_name, input, cwd)
            .into_iter()
            .map(|path| FileState::read(&path))
            .collect();
        Some(BeforeCall { files })
    }

    /// After the call `tool_use_id` ran: keeps each file it changed. A
    /// change that cannot be stored is logged (a later rewind then finds
    /// the file changed since and refuses it).
    pub fn after(&self, before: BeforeCall, tool_use_id: &str) {
        let Some(prompt) = self.prompt.lock().clone() else {
            return;
        };
        for state in before.files {
            let now = FileState::read(&state.path);
            if now.content == state.content {
                continue;
            }
            let change = FileChange {
                prompt_uuid: prompt.clone(),
                path: state.path.display().to_string(),
                existed: state.content.is_some(),
                before: state
                    .content
                    .filter(|c| c.len() <= MAX_CHECKPOINT_FILE_BYTES),
                after_sha256: now.content.as_deref().map(sha256_hex),
                tool_use_id: tool_use_id.to_string(),
            };
            if let Err(err) = self.store.record_file_change(&self.session_id, &change) {
                tracing::warn!(
                    "cannot keep the file checkpoint of {} ({err}); rewind_files will refuse it",
                    state.path.display()
                );
            }
        }
    }
}

impl FileState {
    /// The file's content now (`None` when it is not a readable file).
    pub fn read(path: &Path) -> FileState {
        FileState {
            path: path.to_path_buf(),
            content: std::fs::read(path).ok(),
        }
    }
}
