//! [`Ledger`]: the store, the evidence root and the signing key together.

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::{Value, json};
use tascer_store::{AttachedMessage, DecisionFilter};

use crate::digest::sha256_ref;
use crate::dsse::{Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::entry::{EntryKind, LedgerEntry, now_ts};
use crate::error::{LedgerError, Result};
use crate::evidence::{Evidence, EvidenceStore, SessionEvidence, is_inline};
use crate::intoto::{SESSION_PREDICATE_TYPE, Statement, Subject};
use crate::keys::{key_id, sslib_keyid};
use crate::payload::SessionStart;
use crate::record::ToolRecord;
use crate::report::{ReportAudit, ReportData};
use crate::sign::SignedHead;
use crate::store::LedgerStore;
use crate::verify::{VerifyReport, verify_session};

/// The ledger of every session in one database.
#[derive(Debug)]
pub struct Ledger {
    store: LedgerStore,
    evidence_root: PathBuf,
    key: Option<SigningKey>,
}

impl Ledger {
    /// Opens the ledger tables in the SQLite database at `db_path` (the
    /// session store's file), with session evidence under
    /// `evidence_root/<session>` and heads signed with `signing_key` when
    /// given.
    pub fn open(
        db_path: impl AsRef<Path>,
        evidence_root: impl Into<PathBuf>,
        signing_key: Option<SigningKey>,
    ) -> Result<Self> {
        Ok(Ledger::with_store(
            LedgerStore::open(db_path)?,
            evidence_root,
            signing_key,
        ))
    }

    /// The ledger tables in an open SQLite database (the session store's
    /// [`Db`](tascer_store::Db), so both write through one connection),
    /// with evidence and key as for [`open`](Self::open).
    pub fn with_db(
        db: std::sync::Arc<tascer_store::Db>,
        evidence_root: impl Into<PathBuf>,
        signing_key: Option<SigningKey>,
    ) -> Result<Self> {
        Ok(Ledger::with_store(
            LedgerStore::with_db(db)?,
            evidence_root,
            signing_key,
        ))
    }

    /// The ledger tables in a store backend (the session store's, so both
    /// share its connections), with evidence and key as for
    /// [`open`](Self::open).
    pub fn with_backend(
        backend: std::sync::Arc<dyn tascer_store::Backend>,
        evidence_root: impl Into<PathBuf>,
        signing_key: Option<SigningKey>,
    ) -> Self {
        Ledger::with_store(
            LedgerStore::with_backend(backend),
            evidence_root,
            signing_key,
        )
    }

    fn with_store(
        store: LedgerStore,
        evidence_root: impl Into<PathBuf>,
        signing_key: Option<SigningKey>,
    ) -> Self {
        Ledger {
            store,
            evidence_root: evidence_root.into(),
            key: signing_key,
        }
    }

    /// Opens the store the home is configured for
    /// ([`StoreConfig::for_home`](tascer_store::StoreConfig::for_home):
    /// `TASCER_STORE`, the home's `store` setting, else `<home>/tascer.db`),
    /// with evidence files under `<home>/evidence`.
    pub fn open_in_home(home: impl AsRef<Path>, signing_key: Option<SigningKey>) -> Result<Self> {
        let home = home.as_ref();
        let backend = tascer_store::open_home_backend(home)?;
        Ok(Ledger::with_backend(
            backend,
            home.join("evidence"),
            signing_key,
        ))
    }

    /// [`open_in_home`](Self::open_in_home) for a short-lived process (a
    /// hook process writes a few entries and exits): see
    /// [`StoreConfig::open_short_lived`](tascer_store::StoreConfig::open_short_lived).
    /// Call [`Backend::bound_wal`](tascer_store::Backend::bound_wal) on
    /// the store's backend before the process ends.
    pub fn open_in_home_short_lived(
        home: impl AsRef<Path>,
        signing_key: Option<SigningKey>,
    ) -> Result<Self> {
        let home = home.as_ref();
        let backend = tascer_store::open_home_backend_short_lived(home)?;
        Ok(Ledger::with_backend(
            backend,
            home.join("evidence"),
            signing_key,
        ))
    }

    /// The underlying store.
    pub fn store(&self) -> &LedgerStore {
        &self.store
    }

    /// The evidence root directory.
    pub fn evidence_root(&self) -> &Path {
        &self.evidence_root
    }

    /// The evidence files of one session (evidence larger than
    /// [`INLINE_EVIDENCE_LIMIT`](crate::INLINE_EVIDENCE_LIMIT); smaller
    /// evidence is in the database: see [`get_evidence`](Self::get_evidence)).
    pub fn evidence(&self, session_id: &str) -> EvidenceStore {
        EvidenceStore::for_session(&self.evidence_root, session_id)
    }

    /// The public half of the signing key, if one is configured.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        self.key.as_ref().map(SigningKey::verifying_key)
    }

    /// The key id ([`key_id`]) of the signing key, if one is configured.
    pub fn key_id(&self) -> Option<String> {
        self.verifying_key().as_ref().map(key_id)
    }

    /// Appends an entry (one transaction, head re-signed when a key is
    /// configured). For `session_start`, a missing or null
    /// `signing_key_id` is filled in with the configured key's id (or null).
    pub fn append(&self, session_id: &str, kind: EntryKind, payload: Value) -> Result<LedgerEntry> {
        self.append_with_evidence(session_id, kind, payload, &[])
    }

    /// [`append`](Self::append) with the evidence the entry refers to:
    /// each of `evidence` is stored under its digest, small ones in the
    /// same transaction as the entry, large ones as files written before
    /// it (so a committed entry never refers to evidence that is not
    /// there).
    pub fn append_with_evidence(
        &self,
        session_id: &str,
        kind: EntryKind,
        payload: Value,
        evidence: &[Vec<u8>],
    ) -> Result<LedgerEntry> {
        let entries = self.append_many(session_id, vec![(kind, payload)], evidence)?;
        crate::store::the_one(entries, session_id)
    }

    /// Appends entries in order, in one transaction, with the evidence
    /// they refer to (as [`append_with_evidence`](Self::append_with_evidence));
    /// the head is signed once, over the last entry.
    pub fn append_many(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        evidence: &[Vec<u8>],
    ) -> Result<Vec<LedgerEntry>> {
        let digests: Vec<String> = evidence.iter().map(|b| sha256_ref(b)).collect();
        let pairs = digests
            .iter()
            .map(String::as_str)
            .zip(evidence.iter().map(Vec::as_slice));
        self.write(session_id, entries, pairs, None)
    }

    /// [`append_many`](Self::append_many) with evidence whose digests are
    /// already computed (they went into the payloads): nothing is hashed
    /// twice.
    pub fn append_batch(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        evidence: &[Evidence],
    ) -> Result<Vec<LedgerEntry>> {
        let pairs = evidence.iter().map(|e| (e.digest(), e.bytes()));
        self.write(session_id, entries, pairs, None)
    }

    /// [`append_batch`](Self::append_batch) that also appends `message` to
    /// the session store in the same transaction, as when a model
    /// response's entry and its assistant message must be written together
    /// or not at all. The store is this ledger's backend: the session store
    /// must share it (as a session's store and ledger do).
    pub fn append_batch_with_message(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        evidence: &[Evidence],
        message: AttachedMessage<'_>,
    ) -> Result<Vec<LedgerEntry>> {
        let pairs = evidence.iter().map(|e| (e.digest(), e.bytes()));
        self.write(session_id, entries, pairs, Some(message))
    }

    /// Writes evidence (`(digest, bytes)`) and entries: large evidence as
    /// files first (unless the store keeps all evidence), then the rest and
    /// the entries in one transaction.
    fn write<'a>(
        &self,
        session_id: &str,
        mut entries: Vec<(EntryKind, Value)>,
        evidence: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        message: Option<AttachedMessage<'_>>,
    ) -> Result<Vec<LedgerEntry>> {
        for (kind, payload) in &mut entries {
            if *kind == EntryKind::SessionStart
                && let Some(obj) = payload.as_object_mut()
                && obj.get("signing_key_id").is_none_or(Value::is_null)
            {
                obj.insert("signing_key_id".into(), json!(self.key_id()));
            }
        }
        let files = self.evidence(session_id);
        let mut blobs = Vec::new();
        for (digest, bytes) in evidence {
            if is_inline(bytes.len()) || self.store.keeps_large_evidence() {
                blobs.push((digest.to_string(), bytes));
            } else {
                files.put_hashed(digest, bytes)?;
            }
        }
        self.store
            .append_many_with(session_id, entries, self.key.as_ref(), &blobs, message)
    }

    /// Appends the `session_start` entry.
    pub fn start_session(&self, session_id: &str, start: &SessionStart) -> Result<LedgerEntry> {
        self.append(session_id, EntryKind::SessionStart, start.to_payload()?)
    }

    /// Appends `tool_call_opened` for a call about to run.
    pub fn open_tool_call(&self, session_id: &str, record: &ToolRecord) -> Result<LedgerEntry> {
        self.append(session_id, EntryKind::ToolCallOpened, record.to_payload()?)
    }

    /// Seals `record` (sets its proof hash) and appends it as `tool_record`.
    pub fn close_tool_call(
        &self,
        session_id: &str,
        record: &mut ToolRecord,
    ) -> Result<LedgerEntry> {
        record.seal()?;
        self.append(session_id, EntryKind::ToolRecord, record.to_payload()?)
    }

    /// Stores evidence bytes for a session (in the database when small,
    /// else as a file) and returns `sha256:<hex>`.
    pub fn put_evidence(&self, session_id: &str, bytes: &[u8]) -> Result<String> {
        let files = self.evidence(session_id);
        SessionEvidence::new(&self.store, session_id, &files).put(bytes)
    }

    /// The evidence stored under `digest` for a session, checked against
    /// its digest.
    pub fn get_evidence(&self, session_id: &str, digest: &str) -> Result<Vec<u8>> {
        let files = self.evidence(session_id);
        SessionEvidence::new(&self.store, session_id, &files).get(digest)
    }

    /// The stored head of a session.
    pub fn head(&self, session_id: &str) -> Result<Option<SignedHead>> {
        self.store.head(session_id)
    }

    /// Appends a `checkpoint` entry (payload `note`, or `{}`) and returns
    /// the head signed over it. Needs a signing key.
    pub fn sign_checkpoint(&self, session_id: &str, note: Option<Value>) -> Result<SignedHead> {
        if self.key.is_none() {
            return Err(LedgerError::NoSigningKey);
        }
        let entry = self.append(
            session_id,
            EntryKind::Checkpoint,
            note.unwrap_or_else(|| json!({})),
        )?;
        self.store
            .head(session_id)?
            .filter(|h| h.seq == entry.seq)
            .ok_or_else(|| LedgerError::EmptySession(session_id.to_string()))
    }

    /// Verifies a session; without `trusted_key`, the ledger's own key (if
    /// any) is trusted. When the chain is intact and the database holds the
    /// session's stored summary, that summary is cross-checked against the
    /// chain ([`check_summary`](crate::check_summary)).
    pub fn verify(
        &self,
        session_id: &str,
        trusted_key: Option<&VerifyingKey>,
    ) -> Result<VerifyReport> {
        let own = self.verifying_key();
        let mut report = verify_session(
            &self.store,
            session_id,
            &self.evidence(session_id),
            trusted_key.or(own.as_ref()),
        )?;
        if report.first_broken.is_none()
            && let Some(summary) = self.store.backend().session_summary(session_id)?
        {
            let entries = self.store.entries(session_id)?;
            report.summary_mismatches = crate::check_summary(&entries, &summary);
            report.ok &= report.summary_mismatches.is_empty();
        }
        Ok(report)
    }

    /// The data of a session report: from its entries, with its rows of
    /// the audit tables (decisions, hook runs, metrics).
    pub fn report(&self, session_id: &str) -> Result<ReportData> {
        let entries = self.store.entries(session_id)?;
        if entries.is_empty() {
            return Err(LedgerError::EmptySession(session_id.to_string()));
        }
        let mut report =
            ReportData::from_entries(session_id, &entries, self.store.head(session_id)?);
        let audit = ReportAudit {
            decisions: self.store.decisions(&DecisionFilter {
                session: Some(session_id.to_string()),
                ..DecisionFilter::default()
            })?,
            hook_runs: self.store.hook_runs(session_id)?,
            metrics: self.store.metrics(session_id)?,
        };
        report.audit = Some(audit);
        Ok(report)
    }

    /// Exports a session as an in-toto Statement v1 in a DSSE envelope
    /// signed with the ledger's key. See [`export_attestation`].
    pub fn export_attestation(&self, session_id: &str, subjects: Vec<Subject>) -> Result<Envelope> {
        let key = self.key.as_ref().ok_or(LedgerError::NoSigningKey)?;
        export_attestation(self, session_id, subjects, key)
    }
}

/// Builds the session predicate: summary and ledger head.
pub fn session_predicate(report: &ReportData, verify: &VerifyReport) -> Value {
    let head = report.head.as_ref();
    json!({
        "session_id": report.session_id,
        "model": report.model,
        "status": report.status,
        "started_at": report.started_at,
        "ended_at": report.ended_at,
        "cost_usd": report.cost_usd,
        "usage": report.usage,
        "tool_calls": {
            "total": report.tools.len(),
            "by_status": report.tool_status_counts,
        },
        "permission_decisions": report.permission_decisions,
        "ledger": {
            "first_seq": 1,
            "last_seq": head.map(|h| h.seq),
            "head": head.map(|h| h.hash.clone()),
            "head_signature": head.and_then(|h| h.signature.clone()),
            "head_key_id": head.and_then(|h| h.key_id.clone()),
            "verified": verify.ok,
            "signed": verify.signed,
        },
        "generated_at": now_ts(),
    })
}

/// Exports a session as an in-toto Statement v1 (predicate type
/// [`SESSION_PREDICATE_TYPE`]) in a DSSE envelope signed with `key`.
///
/// The session is verified first (trusting `key`) and a broken ledger is
/// refused. Without `subjects`, the one subject is the ledger head itself:
/// name `tascer-ledger:<session_id>`, digest = the head entry's hash (the
/// SHA-256 of that entry's canonical bytes).
pub fn export_attestation(
    ledger: &Ledger,
    session_id: &str,
    subjects: Vec<Subject>,
    key: &SigningKey,
) -> Result<Envelope> {
    let verify = ledger.verify(session_id, Some(&key.verifying_key()))?;
    if let Some(b) = &verify.first_broken {
        return Err(LedgerError::Dsse(format!(
            "refusing to attest a broken ledger: {b}"
        )));
    }
    let report = ledger.report(session_id)?;
    let subjects = if subjects.is_empty() {
        let head = report
            .head
            .as_ref()
            .ok_or_else(|| LedgerError::EmptySession(session_id.to_string()))?;
        vec![Subject::sha256(
            format!("tascer-ledger:{session_id}"),
            head.hash.clone(),
        )]
    } else {
        subjects
    };
    let statement = Statement::new(
        subjects,
        SESSION_PREDICATE_TYPE,
        session_predicate(&report, &verify),
    );
    let payload = statement.to_canonical()?;
    Ok(Envelope::sign(
        IN_TOTO_PAYLOAD_TYPE,
        &payload,
        key,
        &sslib_keyid(&key.verifying_key()),
    ))
}
