//! The ledger store: a session's entries, head, projections and evidence
//! blobs, in the home's store backend ([`tascer_store::Backend`]: the
//! SQLite file `$TASCER_HOME/tascer.db` by default, or the shared
//! PostgreSQL database).
//!
//! `ledger_entries` and `ledger_heads` are the record; `tool_calls`,
//! `permission_decisions`, `hook_executions` and `metrics` are projections
//! for queries (the last three are the audit tables, docs/audit.md),
//! derived from entries as they are appended ([`project`]) and never
//! trusted by verification. `ledger_evidence` holds evidence
//! blobs by digest (see [`crate::evidence`]); like evidence files, they are
//! checked against their digest, never trusted.
//!
//! The chain is computed here, not in the backend: an append hands the
//! backend a builder that turns the chain's tail (read under the backend's
//! per-session lock, inside its transaction) into the new entries, their
//! projections and the signed head. Either backend stores the same text,
//! so verification reads the same canonical bytes.

use std::path::Path;
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use parking_lot::Mutex;
use serde_json::Value;
use tascer_store::{
    AttachedMessage, Backend, Db, DecisionFilter, DecisionRow, EntryRow, HookRunRow, LedgerBatch,
    MetricRow, Projection, SignedHead, SqliteBackend, StoreError,
};

use crate::digest::GENESIS_PREV_HASH;
use crate::entry::{EntryKind, LedgerEntry, now_ts};
use crate::error::{LedgerError, Result};
use crate::jcs;
pub use crate::projection::project;
use crate::record::ToolRecord;
use crate::sign::HeadSigning as _;

/// A ledger row as stored, before any check: verification reads these so
/// that a corrupt row is reported, not a load error (parse it with
/// [`LedgerEntry::from_row`]).
pub type RawEntry = EntryRow;

/// A backend error as a ledger error: a builder's own error comes back as
/// it was raised.
fn from_store(err: StoreError) -> LedgerError {
    match err {
        StoreError::Build(inner) => match inner.downcast::<LedgerError>() {
            Ok(ledger) => *ledger,
            Err(other) => LedgerError::Store(StoreError::Build(other)),
        },
        other => LedgerError::Store(other),
    }
}

/// The ledger's tables in a store backend.
#[derive(Debug, Clone)]
pub struct LedgerStore {
    backend: Arc<dyn Backend>,
}

impl LedgerStore {
    /// Opens (creating if needed) an SQLite database at `path`, with its
    /// own connection.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::with_backend(Arc::new(
            SqliteBackend::open(path).map_err(from_store)?,
        )))
    }

    /// The ledger tables in an open SQLite database (shared with the
    /// session store, say); creates them if they are missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self> {
        Ok(Self::with_backend(Arc::new(
            SqliteBackend::with_db(db).map_err(from_store)?,
        )))
    }

    /// The ledger tables in a backend (shared with the session store).
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        LedgerStore { backend }
    }

    /// Where the data is: the SQLite file's path or the PostgreSQL URL
    /// (without its password).
    pub fn location(&self) -> &str {
        self.backend.location()
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Appends one entry to a session's chain, in one transaction that also
    /// updates the projections and the session head (signed with `key` when
    /// given). The chain continues from the last committed entry, so a
    /// resumed session (another process, after a crash) extends the same
    /// chain.
    pub fn append(
        &self,
        session_id: &str,
        kind: EntryKind,
        payload: Value,
        key: Option<&SigningKey>,
    ) -> Result<LedgerEntry> {
        let entries = self.append_many(session_id, vec![(kind, payload)], key, &[])?;
        the_one(entries, session_id)
    }

    /// Appends entries to a session's chain, in order, in one transaction:
    /// like [`append`](Self::append) for each, with the head written (and
    /// signed) once, over the last. In the same transaction it stores
    /// `blobs` (`(digest, bytes)` pairs, digest as `sha256:<hex>`) in
    /// `ledger_evidence`, so entries and the evidence they refer to are
    /// committed together; a blob already stored under its digest is left
    /// as it is. Nothing is written when any payload has no canonical
    /// form.
    pub fn append_many(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        key: Option<&SigningKey>,
        blobs: &[(String, &[u8])],
    ) -> Result<Vec<LedgerEntry>> {
        self.append_many_with(session_id, entries, key, blobs, None)
    }

    /// [`append_many`](Self::append_many) that, with `message`, also
    /// appends that message to the session store in the same transaction
    /// (see [`Backend::append_entries`]).
    pub fn append_many_with(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        key: Option<&SigningKey>,
        blobs: &[(String, &[u8])],
        message: Option<AttachedMessage<'_>>,
    ) -> Result<Vec<LedgerEntry>> {
        if entries.is_empty() && blobs.is_empty() && message.is_none() {
            return Ok(Vec::new());
        }
        // Canonicalize first: a payload without a canonical form never
        // reaches the database.
        let entries = entries
            .into_iter()
            .map(|(kind, payload)| {
                let text = jcs::canonical_string(&payload)?;
                Ok((kind, payload, text))
            })
            .collect::<Result<Vec<_>>>()?;
        let appended: Arc<Mutex<Vec<LedgerEntry>>> = Arc::default();
        let builder = ChainBuilder {
            session_id: session_id.to_string(),
            entries,
            key: key.cloned(),
            appended: Arc::clone(&appended),
        };
        let blobs: Vec<(String, Vec<u8>)> = blobs
            .iter()
            .map(|(digest, bytes)| (digest.clone(), bytes.to_vec()))
            .collect();
        self.backend
            .append_entries(
                session_id,
                &blobs,
                Box::new(move |tail| builder.build(tail).map_err(Into::into)),
                message,
            )
            .map_err(from_store)?;
        Ok(std::mem::take(&mut *appended.lock()))
    }

    /// Every stored row of a session, ordered by `seq`, unchecked.
    pub fn raw_entries(&self, session_id: &str) -> Result<Vec<RawEntry>> {
        self.backend.entries(session_id).map_err(from_store)
    }

    /// Every entry of a session, ordered by `seq` (not verified; see
    /// [`verify_session`](crate::verify_session)).
    pub fn entries(&self, session_id: &str) -> Result<Vec<LedgerEntry>> {
        self.raw_entries(session_id)?
            .iter()
            .map(|raw| parse(raw, session_id))
            .collect()
    }

    /// The last entry of a session, if any.
    pub fn last_entry(&self, session_id: &str) -> Result<Option<LedgerEntry>> {
        self.backend
            .last_entry(session_id)
            .map_err(from_store)?
            .map(|raw| parse(&raw, session_id))
            .transpose()
    }

    /// The stored head of a session, if any.
    pub fn head(&self, session_id: &str) -> Result<Option<SignedHead>> {
        self.backend.head(session_id).map_err(from_store)
    }

    /// Replaces a session's head (used by checkpoint signing).
    pub fn put_head(&self, head: &SignedHead) -> Result<()> {
        self.backend.put_head(head).map_err(from_store)
    }

    /// Ids of every session with ledger entries, sorted.
    pub fn sessions(&self) -> Result<Vec<String>> {
        self.backend.ledger_sessions().map_err(from_store)
    }

    /// Stores one evidence blob of a session under `digest`
    /// (`sha256:<hex>`, computed by the caller), in its own transaction.
    /// A blob already stored under that digest is left as it is.
    pub fn put_blob(&self, session_id: &str, digest: &str, bytes: &[u8]) -> Result<()> {
        self.backend
            .put_blob(session_id, digest, bytes)
            .map_err(from_store)
    }

    /// The evidence blob stored under `digest` for a session, unchecked.
    pub fn blob(&self, session_id: &str, digest: &str) -> Result<Option<Vec<u8>>> {
        self.backend.blob(session_id, digest).map_err(from_store)
    }

    /// Every evidence blob of a session, as `(digest, bytes)`, ordered by
    /// digest; unchecked.
    pub fn blobs(&self, session_id: &str) -> Result<Vec<(String, Vec<u8>)>> {
        self.backend.blobs(session_id).map_err(from_store)
    }

    /// True when every evidence blob is kept in the store whatever its
    /// size (the PostgreSQL store), not only the small ones.
    pub fn keeps_large_evidence(&self) -> bool {
        self.backend.keeps_large_evidence()
    }

    /// Records a measurement for a session outside the chain (`kind` and
    /// `name` as in [`MetricRow`]; `ts` and `session_id` are filled in).
    pub fn record_metric(&self, session_id: &str, mut metric: MetricRow) -> Result<()> {
        if metric.ts.is_empty() {
            metric.ts = now_ts();
        }
        self.backend
            .record_metric(session_id, &Projection::Metric(metric))
            .map_err(from_store)
    }

    /// The permission decisions `filter` selects, across sessions, oldest
    /// first (see [`Backend::decisions`]).
    pub fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRow>> {
        self.backend.decisions(filter).map_err(from_store)
    }

    /// Every hook run of a session, in ledger order.
    pub fn hook_runs(&self, session_id: &str) -> Result<Vec<HookRunRow>> {
        self.backend.hook_runs(session_id).map_err(from_store)
    }

    /// Every measurement of a session, in the order recorded.
    pub fn metrics(&self, session_id: &str) -> Result<Vec<MetricRow>> {
        self.backend.metrics(session_id).map_err(from_store)
    }

    /// The projected tool calls of a session (latest record of each), in
    /// the order they were opened.
    pub fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolRecord>> {
        self.backend
            .tool_call_records(session_id)
            .map_err(from_store)?
            .iter()
            .map(|row| Ok(serde_json::from_str(row)?))
            .collect()
    }

    /// Writes ledger rows exactly as given (no hashing, no checks, no
    /// projections), in one transaction.
    pub fn import_entries(&self, rows: &[RawEntry]) -> Result<()> {
        self.backend.import_entries(rows).map_err(from_store)
    }
}

/// Parses a stored row, naming it when it is corrupt.
fn parse(raw: &RawEntry, session_id: &str) -> Result<LedgerEntry> {
    LedgerEntry::from_row(raw).map_err(|detail| LedgerError::Corrupt {
        session_id: session_id.to_string(),
        seq: raw.seq,
        detail,
    })
}

/// The one entry a single-entry append wrote.
pub(crate) fn the_one(mut entries: Vec<LedgerEntry>, session_id: &str) -> Result<LedgerEntry> {
    entries
        .pop()
        .ok_or_else(|| LedgerError::EmptySession(session_id.to_string()))
}

/// What one append computes from the chain's tail, inside the backend's
/// transaction (see the module docs).
struct ChainBuilder {
    session_id: String,
    /// Kind, payload and the payload's canonical text.
    entries: Vec<(EntryKind, Value, String)>,
    key: Option<SigningKey>,
    /// The entries of the last build: those committed when the append
    /// returns.
    appended: Arc<Mutex<Vec<LedgerEntry>>>,
}

impl ChainBuilder {
    fn build(&self, tail: Option<&tascer_store::Tail>) -> Result<LedgerBatch> {
        let (mut seq, mut prev_hash) = match tail {
            Some(tail) => (tail.seq + 1, tail.hash.clone()),
            None => (1, GENESIS_PREV_HASH.to_string()),
        };
        let mut batch = LedgerBatch::default();
        let mut appended = Vec::with_capacity(self.entries.len());
        for (kind, payload, text) in &self.entries {
            let entry = LedgerEntry::with_canonical_payload(
                seq,
                &self.session_id,
                now_ts(),
                *kind,
                payload.clone(),
                text,
                prev_hash,
            )?;
            batch.entries.push(EntryRow {
                seq: i64::try_from(seq).unwrap_or(i64::MAX),
                session_id: self.session_id.clone(),
                ts: entry.ts.clone(),
                kind: kind.as_str().to_string(),
                payload: text.clone(),
                prev_hash: entry.prev_hash.clone(),
                hash: entry.hash.clone(),
            });
            batch.projections.extend(project(&entry, text));
            prev_hash = entry.hash.clone();
            seq += 1;
            appended.push(entry);
        }
        if let Some(last) = appended.last() {
            let head = match &self.key {
                Some(key) => SignedHead::sign(&self.session_id, last.seq, &last.hash, key)?,
                None => SignedHead::unsigned(&self.session_id, last.seq, &last.hash),
            };
            batch.head = Some(head);
        }
        *self.appended.lock() = appended;
        Ok(batch)
    }
}
