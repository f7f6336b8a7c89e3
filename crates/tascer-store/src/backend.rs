//! The storage seam: [`Backend`], one trait for everything Tascer keeps —
//! sessions and their messages, and the ledger's rows — implemented by
//! [`SqliteBackend`](crate::SqliteBackend) (one file under
//! `$TASCER_HOME`, the default) and [`PgBackend`](crate::PgBackend) (a
//! shared PostgreSQL database).
//!
//! A backend stores rows; it computes nothing that is proven. The ledger's
//! hash chain and head signature are computed by `tascer-ledger`, inside
//! the backend's append transaction: [`Backend::append_entries`] locks the
//! session's chain, reads its tail, hands it to a [`BatchBuilder`], and
//! writes what the builder returns (entries, projections, head) in the
//! same transaction. Both backends store the same text in the same columns,
//! so verification reads the same canonical bytes from either.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::audit::{DecisionFilter, DecisionRow, HookRunRow, MetricRow};
use crate::db::Db;
pub use crate::error::BuildError;
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};
use crate::summary::SessionSummary;

/// What is known about a stored session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    /// Session id (a UUID).
    pub id: String,
    /// Working directory the session ran in.
    pub cwd: String,
    /// Model it was started with.
    pub model: String,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last write.
    pub updated_at: String,
    /// The session it was forked from, if any.
    pub forked_from: Option<String>,
    /// Model calls so far.
    pub num_turns: u32,
    /// Cost so far, USD.
    pub total_cost_usd: f64,
    /// `open`, `success`, `error`, …
    pub status: String,
    /// The first prompt, for listings.
    pub first_prompt: Option<String>,
    /// The title set with `tascer sessions rename`, if any.
    pub title: Option<String>,
    /// Number of stored messages.
    pub message_count: u64,
}

/// A session to create.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// Session id (a UUID).
    pub id: &'a str,
    /// Working directory.
    pub cwd: &'a str,
    /// Model.
    pub model: &'a str,
    /// The session it forks, if any.
    pub forked_from: Option<&'a str>,
}

/// A session's running totals, as stored on its row.
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    /// Model calls so far.
    pub num_turns: u32,
    /// Cost so far, USD.
    pub total_cost_usd: f64,
    /// `running`, `success`, `error`, ...
    pub status: String,
}

/// Now, as stored: RFC 3339 UTC with milliseconds.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One ledger row as stored (the ledger's `RawEntry`): verification reads
/// these, so that a corrupt row is reported, not a load error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRow {
    /// `seq` column.
    pub seq: i64,
    /// `session_id` column.
    pub session_id: String,
    /// `ts` column.
    pub ts: String,
    /// `kind` column.
    pub kind: String,
    /// `payload` column (canonical JSON text when written by Tascer).
    pub payload: String,
    /// `prev_hash` column.
    pub prev_hash: String,
    /// `hash` column.
    pub hash: String,
}

/// A session's ledger head, as stored in `ledger_heads` and as written to
/// an archive's head file: the last entry's seq and hash, and the Ed25519
/// signature over them when signed. The signature is made and checked by
/// `tascer-ledger` (its `HeadSigning`); the store only keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedHead {
    /// Session id.
    pub session_id: String,
    /// Sequence number of the last entry (equal to the entry count).
    pub seq: u64,
    /// Hash of the last entry.
    pub hash: String,
    /// Base64 Ed25519 signature over the head's message, if signed.
    pub signature: Option<String>,
    /// Key id of the signing key, if signed.
    pub key_id: Option<String>,
    /// When it was signed (not covered by the signature).
    pub signed_at: Option<String>,
}

impl SignedHead {
    /// An unsigned head.
    pub fn unsigned(session_id: impl Into<String>, seq: u64, hash: impl Into<String>) -> Self {
        SignedHead {
            session_id: session_id.into(),
            seq,
            hash: hash.into(),
            signature: None,
            key_id: None,
            signed_at: None,
        }
    }
}

/// The last entry of a session's chain, which the next entry links to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// Its seq.
    pub seq: u64,
    /// Its hash.
    pub hash: String,
}

/// A row of the ledger's query tables, derived from an entry as it is
/// appended (never trusted by verification).
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// The latest record of a tool call (`tool_calls`, one row per call).
    ToolCall {
        /// The call's id.
        tool_use_id: String,
        /// Seq of the entry.
        seq: u64,
        /// Tool name.
        tool: String,
        /// Record status.
        status: String,
        /// When the call started.
        started_at: Option<String>,
        /// When it finished.
        finished_at: Option<String>,
        /// The record's proof hash.
        proof_hash: Option<String>,
        /// The record (canonical JSON).
        record: String,
    },
    /// A permission decision (`permission_decisions`).
    PermissionDecision(DecisionRow),
    /// A hook run (`hook_executions`).
    HookExecution(HookRunRow),
    /// A measurement (`metrics`).
    Metric(MetricRow),
}

/// What one ledger append writes, besides evidence: the new entries in
/// order, their projections, and the new head.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerBatch {
    /// New entries, continuing the tail.
    pub entries: Vec<EntryRow>,
    /// Query rows derived from them.
    pub projections: Vec<Projection>,
    /// The session's new head (replaces the stored one).
    pub head: Option<SignedHead>,
}

/// Builds the entries of one append from the chain's tail (`None` for an
/// empty chain). It runs inside the append's transaction, after the tail
/// was read under the session's lock, and may run again when the
/// transaction is retried; it must only compute.
pub type BatchBuilder = Box<dyn FnMut(Option<&Tail>) -> Result<LedgerBatch, BuildError> + Send>;

/// Evidence to store with an append: `(digest, bytes)`, the digest as
/// `sha256:<hex>` (computed by the caller).
pub type Blob = (String, Vec<u8>);

/// A message to append, prepared by the session store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRow {
    /// The message's uuid.
    pub uuid: String,
    /// `user`, `assistant`, `system`, `result`, `stream_event`.
    pub kind: &'static str,
    /// The message as JSON.
    pub data: String,
    /// The prompt text, when this is the session's first prompt candidate.
    pub prompt: Option<String>,
}

/// A message written in the same transaction as ledger entries (see
/// [`Backend::append_entries`]), with the running totals it carries.
#[derive(Debug, Clone, Copy)]
pub struct AttachedMessage<'a> {
    /// The message.
    pub row: &'a MessageRow,
    /// The session's running totals, recorded with it when given.
    pub totals: Option<&'a Totals>,
}

/// A stored message: its seq and JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Position in the session, from 1.
    pub seq: i64,
    /// The message as JSON.
    pub data: String,
}

/// Which engine a backend runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// One SQLite file.
    Sqlite,
    /// A PostgreSQL database.
    Postgres,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Sqlite => "SQLite",
            BackendKind::Postgres => "PostgreSQL",
        })
    }
}

/// Everything Tascer stores, behind one interface.
///
/// Every write is one transaction that is retried on contention or a
/// transient failure (a lock held by another process, a dropped
/// connection, a serialization failure); when the retries are spent it
/// returns an error naming the store. No method updates a ledger entry;
/// only [`Backend::delete_session`] deletes them, all of one session at
/// once (the other sessions' chains are untouched).
pub trait Backend: std::any::Any + fmt::Debug + Send + Sync {
    /// The engine.
    fn kind(&self) -> BackendKind;

    /// Where the data is, for messages: the SQLite file's path, or the
    /// PostgreSQL URL without its password.
    fn location(&self) -> &str;

    /// The home's local SQLite database, for what stays on this host (the
    /// LLM reviewers' cache, the webhook outbox): the store's own file when
    /// the store is SQLite, else `<home>/tascer.db`.
    fn local_db(&self, home: &Path) -> Result<Arc<Db>, StoreError> {
        Ok(Arc::new(Db::open_in_home(home)?))
    }

    /// Keeps the store's write-ahead log bounded, for a process that
    /// opened it short-lived (see
    /// [`StoreConfig::open_short_lived`](crate::StoreConfig::open_short_lived)),
    /// before it ends: SQLite checkpoints and truncates the WAL once it
    /// has grown past [`WAL_TRUNCATE_BYTES`](crate::db::WAL_TRUNCATE_BYTES).
    /// Nothing to do elsewhere (the default).
    fn bound_wal(&self) {}

    /// Keeps the store's write-ahead log from growing, for a process that
    /// keeps a store opened short-lived open between writes (the hook
    /// server): SQLite copies the WAL into the database once the process
    /// has committed [`WAL_CHECKPOINT_COMMITS`](crate::db::WAL_CHECKPOINT_COMMITS)
    /// transactions since the last time, without truncating it, so that
    /// the next writes reuse it. Such a
    /// process calls [`bound_wal`](Self::bound_wal) before it ends.
    /// Nothing to do elsewhere (the default).
    fn checkpoint_wal_in_place(&self) {}

    /// True when [`checkpoint_wal_in_place`](Self::checkpoint_wal_in_place)
    /// has work to do (a caller hands it to another thread only then).
    /// Never, elsewhere (the default).
    fn wal_checkpoint_due(&self) -> bool {
        false
    }

    /// True when the store's file is no longer the one this backend opened
    /// (deleted or replaced, as when a home is removed): a long-lived
    /// process then opens the store again. Always false for a store that
    /// is not a file (the default).
    fn replaced(&self) -> bool {
        false
    }

    /// True when every evidence blob, whatever its size, is kept in the
    /// store (PostgreSQL: a session is then complete in the shared store);
    /// false when large evidence goes to files under the home (SQLite).
    fn keeps_large_evidence(&self) -> bool;

    /// Creates a session row; [`StoreError::AlreadyExists`] when the id is
    /// taken.
    fn create_session(&self, new: &NewSession<'_>) -> Result<(), StoreError>;

    /// Appends a message at the next seq of its session and, in the same
    /// transaction, records the running totals when given.
    fn append_message(
        &self,
        session_id: &str,
        message: &MessageRow,
        totals: Option<&Totals>,
    ) -> Result<(), StoreError>;

    /// Records a session's running totals and status.
    fn update_totals(&self, session_id: &str, totals: &Totals) -> Result<(), StoreError>;

    /// One session, if it exists.
    fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError>;

    /// The most recently updated session that ran in `cwd`.
    fn latest_for_cwd(&self, cwd: &str) -> Result<Option<SessionInfo>, StoreError>;

    /// The most recent sessions, newest first.
    fn list(&self, limit: usize) -> Result<Vec<SessionInfo>, StoreError>;

    /// Every message of a session, in order.
    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError>;

    /// Copies a session and its messages (those up to and including
    /// `through_seq`, when given) into a new session `new_id` (frames
    /// carry the new id), with the file checkpoints of the prompts it
    /// copied, in one transaction.
    fn fork(&self, from: &str, new_id: &str, through_seq: Option<i64>) -> Result<(), StoreError>;

    /// The stored summary of a session, for cross-checks against its
    /// ledger; `None` when there is no such session.
    fn session_summary(&self, session_id: &str) -> Result<Option<SessionSummary>, StoreError>;

    /// Sets a session's title; false when no session has this id.
    fn set_title(&self, session_id: &str, title: &str) -> Result<bool, StoreError>;

    /// Deletes a session in one transaction: its row, messages, file
    /// checkpoints, and its ledger (entries, head, evidence, the audit
    /// rows). `None` when there was nothing of it to delete.
    fn delete_session(&self, session_id: &str) -> Result<Option<DeletedSession>, StoreError>;

    /// Appends one file change to a session's file checkpoints.
    fn record_file_change(&self, session_id: &str, change: &FileChange) -> Result<(), StoreError>;

    /// A session's file checkpoints, in the order they were recorded.
    fn file_changes(&self, session_id: &str) -> Result<Vec<FileChange>, StoreError>;

    /// Appends to a session's ledger in one transaction: stores `blobs`
    /// (a blob already stored under its digest is left as it is), locks
    /// the session's chain, reads its tail, calls `build`, and writes the
    /// entries, projections and head it returns. Two writers to one
    /// session serialize; `(session_id, seq)` is unique.
    ///
    /// With `message`, the same transaction also appends that message to
    /// the session (as [`append_message`](Self::append_message)): a model
    /// response's ledger entry and its stored assistant message are then
    /// both written or neither, whenever the process is killed.
    fn append_entries(
        &self,
        session_id: &str,
        blobs: &[Blob],
        build: BatchBuilder,
        message: Option<AttachedMessage<'_>>,
    ) -> Result<(), StoreError>;

    /// Every ledger row of a session, ordered by seq, unchecked.
    fn entries(&self, session_id: &str) -> Result<Vec<EntryRow>, StoreError>;

    /// The last ledger row of a session.
    fn last_entry(&self, session_id: &str) -> Result<Option<EntryRow>, StoreError>;

    /// The stored head of a session.
    fn head(&self, session_id: &str) -> Result<Option<SignedHead>, StoreError>;

    /// Replaces a session's head.
    fn put_head(&self, head: &SignedHead) -> Result<(), StoreError>;

    /// Ids of every session with ledger entries, sorted.
    fn ledger_sessions(&self) -> Result<Vec<String>, StoreError>;

    /// Stores one evidence blob (left as it is when already stored).
    fn put_blob(&self, session_id: &str, digest: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// The blob stored under `digest` for a session, unchecked.
    fn blob(&self, session_id: &str, digest: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Every blob of a session, ordered by digest, unchecked.
    fn blobs(&self, session_id: &str) -> Result<Vec<Blob>, StoreError>;

    /// Records a measurement ([`Projection::Metric`]) outside the chain
    /// (any other projection is written as given).
    fn record_metric(&self, session_id: &str, metric: &Projection) -> Result<(), StoreError>;

    /// The projected tool-call records of a session (canonical JSON), in
    /// the order the calls were opened.
    fn tool_call_records(&self, session_id: &str) -> Result<Vec<String>, StoreError>;

    /// Writes ledger rows exactly as given (no hashing, no checks, no
    /// projections), in one transaction: for loading an archived session
    /// into a fresh store to verify it.
    fn import_entries(&self, rows: &[EntryRow]) -> Result<(), StoreError>;

    /// The permission decisions `filter` selects, across sessions, oldest
    /// first (with a limit: the most recent ones, still oldest first).
    fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRow>, StoreError>;

    /// Every hook run of a session, in ledger order.
    fn hook_runs(&self, session_id: &str) -> Result<Vec<HookRunRow>, StoreError>;

    /// Every measurement of a session, in the order recorded.
    fn metrics(&self, session_id: &str) -> Result<Vec<MetricRow>, StoreError>;
}

/// The message JSON `data` with its `session_id` set to `new_id` (a fork's
/// copy of a frame).
pub(crate) fn with_session_id(data: &str, new_id: &str) -> Result<String, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(data)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert("session_id".into(), new_id.into());
    }
    Ok(value.to_string())
}
