//! File checkpoints and session administration rows: what a session's
//! file-writing tools changed (kept only when file checkpointing is on, so
//! `rewind_files` can restore it), and what deleting a session removed.

use serde::Serialize;

/// The most bytes of one file's earlier content a checkpoint keeps. A
/// larger file's change is recorded without its content, and a rewind
/// across it is refused naming the file.
pub const MAX_CHECKPOINT_FILE_BYTES: usize = 8 * 1024 * 1024;

/// One change a session's tool (Write, Edit, MultiEdit, NotebookEdit) made
/// to one file, as a file checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The uuid of the user prompt whose turn made the change (or, for a
    /// rewind's own rows, the latest prompt when it ran).
    pub prompt_uuid: String,
    /// The file's absolute path.
    pub path: String,
    /// Whether the file existed before the change.
    pub existed: bool,
    /// Its content before the change: `None` when it did not exist, or
    /// when it was larger than [`MAX_CHECKPOINT_FILE_BYTES`] (then
    /// `existed` is true).
    pub before: Option<Vec<u8>>,
    /// Lowercase hex SHA-256 of its content after the change; `None` when
    /// the change left no file.
    pub after_sha256: Option<String>,
    /// The tool call that made it (`rewind` for a rewind's own rows).
    pub tool_use_id: String,
}

impl FileChange {
    /// True when the content before the change is kept (or there was no
    /// file), so the change can be undone.
    pub fn restorable(&self) -> bool {
        !self.existed || self.before.is_some()
    }
}

/// What deleting a session removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DeletedSession {
    /// Stored messages.
    pub messages: u64,
    /// Ledger entries.
    pub ledger_entries: u64,
    /// File checkpoint rows.
    pub file_changes: u64,
}
