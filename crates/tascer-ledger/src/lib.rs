//! Tascer's tamper-evident ledger.
//!
//! Every session is a hash chain of [`LedgerEntry`]s stored in SQLite
//! (the session store's file, the ledger's own tables). Each entry's hash is
//! the SHA-256 of its RFC 8785 canonical JSON ([`jcs`]) and names the
//! previous entry's hash; the session head is signed with Ed25519 in the
//! same transaction as every append. Content (tool outputs, model
//! responses, changed files) is content-addressed evidence: small blobs in
//! the database, large ones in an [`EvidenceStore`] directory. [`verify_session`] recomputes
//! everything and names the first broken entry; [`export_attestation`]
//! wraps a session summary in an in-toto Statement v1 inside a DSSE
//! envelope.
//!
//! For people and tools, [`audit`] opens a Tascer home's ledger to verify
//! sessions and gather reports, and [`report_text`] turns them into the
//! lines `tascer verify` and `tascer report` print.
//!
//! This is tamper evidence and provenance, not proof of intent. The format
//! is specified in `docs/ledger.md`.

pub mod audit;
pub mod chain;
pub mod context;
pub mod digest;
pub mod dsse;
pub mod entry;
pub mod error;
pub mod evidence;
pub mod intoto;
pub mod jcs;
pub mod keys;
pub mod ledger;
pub mod payload;
pub mod projection;
pub mod record;
pub mod report;
pub mod report_audit;
pub mod report_text;
pub mod sign;
pub mod store;
pub mod summary;
pub mod transfer;
pub mod tree;
pub mod verify;
mod worktree_watch;

pub use audit::{
    SessionReport, VerifyOutcome, changed_file_subjects, open_home_ledger, open_ledger,
    report_session, session_error, trusted_key, verify_sessions,
};
pub use chain::{BreakReason, Broken};
pub use context::{
    CaptureStats, ContextCapturer, ContextError, ContextSnapshot, Freshness, GitHead, GitHeads,
    GitState, git_head,
};
pub use digest::{GENESIS_PREV_HASH, sha256_hex, sha256_ref};
pub use dsse::{Envelope, EnvelopeSignature, IN_TOTO_PAYLOAD_TYPE, pae};
pub use ed25519_dalek::{SigningKey, VerifyingKey};
pub use entry::{EntryKind, LedgerEntry};
pub use error::{AuditError, LedgerError, Result};
pub use evidence::{Evidence, EvidenceStore, INLINE_EVIDENCE_LIMIT, SessionEvidence};
pub use intoto::{SESSION_PREDICATE_TYPE, STATEMENT_V1, Statement, Subject};
pub use keys::{
    KeyPaths, generate_keypair, key_id, load_home_signing_key, load_or_create_home_signing_key,
    load_signing_key, load_verifying_key, sslib_keyid,
};
pub use ledger::{Ledger, export_attestation};
pub use payload::{ModelResponsePayload, ReviewerVerdict, SessionEnd, SessionStart};
pub use projection::input_digest;
pub use record::{GateOutcome, ToolRecord, ToolStatus};
pub use report::{ReportAudit, ReportData, ReportReview, ReportTool};
pub use report_text::{report_lines, verify_lines};
pub use sign::{HeadSigning, SignedHead, head_message};
pub use store::LedgerStore;
pub use summary::{SummaryMismatch, check_summary};
pub use tree::{CHILD_SESSION_FIELD, ChildLink, TreeNode, child_link_payload, child_links};
pub use verify::{VerifyReport, verify_session};
