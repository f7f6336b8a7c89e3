//! Tascer session archives.
//!
//! An archive of one session is a set of objects under
//! `<destination>/<session>/<time>/` on S3 (or any S3-compatible server) or
//! in a local directory:
//!
//! - `workdir.tar.gz`: the session's working directory (`.gitignore`
//!   respected, exclusions and size limits from [`WorkdirPolicy`]);
//! - `ledger.jsonl` and `head.json`: the session's ledger entries and its
//!   signed head;
//! - `evidence/sha256/<2 hex>/<64 hex>`: every evidence blob and file;
//! - `attestation.intoto.jsonl`: the in-toto attestation (DSSE);
//! - `manifest.json`: a DSSE envelope, signed with the Tascer key, over a
//!   [`Manifest`] listing every object and every working-directory file
//!   with size and SHA-256, the ledger head and the signer key id. It is
//!   uploaded last: a prefix without a manifest is not an archive.
//!
//! [`verify_archive`] checks an archive from its objects alone, with the
//! ledger's own verifier. The format is described in `docs/archive.md`.

pub mod create;
pub mod error;
pub mod manifest;
pub mod session;
pub mod target;
pub mod verify;
pub mod workdir;

pub use create::{ArchiveRequest, Archived, Staged, list_archives, stage, upload};
pub use error::{ArchiveError, Result};
pub use manifest::{FileEntry, LedgerHead, Manifest, ManifestRejected, Signer, Skipped};
pub use session::{
    ArchiveRecord, ArchiveSettings, PruneOutcome, archive_session, prune_evidence, recorded_workdir,
};
pub use target::Location;
pub use verify::{ArchiveReport, VerifyProblem, verify_archive};
pub use workdir::WorkdirPolicy;
