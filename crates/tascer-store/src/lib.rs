//! Tascer's embedded session store.
//!
//! One SQLite file (WAL mode) under `$TASCER_HOME` holds every session and
//! every message of it, written as they happen, so a session can be resumed
//! with its full history from another process, continued by working
//! directory, or forked. Beside them it keeps the contract leases, the LLM
//! reviewers' cache ([`ReviewCacheStore`]) and the webhook outbox
//! ([`WebhookOutbox`]), each in its own tables.

pub mod db;
mod error;
mod history;
mod lease;
pub mod outbox;
mod review_cache;
mod schema;
mod store;
mod summary;

pub use db::{Contention, Db, DbError};
pub use error::StoreError;
pub use history::{COMPACTED_HISTORY_PREFIX, compacted_history_start, history_from_messages};
pub use lease::{Acquired, Holder, Lease, LeaseStore, now_ms};
pub use outbox::{Delivery, DropRecord, Enqueued, NewDelivery, WebhookOutbox};
pub use review_cache::{CachedReview, ReviewCacheStore};
pub use store::{NewSession, SessionInfo, SessionStore, Totals};
pub use summary::{SessionSummary, session_summary};
