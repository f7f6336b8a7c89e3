//! The first write a session could not make.
//!
//! A session never goes on with a hole in its history: when a message
//! cannot be stored or a ledger entry cannot be appended (after the
//! database's own waiting and retries, see [`tascer_store::Db::write`]),
//! the failure is recorded here, nothing more is stored, no further tool
//! runs, and the turn ends with an error result naming the database.

use std::sync::Arc;

use parking_lot::Mutex;

/// Shared by the session's store writes and ledger writes. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct WriteFailure(Arc<Mutex<Option<String>>>);

impl WriteFailure {
    /// Records a failed write of `what` to the store at `location` (a
    /// file's path or a server's URL without its password; only the first
    /// failure is kept) and logs it.
    pub fn record(
        &self,
        session_id: &str,
        what: &str,
        location: &str,
        err: &dyn std::fmt::Display,
    ) {
        let mut slot = self.0.lock();
        if slot.is_some() {
            return;
        }
        let message = format!(
            "cannot store {what} of session {session_id} in {location}: {err}. The session \
             stopped so that its stored history has no hole; resume it with --resume \
             {session_id} once the store is writable"
        );
        tracing::error!(session = %session_id, "{message}");
        *slot = Some(message);
    }

    /// The first failure, if a write failed.
    pub fn get(&self) -> Option<String> {
        self.0.lock().clone()
    }

    /// True once a write failed.
    pub fn is_set(&self) -> bool {
        self.0.lock().is_some()
    }
}
