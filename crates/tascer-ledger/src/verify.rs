//! Verifying a stored session: chain, evidence, head signature.

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chain::{BreakReason, Broken, ChainCheck, check_chain};
use crate::entry::{EntryKind, LedgerEntry};
use crate::error::{LedgerError, Result};
use crate::evidence::{EvidenceStore, SessionEvidence};
use crate::keys::key_id;
use crate::sign::SignedHead;
use crate::store::LedgerStore;

/// The outcome of [`verify_session`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Session id.
    pub session_id: String,
    /// True when nothing is broken.
    pub ok: bool,
    /// Entries whose hash, link and evidence were checked and found intact.
    pub entries_checked: u64,
    /// The first broken entry, if any.
    pub first_broken: Option<Broken>,
    /// True when the head signature was checked with a trusted key and is
    /// valid.
    pub signed: bool,
    /// Things that are not failures but limit what was proven.
    pub warnings: Vec<String>,
    /// Fields of the session's stored summary that disagree with the
    /// ledger (see [`check_summary`](crate::check_summary)); any makes
    /// `ok` false.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary_mismatches: Vec<crate::SummaryMismatch>,
}

/// Every evidence reference in a payload: each `sha256:<hex>` string in an
/// array (or a lone string) under an object key named `evidence`, at any
/// depth.
pub fn evidence_refs(payload: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![payload];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if k == "evidence" {
                        match child {
                            Value::String(s) => out.push(s.clone()),
                            Value::Array(items) => out
                                .extend(items.iter().filter_map(Value::as_str).map(str::to_string)),
                            _ => {}
                        }
                    }
                    stack.push(child);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// The signing key id the session's start entry records, if any.
pub fn start_key_id(entries: &[LedgerEntry]) -> Option<String> {
    entries
        .first()
        .filter(|e| e.kind == EntryKind::SessionStart)
        .and_then(|e| e.payload.get("signing_key_id"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Recomputes every hash of a session, checks seq contiguity from 1 and
/// every `prev_hash` link, all evidence referenced by an entry (blobs in
/// the store, files in `evidence`), and
/// the head signature (with `trusted_key` when given), and names the first
/// broken entry.
///
/// Without `trusted_key` a signature cannot be checked: the report says so
/// in a warning and `signed` stays false, but the head must still match the
/// last entry.
pub fn verify_session(
    store: &LedgerStore,
    session_id: &str,
    evidence: &EvidenceStore,
    trusted_key: Option<&VerifyingKey>,
) -> Result<VerifyReport> {
    let rows = store.raw_entries(session_id)?;
    let head = store.head(session_id)?;
    if rows.is_empty() && head.is_none() {
        return Err(LedgerError::EmptySession(session_id.to_string()));
    }
    let mut report = VerifyReport {
        session_id: session_id.to_string(),
        ok: false,
        entries_checked: 0,
        first_broken: None,
        signed: false,
        warnings: Vec::new(),
        summary_mismatches: Vec::new(),
    };
    let chain = check_chain(&rows);
    let evidence = SessionEvidence::new(store, session_id, evidence);
    if let Some(b) = check_evidence(&chain, &evidence, &mut report) {
        report.first_broken = Some(b);
        return Ok(report);
    }
    if let Some(b) = chain.broken {
        report.first_broken = Some(b);
        return Ok(report);
    }
    let entries = chain.entries;
    let start_key = start_key_id(&entries);
    let last_seq = entries.last().map_or(0, |e| e.seq);
    let Some(head) = head else {
        check_headless(start_key, last_seq, &mut report);
        return Ok(report);
    };
    // Signature first: a consistent-looking head proves nothing unsigned.
    if let Some(b) = check_signature(&head, start_key, trusted_key, last_seq, &mut report) {
        report.first_broken = Some(b);
        return Ok(report);
    }
    if let Some(b) = head_break(&head, &entries) {
        report.signed = false;
        report.first_broken = Some(b);
        return Ok(report);
    }
    report.ok = true;
    Ok(report)
}

/// The evidence of the entries before the chain break, in order; counts
/// each entry whose evidence is intact, and names the first that is not.
fn check_evidence(
    chain: &ChainCheck,
    evidence: &SessionEvidence<'_>,
    report: &mut VerifyReport,
) -> Option<Broken> {
    for entry in &chain.entries {
        if chain.broken.as_ref().is_some_and(|b| entry.seq >= b.seq) {
            break;
        }
        for digest in evidence_refs(&entry.payload) {
            if let Err(e) = evidence.verify(&digest) {
                return Some(Broken {
                    seq: entry.seq,
                    reason: BreakReason::EvidenceChanged { digest },
                    detail: e.to_string(),
                });
            }
        }
        report.entries_checked += 1;
    }
    None
}

/// A session without a head: broken when its start named a signing key,
/// else intact with a warning.
fn check_headless(start_key: Option<String>, last_seq: u64, report: &mut VerifyReport) {
    if let Some(id) = start_key {
        report.first_broken = Some(Broken {
            seq: last_seq,
            reason: BreakReason::UnsignedButKeyed,
            detail: format!(
                "the session started with signing key {id} but has no signed head \
                 (the head was removed, or the tail was cut off)"
            ),
        });
        return;
    }
    report
        .warnings
        .push("the session has no head record; a cut-off tail cannot be detected".into());
    report.ok = true;
}

/// The head's signature: checked with the trusted key (setting
/// `report.signed`), or a warning when it cannot be; the break when it is
/// missing although the start named a key, or does not verify.
fn check_signature(
    head: &SignedHead,
    start_key: Option<String>,
    trusted_key: Option<&VerifyingKey>,
    last_seq: u64,
    report: &mut VerifyReport,
) -> Option<Broken> {
    match (&head.signature, trusted_key) {
        (None, _) => {
            if let Some(id) = &start_key {
                return Some(Broken {
                    seq: head.seq.min(last_seq).max(1),
                    reason: BreakReason::UnsignedButKeyed,
                    detail: format!(
                        "the session started with signing key {id} but its head is not signed"
                    ),
                });
            }
            report
                .warnings
                .push("the session is not signed: a cut-off tail cannot be detected".into());
        }
        (Some(_), Some(key)) => {
            let trusted_id = key_id(key);
            let problem = match &start_key {
                Some(id) if id != &trusted_id => Some(format!(
                    "the session started with key {id}, the trusted key is {trusted_id}"
                )),
                _ => head.verify(key).err(),
            };
            if let Some(detail) = problem {
                return Some(Broken {
                    seq: head.seq,
                    reason: BreakReason::BadSignature,
                    detail,
                });
            }
            report.signed = true;
        }
        (Some(_), None) => report.warnings.push(format!(
            "the head is signed by key {} but no public key was given: signature not checked",
            head.key_id.as_deref().unwrap_or("(unknown)")
        )),
    }
    None
}

/// The head does not name the last entry: entries added after it, or
/// entries cut off (or the head replaced).
fn head_break(head: &SignedHead, entries: &[LedgerEntry]) -> Option<Broken> {
    let last = entries.last();
    let last_seq = last.map_or(0, |e| e.seq);
    let last_hash = last.map(|e| e.hash.as_str()).unwrap_or_default();
    if head.seq == last_seq && head.hash == last_hash {
        return None;
    }
    let at_head = usize::try_from(head.seq)
        .ok()
        .and_then(|s| s.checked_sub(1))
        .and_then(|i| entries.get(i));
    Some(
        if head.seq < last_seq && at_head.is_some_and(|e| e.hash == head.hash) {
            Broken {
                seq: head.seq + 1,
                reason: BreakReason::InsertedEntry,
                detail: format!(
                    "entries {}..={last_seq} were added after the head (seq {})",
                    head.seq + 1,
                    head.seq
                ),
            }
        } else {
            Broken {
                seq: (last_seq + 1).min(head.seq.max(1)),
                reason: BreakReason::HeadMismatch {
                    head_seq: head.seq,
                    last_seq,
                },
                detail: format!(
                    "the head names entry {} ({}), the ledger ends at entry {last_seq}: \
                     entries were cut off or the head was replaced",
                    head.seq, head.hash
                ),
            }
        },
    )
}
