//! Checking a session's hash chain and naming the first break.
//!
//! Pure functions over stored rows (no I/O), used by
//! [`verify_session`](crate::verify_session).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::digest::GENESIS_PREV_HASH;
use crate::entry::LedgerEntry;
use crate::store::RawEntry;

/// Why verification failed, naming what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum BreakReason {
    /// The entry's content no longer matches its hash (or was rewritten
    /// with a recomputed hash that the next entry does not link to).
    EditedEntry,
    /// The entry with this seq is missing.
    DeletedEntry,
    /// An entry that was not in the original chain sits at this seq.
    InsertedEntry,
    /// An original entry sits at the wrong position.
    Reordered,
    /// An evidence file referenced by this entry is missing or changed.
    EvidenceChanged {
        /// The referenced digest (`sha256:<hex>`).
        digest: String,
    },
    /// The head signature does not verify with the trusted key.
    BadSignature,
    /// The start entry names a signing key but the head has no signature
    /// (also how a cut-off tail shows when the head row was removed).
    UnsignedButKeyed,
    /// The signed head is not the last entry (truncated, or the head was
    /// replaced).
    HeadMismatch {
        /// The seq the head names.
        head_seq: u64,
        /// The last seq stored.
        last_seq: u64,
    },
}

impl BreakReason {
    /// A short name: `EditedEntry`, `DeletedEntry`, …
    pub fn name(&self) -> &'static str {
        match self {
            BreakReason::EditedEntry => "EditedEntry",
            BreakReason::DeletedEntry => "DeletedEntry",
            BreakReason::InsertedEntry => "InsertedEntry",
            BreakReason::Reordered => "Reordered",
            BreakReason::EvidenceChanged { .. } => "EvidenceChanged",
            BreakReason::BadSignature => "BadSignature",
            BreakReason::UnsignedButKeyed => "UnsignedButKeyed",
            BreakReason::HeadMismatch { .. } => "HeadMismatch",
        }
    }
}

/// The first broken point of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Broken {
    /// Sequence number of the first broken entry (or where one is missing).
    pub seq: u64,
    /// What happened.
    pub reason: BreakReason,
    /// A sentence for people.
    pub detail: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "entry {}: {}: {}",
            self.seq,
            self.reason.name(),
            self.detail
        )
    }
}

/// What [`check_chain`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainCheck {
    /// Entries that parsed, in stored order, up to the first break.
    pub entries: Vec<LedgerEntry>,
    /// The first break, if any.
    pub broken: Option<Broken>,
}

fn seq_of(raw: &RawEntry) -> u64 {
    u64::try_from(raw.seq).unwrap_or(0)
}

fn broken(seq: u64, reason: BreakReason, detail: impl Into<String>) -> Broken {
    Broken {
        seq,
        reason,
        detail: detail.into(),
    }
}

/// For each row, the seq at which its content hashes to its stored hash,
/// found by following `prev_hash` links back to the genesis: `Some(o)`
/// means "this is original entry `o`, intact".
fn original_seqs(parsed: &[Option<LedgerEntry>]) -> Vec<Option<u64>> {
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, entry) in parsed.iter().enumerate() {
        if let Some(e) = entry {
            children.entry(e.prev_hash.as_str()).or_default().push(i);
        }
    }
    let mut orig = vec![None; parsed.len()];
    // (index, candidate seq): start from entries that claim to be first.
    let mut stack: Vec<(usize, u64)> = children
        .get(GENESIS_PREV_HASH)
        .map(|v| v.iter().map(|&i| (i, 1)).collect())
        .unwrap_or_default();
    while let Some((i, candidate)) = stack.pop() {
        let Some(entry) = &parsed[i] else { continue };
        if orig[i].is_some()
            || entry.compute_hash_with_seq(candidate).ok() != Some(entry.hash.clone())
        {
            continue;
        }
        orig[i] = Some(candidate);
        if let Some(next) = children.get(entry.hash.as_str()) {
            stack.extend(next.iter().map(|&j| (j, candidate + 1)));
        }
    }
    orig
}

/// Checks seq contiguity from 1, every hash and every `prev_hash` link, and
/// names the first break.
pub fn check_chain(rows: &[RawEntry]) -> ChainCheck {
    let parsed: Vec<Option<LedgerEntry>> =
        rows.iter().map(|r| LedgerEntry::from_row(r).ok()).collect();
    let mut entries = Vec::with_capacity(rows.len());
    let mut orig: Option<Vec<Option<u64>>> = None;
    for (i, raw) in rows.iter().enumerate() {
        let expected = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
        if let Some(why) = seq_break(raw, expected) {
            return ChainCheck {
                entries,
                broken: Some(why),
            };
        }
        let entry = match LedgerEntry::from_row(raw) {
            Ok(e) => e,
            Err(why) => {
                return ChainCheck {
                    entries,
                    broken: Some(broken(expected, BreakReason::EditedEntry, why)),
                };
            }
        };
        if entry.hash_is_valid() {
            if let Some(why) = link_break(rows, i, &entry) {
                // The rewritten/inserted entry was already accepted: drop it.
                entries.pop();
                return ChainCheck {
                    entries,
                    broken: Some(why),
                };
            }
            entries.push(entry);
            continue;
        }
        // The content does not hash to the stored hash at this seq: find out
        // whether it is an intact entry from another position.
        let orig = orig.get_or_insert_with(|| original_seqs(&parsed));
        let why = misplaced_or_edited(rows, orig, i, &entry, &mut entries);
        return ChainCheck {
            entries,
            broken: Some(why),
        };
    }
    ChainCheck {
        entries,
        broken: None,
    }
}

/// The row at position `expected` (1-based) does not carry that seq: a row
/// from outside the chain, or a missing entry.
fn seq_break(raw: &RawEntry, expected: u64) -> Option<Broken> {
    if raw.seq < 1 || seq_of(raw) < expected {
        return Some(broken(
            seq_of(raw),
            BreakReason::InsertedEntry,
            format!(
                "a row with seq {} is not part of a chain that starts at 1",
                raw.seq
            ),
        ));
    }
    if seq_of(raw) > expected {
        return Some(broken(
            expected,
            BreakReason::DeletedEntry,
            format!(
                "entry {expected} is missing (next stored entry is {})",
                raw.seq
            ),
        ));
    }
    None
}

/// Row `i` is intact but does not link to the row before it: that row was
/// inserted, or rewritten with a recomputed hash (named as the break).
fn link_break(rows: &[RawEntry], i: usize, entry: &LedgerEntry) -> Option<Broken> {
    let want_prev = if i == 0 {
        GENESIS_PREV_HASH
    } else {
        rows[i - 1].hash.as_str()
    };
    if entry.prev_hash == want_prev {
        return None;
    }
    if i == 0 {
        return Some(broken(
            1,
            BreakReason::EditedEntry,
            "the first entry does not start from the genesis hash",
        ));
    }
    let expected = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
    let before = if i >= 2 {
        rows[i - 2].hash.as_str()
    } else {
        GENESIS_PREV_HASH
    };
    let prev_seq = expected - 1;
    Some(if entry.prev_hash == before {
        broken(
            prev_seq,
            BreakReason::InsertedEntry,
            format!("entry {expected} links past entry {prev_seq}: {prev_seq} was inserted"),
        )
    } else {
        broken(
            prev_seq,
            BreakReason::EditedEntry,
            format!(
                "entry {expected} does not link to entry {prev_seq}: \
                 {prev_seq} was rewritten with a recomputed hash"
            ),
        )
    })
}

/// Row `i`'s content does not hash to its stored hash at its seq: an
/// intact entry moved (reordered, renumbered after a deletion, pushed down
/// by an insertion; `entries` is cut back to before an insertion), or an
/// edited one.
fn misplaced_or_edited(
    rows: &[RawEntry],
    orig: &[Option<u64>],
    i: usize,
    entry: &LedgerEntry,
    entries: &mut Vec<LedgerEntry>,
) -> Broken {
    let expected = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
    // Its predecessor may be gone (deleted): try every position.
    let found = orig[i].or_else(|| {
        let max_seq = rows.iter().map(seq_of).max().unwrap_or(0);
        let limit = max_seq.max(u64::try_from(rows.len()).unwrap_or(u64::MAX)) + 1;
        (1..=limit).find(|&o| {
            o != expected && entry.compute_hash_with_seq(o).ok().as_ref() == Some(&entry.hash)
        })
    });
    match found {
        Some(o) if o > expected => {
            if orig.contains(&Some(expected)) {
                broken(
                    expected,
                    BreakReason::Reordered,
                    format!("entry {o} was moved to position {expected}"),
                )
            } else {
                broken(
                    expected,
                    BreakReason::DeletedEntry,
                    format!(
                        "original entry {expected} is gone; entry {o} was renumbered to {expected}"
                    ),
                )
            }
        }
        Some(o) if o < expected => {
            entries.truncate(usize::try_from(o - 1).unwrap_or(0));
            broken(
                o,
                BreakReason::InsertedEntry,
                format!(
                    "entry {o} was pushed to position {expected}: an entry was inserted at {o}"
                ),
            )
        }
        _ => broken(
            expected,
            BreakReason::EditedEntry,
            format!(
                "content hashes to {}, the stored hash is {}",
                entry.compute_hash().unwrap_or_else(|e| e.to_string()),
                entry.hash
            ),
        ),
    }
}
