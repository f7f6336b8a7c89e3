//! Tascer's store: sessions and their messages (resume, continue, fork)
//! and the ledger's tables.
//!
//! Everything goes through one trait, [`Backend`], with two
//! implementations: [`SqliteBackend`], one SQLite file (WAL mode) under
//! `$TASCER_HOME` — the embedded default — and `PgBackend`, a shared
//! PostgreSQL database for teams that run agents on many hosts (cargo
//! feature `postgres`, on by default).
//! [`StoreConfig`] decides which one a home uses (`TASCER_STORE`, the
//! home's `store` setting, else SQLite). Messages are written as they
//! happen, so a session can be resumed with its full history from another
//! process (on another host, with PostgreSQL), continued by working
//! directory, or forked. Beside them, always in the home's local SQLite
//! file, are the contract leases, the LLM reviewers' cache
//! ([`ReviewCacheStore`]), the webhook outbox ([`WebhookOutbox`]) and the
//! Claude Code calls waiting for their `PostToolUse` ([`PendingCalls`]),
//! each in its own tables.

pub mod audit;
pub mod backend;
pub mod baseline;
mod config;
pub mod db;
mod error;
mod file_history;
mod history;
mod lease;
pub mod outbox;
mod pending_calls;
#[cfg(feature = "postgres")]
pub mod postgres;
mod review_cache;
mod schema;
mod sqlite;
mod sqlite_audit;
mod sqlite_sessions;
mod store;
mod summary;

pub use audit::{
    DecisionFilter, DecisionRow, HookRunRow, MetricKind, MetricRow, SinceError, parse_since,
};
pub use backend::{
    AttachedMessage, Backend, BackendKind, BatchBuilder, Blob, BuildError, EntryRow, LedgerBatch,
    MessageRow, NewSession, Projection, SessionInfo, SignedHead, StoredMessage, Tail, Totals,
};
pub use config::{
    STORE_ENV, STORE_SETTING, StoreConfig, open_home_backend, open_home_backend_short_lived,
};
pub use db::{Contention, Db, DbError, HOME_DB_FILE};
pub use error::StoreError;
pub use file_history::{DeletedSession, FileChange, MAX_CHECKPOINT_FILE_BYTES};
pub use history::{COMPACTED_HISTORY_PREFIX, compacted_history_start, history_from_messages};
pub use lease::{
    Acquired, HEARTBEAT_EVERY, Holder, Lease, LeaseStore, STALE_AFTER, holder_alive, host_name,
    now_ms,
};
pub use outbox::{Delivery, DropRecord, Enqueued, NewDelivery, WebhookOutbox};
pub use pending_calls::PendingCalls;
#[cfg(feature = "postgres")]
pub use postgres::{PgBackend, PgOptions};
pub use review_cache::{CachedReview, ReviewCacheStore};
pub use sqlite::SqliteBackend;
pub use store::SessionStore;
pub use summary::SessionSummary;
