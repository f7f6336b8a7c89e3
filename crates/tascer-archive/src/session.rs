//! Archiving a recorded session of a Tascer home in one call (what
//! `tascer archive SESSION` and automatic archival after a session run),
//! the local record of archives, and evidence retention.
//!
//! [`archive_session`] is the hook point for whatever ends a session: the
//! CLI calls it after `tascer run` when `archive.auto` is set, and a
//! contract runner can call it when a contract's session ends.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_ledger::keys::{KeyPaths, load_home_signing_key};
use tascer_ledger::{EntryKind, Ledger, Subject};

use crate::create::{ArchiveRequest, Archived, stage, upload};
use crate::error::{ArchiveError, Result, io_err};
use crate::target::Location;
use crate::verify::verify_archive;
use crate::workdir::WorkdirPolicy;

/// The `archive` object of Tascer settings (`$TASCER_HOME/settings.json`,
/// `.tascer/settings.json`, `.tascer/settings.local.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ArchiveSettings {
    /// Where archives go: `s3://bucket/prefix` or a directory.
    pub to: Option<String>,
    /// Archive every session when it ends (needs `to`).
    pub auto: bool,
    /// Delete a session's local evidence files this many days after it
    /// ended, once an archive of it has been verified (`tascer archive prune`).
    pub retention_days: Option<u64>,
    /// What goes into the working-directory tarball.
    #[serde(flatten)]
    pub workdir: WorkdirPolicy,
}

impl ArchiveSettings {
    /// Reads the `archive` value of a settings file; `null`/absent gives
    /// the defaults.
    pub fn from_value(value: Option<&Value>) -> std::result::Result<Self, String> {
        match value {
            None | Some(Value::Null) => Ok(ArchiveSettings::default()),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("archive: {e}")),
        }
    }
}

/// One line of `<home>/archives/<session>.jsonl`: an archive made of the
/// session and verified after upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    /// Session id.
    pub session_id: String,
    /// The archive's URL.
    pub url: String,
    /// The ledger head the archive holds.
    pub head_seq: u64,
    /// Hash of that head.
    pub head_hash: String,
    /// When it was archived and verified (RFC 3339).
    pub verified_at: String,
}

/// The working directory a session recorded in its start entry
/// (`context.cwd`), if any.
pub fn recorded_workdir(ledger: &Ledger, session_id: &str) -> Result<Option<PathBuf>> {
    let entries = ledger.store().entries(session_id)?;
    Ok(entries
        .first()
        .filter(|e| e.kind == EntryKind::SessionStart)
        .and_then(|e| e.payload.pointer("/context/cwd"))
        .and_then(Value::as_str)
        .map(PathBuf::from))
}

fn records_path(home: &Path, session_id: &str) -> PathBuf {
    home.join("archives").join(format!("{session_id}.jsonl"))
}

/// The archives recorded for a session, oldest first.
pub fn records(home: &Path, session_id: &str) -> Result<Vec<ArchiveRecord>> {
    let path = records_path(home, session_id);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("cannot read", &path)(e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

fn append_record(home: &Path, record: &ArchiveRecord) -> Result<()> {
    let path = records_path(home, &record.session_id);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err("cannot create", dir))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_err("cannot write", &path))?;
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    file.write_all(line.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_err("cannot write", &path))
}

/// Archives one session of the Tascer home `home` to `dest`: its working
/// directory (`workdir`, else the one its start entry records, when it
/// still exists), ledger, evidence and attestation, signed with the home's
/// key. The uploaded archive is then verified from the destination (with
/// the home's key pinned) and recorded in `<home>/archives/<session>.jsonl`;
/// an archive that does not verify is an error and is not recorded.
pub async fn archive_session(
    home: &Path,
    session_id: &str,
    dest: &Location,
    workdir: Option<&Path>,
    policy: &WorkdirPolicy,
    subjects: Vec<Subject>,
) -> Result<(Archived, ArchiveRecord)> {
    let key = load_home_signing_key(home)?.ok_or_else(|| ArchiveError::NoKey {
        path: KeyPaths::in_home(home).private,
    })?;
    let ledger = Ledger::open_in_home(home, Some(key.clone()))?;
    let recorded = match workdir {
        Some(w) => Some(w.to_path_buf()),
        None => recorded_workdir(&ledger, session_id)?.filter(|w| w.is_dir()),
    };
    let staged = stage(&ArchiveRequest {
        ledger: &ledger,
        session_id,
        workdir: recorded.as_deref(),
        key: &key,
        subjects,
        policy: policy.clone(),
    })?;
    let archived = upload(&staged, dest).await?;
    let report = verify_archive(&archived.location, Some(&key.verifying_key()), None).await?;
    if !report.ok {
        let detail = report
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.what, p.detail))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ArchiveError::NotVerified {
            url: archived.url,
            detail,
        });
    }
    let record = ArchiveRecord {
        session_id: session_id.to_string(),
        url: archived.url.clone(),
        head_seq: archived.manifest.ledger_head.seq,
        head_hash: archived.manifest.ledger_head.hash.clone(),
        verified_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    append_record(home, &record)?;
    Ok((archived, record))
}

/// What [`prune_evidence`] did for one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneOutcome {
    /// Session id.
    pub session_id: String,
    /// True when its evidence files were deleted (or would be, dry run).
    pub pruned: bool,
    /// Why, or why not.
    pub reason: String,
}

/// Retention: deletes the evidence files (`<home>/evidence/<session>/`) of
/// every session whose last ledger entry is older than `days` days, but
/// only when an archive of it is recorded whose ledger head is the
/// session's current head AND that archive verifies now (downloaded again,
/// with the home's key pinned). Sessions that do not qualify are left
/// alone and say why. The ledger entries and the small evidence kept in
/// the database are never deleted. `env` gives the `AWS_*` settings for
/// S3 archives.
pub async fn prune_evidence(
    home: &Path,
    days: u64,
    dry_run: bool,
    env: &[(String, String)],
) -> Result<Vec<PruneOutcome>> {
    let key = load_home_signing_key(home)?.ok_or_else(|| ArchiveError::NoKey {
        path: KeyPaths::in_home(home).private,
    })?;
    let ledger = Ledger::open_in_home(home, Some(key.clone()))?;
    // None: no time is that far back, so nothing is old enough.
    let cutoff = i64::try_from(days)
        .ok()
        .and_then(chrono::TimeDelta::try_days)
        .and_then(|d| chrono::Utc::now().checked_sub_signed(d));
    let mut out = Vec::new();
    for session in ledger.store().sessions()? {
        let outcome = |pruned: bool, reason: String| PruneOutcome {
            session_id: session.clone(),
            pruned,
            reason,
        };
        let dir = ledger.evidence(&session).dir().to_path_buf();
        if !dir.exists() {
            continue;
        }
        let Some(last) = ledger.store().last_entry(&session)? else {
            continue;
        };
        let ended = chrono::DateTime::parse_from_rfc3339(&last.ts).map(|t| t.to_utc());
        match ended {
            Ok(t) if cutoff.is_some_and(|c| t < c) => {}
            Ok(_) => {
                out.push(outcome(
                    false,
                    format!("last entry {} is within {days} days", last.ts),
                ));
                continue;
            }
            Err(_) => {
                out.push(outcome(
                    false,
                    format!("last entry time {:?} is unreadable", last.ts),
                ));
                continue;
            }
        }
        let candidates: Vec<ArchiveRecord> = records(home, &session)?
            .into_iter()
            .filter(|r| r.head_seq == last.seq && r.head_hash == last.hash)
            .collect();
        if candidates.is_empty() {
            out.push(outcome(
                false,
                "no archive of its current ledger head is recorded".into(),
            ));
            continue;
        }
        let mut verified = None;
        let mut why = Vec::new();
        for record in candidates.iter().rev() {
            let loc = match Location::parse_with_env(&record.url, env.iter().cloned()) {
                Ok(l) => l,
                Err(e) => {
                    why.push(format!("{}: {e}", record.url));
                    continue;
                }
            };
            match verify_archive(&loc, Some(&key.verifying_key()), None).await {
                Ok(r) if r.ok => {
                    verified = Some(record.url.clone());
                    break;
                }
                Ok(r) => why.push(format!(
                    "{}: does not verify ({})",
                    record.url,
                    r.problems
                        .first()
                        .map_or(String::new(), |p| format!("{}: {}", p.what, p.detail))
                )),
                Err(e) => why.push(format!("{}: {e}", record.url)),
            }
        }
        let Some(url) = verified else {
            out.push(outcome(
                false,
                format!("no recorded archive verifies: {}", why.join("; ")),
            ));
            continue;
        };
        if !dry_run {
            std::fs::remove_dir_all(&dir).map_err(io_err("cannot delete", &dir))?;
        }
        out.push(outcome(true, format!("archived and verified at {url}")));
    }
    Ok(out)
}
