//! The session store: sessions and their messages, over a [`Backend`].

use std::path::Path;
use std::sync::Arc;

use tascer_core::{ChatMessage, Message};

use crate::backend::{Backend, MessageRow, NewSession, SessionInfo, Totals};
use crate::db::Db;
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};
use crate::history::history_from_messages;
use crate::sqlite::SqliteBackend;
use crate::summary::SessionSummary;

/// The session store: sessions and their messages, in the home's
/// [`Backend`] (SQLite by default, PostgreSQL when configured; see
/// [`StoreConfig`](crate::StoreConfig)).
///
/// Every write is its own transaction, retried by the backend on
/// contention, so whatever was written survives a crash of the process
/// and no write is lost to another process writing.
#[derive(Debug, Clone)]
pub struct SessionStore {
    backend: Arc<dyn Backend>,
}

impl SessionStore {
    /// Opens (creating if needed) an SQLite store at `path`, with its own
    /// connection.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Ok(Self::with_backend(Arc::new(SqliteBackend::open(path)?)))
    }

    /// The store over an open SQLite database (shared with the ledger,
    /// say); creates its tables if they are missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        Ok(Self::with_backend(Arc::new(SqliteBackend::with_db(db)?)))
    }

    /// The store over a backend (shared with the ledger, say).
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        SessionStore { backend }
    }

    /// Opens the store the Tascer home is configured for
    /// ([`StoreConfig::for_home`](crate::StoreConfig::for_home)): by
    /// default the SQLite file `tascer.db` inside the home.
    pub fn open_in_home(home: impl AsRef<Path>) -> Result<Self, StoreError> {
        Ok(Self::with_backend(crate::open_home_backend(home.as_ref())?))
    }

    /// Where the data is: the SQLite file's path or the PostgreSQL URL
    /// (without its password).
    pub fn location(&self) -> &str {
        self.backend.location()
    }

    /// The backend, to share with the ledger.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Creates a session row.
    pub fn create_session(&self, new: &NewSession<'_>) -> Result<(), StoreError> {
        self.backend.create_session(new)
    }

    /// Appends one message to a session (its own transaction).
    pub fn append_message(&self, session_id: &str, message: &Message) -> Result<(), StoreError> {
        self.append_message_with_totals(session_id, message, None)
    }

    /// Appends one message to a session and, in the same transaction,
    /// records the session's running totals when given (one write instead
    /// of two when both change together, as after each model call).
    pub fn append_message_with_totals(
        &self,
        session_id: &str,
        message: &Message,
        totals: Option<&Totals>,
    ) -> Result<(), StoreError> {
        let row = Self::message_row(message)?;
        self.backend.append_message(session_id, &row, totals)
    }

    /// The row a message is stored as (its kind, uuid, JSON, and its text
    /// when it may be the session's first prompt), for a backend write
    /// made elsewhere: with the model response's ledger entry, say (see
    /// [`Backend::append_entries`]).
    pub fn message_row(message: &Message) -> Result<MessageRow, StoreError> {
        let data = serde_json::to_string(message)?;
        let (kind, uuid) = describe(message);
        let prompt = match message {
            Message::User(u) if u.parent_tool_use_id.is_none() => match &u.message.content {
                tascer_core::UserContent::Text(t) => Some(t.chars().take(200).collect::<String>()),
                tascer_core::UserContent::Blocks(_) => None,
            },
            _ => None,
        };
        let row = MessageRow {
            uuid: uuid.to_string(),
            kind,
            data,
            prompt,
        };
        Ok(row)
    }

    /// Records a session's running totals and status.
    pub fn update_totals(
        &self,
        session_id: &str,
        num_turns: u32,
        total_cost_usd: f64,
        status: &str,
    ) -> Result<(), StoreError> {
        self.backend.update_totals(
            session_id,
            &Totals {
                num_turns,
                total_cost_usd,
                status: status.to_string(),
            },
        )
    }

    /// One session, if it exists.
    pub fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.backend.session(id)
    }

    /// The most recently updated session that ran in `cwd`.
    pub fn latest_for_cwd(&self, cwd: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.backend.latest_for_cwd(cwd)
    }

    /// The most recent sessions, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<SessionInfo>, StoreError> {
        self.backend.list(limit)
    }

    /// Every message of a session, in order.
    pub fn messages(&self, session_id: &str) -> Result<Vec<Message>, StoreError> {
        self.backend
            .messages(session_id)?
            .into_iter()
            .map(|row| {
                serde_json::from_str(&row.data).map_err(|source| StoreError::Corrupt {
                    session_id: session_id.to_string(),
                    seq: row.seq,
                    source,
                })
            })
            .collect()
    }

    /// The conversation to send to the model when resuming a session.
    pub fn history(&self, session_id: &str) -> Result<Vec<ChatMessage>, StoreError> {
        if self.session(session_id)?.is_none() {
            return Err(StoreError::NotFound(session_id.to_string()));
        }
        Ok(history_from_messages(&self.messages(session_id)?))
    }

    /// Copies a session's messages into a new session `new_id`, with the
    /// file checkpoints of its prompts, in one transaction.
    pub fn fork(&self, from: &str, new_id: &str) -> Result<SessionInfo, StoreError> {
        self.backend.fork(from, new_id, None)?;
        self.session(new_id)?
            .ok_or_else(|| StoreError::NotFound(new_id.to_string()))
    }

    /// Copies a session's messages up to and including the one whose uuid
    /// is `through_uuid` into a new session `new_id`, with the file
    /// checkpoints of the prompts it copied, in one transaction; the
    /// parent keeps all of its own. [`StoreError::NoSuchMessage`] when the
    /// session has no such message.
    pub fn fork_at(
        &self,
        from: &str,
        new_id: &str,
        through_uuid: &str,
    ) -> Result<SessionInfo, StoreError> {
        let seq = self
            .backend
            .messages(from)?
            .into_iter()
            .find(|row| message_uuid(&row.data).as_deref() == Some(through_uuid))
            .map(|row| row.seq)
            .ok_or_else(|| StoreError::NoSuchMessage(through_uuid.to_string()))?;
        self.backend.fork(from, new_id, Some(seq))?;
        self.session(new_id)?
            .ok_or_else(|| StoreError::NotFound(new_id.to_string()))
    }

    /// The stored summary of a session (see [`SessionSummary`]).
    pub fn summary(&self, session_id: &str) -> Result<Option<SessionSummary>, StoreError> {
        self.backend.session_summary(session_id)
    }

    /// Sets a session's title ([`StoreError::NotFound`] for an unknown id).
    pub fn rename(&self, session_id: &str, title: &str) -> Result<(), StoreError> {
        if self.backend.set_title(session_id, title)? {
            Ok(())
        } else {
            Err(StoreError::NotFound(session_id.to_string()))
        }
    }

    /// Deletes a session with its messages, file checkpoints and ledger
    /// ([`StoreError::NotFound`] when nothing of it is stored).
    pub fn delete_session(&self, session_id: &str) -> Result<DeletedSession, StoreError> {
        self.backend
            .delete_session(session_id)?
            .ok_or_else(|| StoreError::NotFound(session_id.to_string()))
    }

    /// Appends one change to a session's file checkpoints.
    pub fn record_file_change(
        &self,
        session_id: &str,
        change: &FileChange,
    ) -> Result<(), StoreError> {
        self.backend.record_file_change(session_id, change)
    }

    /// A session's file checkpoints, in order.
    pub fn file_changes(&self, session_id: &str) -> Result<Vec<FileChange>, StoreError> {
        self.backend.file_changes(session_id)
    }
}

fn describe(message: &Message) -> (&'static str, &str) {
    let kind = match message {
        Message::User(_) => "user",
        Message::Assistant(_) => "assistant",
        Message::System(_) => "system",
        Message::Result(_) => "result",
        Message::StreamEvent(_) => "stream_event",
    };
    (kind, message.uuid())
}

/// The `uuid` of a stored message's JSON, if it has one.
fn message_uuid(data: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(data).ok()?;
    value.get("uuid")?.as_str().map(str::to_string)
}
