//! A Tascer home's ledger, read for people and tools: open it without
//! creating a database, pick the key to trust, verify one or every session
//! (with the lines `tascer verify` prints), gather a session's report and
//! the files an attestation names. `tascer verify` / `report` / `export`
//! and the gatekeeper's audit tools share these; they print nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::Value;
use tascer_core::error_chain;
use tascer_store::StoreConfig;

use crate::dsse::Envelope;
use crate::error::{AuditError, LedgerError};
use crate::intoto::Subject;
use crate::keys::{KeyPaths, key_id, load_home_signing_key, load_verifying_key};
use crate::ledger::Ledger;
use crate::record::ToolStatus;
use crate::report::ReportData;
use crate::report_text::verify_lines;
use crate::verify::VerifyReport;

/// Tools whose input names a file they change, and the input field holding it.
const FILE_CHANGING_TOOLS: [(&str, &str); 4] = [
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// Opens the ledger of the Tascer home without a signing key, refusing to
/// create a database where there is none.
pub fn open_ledger(home: &Path) -> Result<Ledger, AuditError> {
    open_home_ledger(home, None)
}

/// Opens the ledger of the Tascer home's store (`TASCER_STORE`, the home's
/// `store` setting, else `<home>/tascer.db`) with `key`, refusing to create
/// an SQLite database where there is none.
pub fn open_home_ledger(home: &Path, key: Option<SigningKey>) -> Result<Ledger, AuditError> {
    let config = StoreConfig::for_home(home)?;
    if !config.exists() {
        return Err(AuditError::NoDatabase {
            location: config.describe(),
        });
    }
    Ledger::open_in_home(home, key).map_err(|source| AuditError::Open {
        location: config.describe(),
        source: Box::new(source),
    })
}

/// A ledger error about `session`, with "no entries" turned into the
/// one-line error users should see.
pub fn session_error(session: &str, err: LedgerError) -> AuditError {
    match err {
        LedgerError::EmptySession(_) => AuditError::UnknownSession {
            session: session.to_owned(),
        },
        source => AuditError::Session {
            session: session.to_owned(),
            source: Box::new(source),
        },
    }
}

/// The key trusted for verification: `explicit` (a `--key` file), else the
/// home's public key (or the public half of its private key), else none.
pub fn trusted_key(
    home: &Path,
    explicit: Option<&Path>,
) -> Result<Option<VerifyingKey>, AuditError> {
    let public_key = |path: &Path| {
        load_verifying_key(path).map_err(|source| AuditError::PublicKey {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
    };
    if let Some(path) = explicit {
        return public_key(path).map(Some);
    }
    let paths = KeyPaths::in_home(home);
    if paths.public.is_file() {
        return public_key(&paths.public).map(Some);
    }
    Ok(load_home_signing_key(home)
        .map_err(|source| AuditError::PrivateKey {
            path: paths.private.clone(),
            source: Box::new(source),
        })?
        .map(|k| k.verifying_key()))
}

/// The outcome of verifying one or all sessions.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct VerifyOutcome {
    /// True when every verified session is intact.
    pub ok: bool,
    /// One JSON report per session (or `{session_id, ok: false, error}`).
    pub reports: Vec<Value>,
    /// The lines `tascer verify` prints for people.
    pub lines: Vec<String>,
}

/// Verifies `session`, or every session with ledger entries when it is
/// `None`, trusting `key_path` (else the home's key: [`trusted_key`]). An
/// unknown or unreadable single session is an error; with all sessions,
/// such a session counts as failed and the others go on. A single session
/// is verified with the child sessions it recorded (contracts run by a
/// manager).
pub fn verify_sessions(
    home: &Path,
    session: Option<&str>,
    key_path: Option<&Path>,
) -> Result<VerifyOutcome, AuditError> {
    let ledger = open_ledger(home)?;
    let key = trusted_key(home, key_path)?;
    let all = session.is_none();
    let sessions = match session {
        Some(session) => vec![session.to_owned()],
        None => ledger
            .store()
            .sessions()
            .map_err(|e| AuditError::ListSessions(Box::new(e)))?,
    };
    let mut out = VerifyOutcome {
        ok: true,
        ..VerifyOutcome::default()
    };
    if sessions.is_empty() {
        out.lines.push(format!(
            "no sessions with ledger entries in {}",
            home.display()
        ));
        return Ok(out);
    }
    for session in &sessions {
        let report = match ledger.verify(session, key.as_ref()) {
            Ok(r) => r,
            Err(err) if !all => return Err(session_error(session, err)),
            Err(err) => {
                out.ok = false;
                let err = error_chain(&session_error(session, err));
                out.reports.push(serde_json::json!({
                    "session_id": session, "ok": false, "error": err,
                }));
                out.lines.push(format!("✗ {session}: cannot verify: {err}"));
                continue;
            }
        };
        out.ok &= report.ok;
        let mut value = serde_json::to_value(&report)?;
        let head = ledger.head(session).ok().flatten();
        let signer = head
            .and_then(|h| h.key_id)
            .or_else(|| key.as_ref().filter(|_| report.signed).map(key_id));
        out.lines
            .extend(verify_lines(&report, signer.as_deref(), key.is_some()));
        if !all {
            let children = verify_children(&ledger, session, key.as_ref(), &mut out)?;
            if !children.is_null() {
                value["children"] = children;
            }
        }
        out.reports.push(value);
    }
    Ok(out)
}

/// Verifies the child sessions `session` recorded: each must verify and
/// hold the recorded head. Adds their lines to `out`; returns their JSON
/// (null when there are none).
fn verify_children(
    ledger: &Ledger,
    session: &str,
    key: Option<&VerifyingKey>,
    out: &mut VerifyOutcome,
) -> Result<Value, AuditError> {
    let children = ledger
        .verify_children(session, key)
        .map_err(|err| session_error(session, err))?;
    for node in &children {
        out.ok &= node.ok();
        let indent = "    ".repeat(node.depth);
        let link = format!(
            "child of {} (entry {}, head {} at entry {})",
            node.parent, node.link.parent_seq, node.link.head, node.link.seq
        );
        if let Some(err) = &node.error {
            out.lines
                .push(format!("{indent}✗ {}: {link}: {err}", node.link.session_id));
        } else if let Some(r) = &node.report {
            let signer = ledger
                .head(&node.link.session_id)
                .ok()
                .flatten()
                .and_then(|h| h.key_id);
            for line in verify_lines(r, signer.as_deref(), key.is_some()) {
                out.lines.push(format!("{indent}{line}"));
            }
            out.lines.push(format!("{indent}    {link}"));
        }
    }
    if children.is_empty() {
        return Ok(Value::Null);
    }
    Ok(serde_json::to_value(&children)?)
}

/// A session's report data and its verification with the home's key.
#[derive(Debug)]
#[non_exhaustive]
pub struct SessionReport {
    /// What the ledger holds about the session.
    pub data: ReportData,
    /// The verification (an error when the session could not be checked).
    pub verify: Result<VerifyReport, AuditError>,
    /// True when a trusted public key was at hand.
    pub key_given: bool,
}

impl SessionReport {
    /// The report for people ([`report_lines`](crate::report_text::report_lines)).
    pub fn lines(&self) -> Vec<String> {
        crate::report_text::report_lines(&self.data, &self.verify, self.key_given)
    }

    /// The verdict: the session's ledger verified intact (hashes, chain,
    /// evidence, records' proofs, head signature).
    pub fn success(&self) -> bool {
        matches!(&self.verify, Ok(report) if report.ok)
    }

    /// The verification as JSON: the verify report, or `{ok: false,
    /// error}` when the session could not be checked.
    fn verification(&self) -> Result<Value, AuditError> {
        Ok(match &self.verify {
            Ok(report) => serde_json::to_value(report)?,
            Err(err) => serde_json::json!({"ok": false, "error": error_chain(err)}),
        })
    }

    /// The report data as JSON with the verdict beside it: `success` and
    /// `verification` (`tascer report --format json`).
    pub fn to_json(&self) -> Result<Value, AuditError> {
        let mut value = serde_json::to_value(&self.data)?;
        value["success"] = Value::Bool(self.success());
        value["verification"] = self.verification()?;
        Ok(value)
    }

    /// The proof report a CI job keeps (`tascer report --ci`, written to
    /// `.ci/proof-report.json`): `success`, the session, each tool call's
    /// record with its proof check, the status counts and the verification.
    pub fn proof_report(&self) -> Result<Value, AuditError> {
        let records = self
            .data
            .tools
            .iter()
            .map(|tool| {
                let mut record = serde_json::to_value(&tool.record)?;
                record["proof_valid"] = Value::Bool(tool.proof_valid);
                record["entry_hash"] = Value::String(tool.entry_hash.clone());
                Ok(record)
            })
            .collect::<Result<Vec<Value>, serde_json::Error>>()?;
        Ok(serde_json::json!({
            "success": self.success(),
            "session_id": self.data.session_id,
            "status": self.data.status,
            "records": records,
            "tool_status_counts": self.data.tool_status_counts,
            "verification": self.verification()?,
        }))
    }
}

/// The report data of `session` in `home`'s ledger and, verified with the
/// home's key, its verification.
pub fn report_session(home: &Path, session: &str) -> Result<SessionReport, AuditError> {
    let ledger = open_ledger(home)?;
    let data = ledger
        .report(session)
        .map_err(|e| session_error(session, e))?;
    let key = trusted_key(home, None)?;
    let verify = ledger
        .verify(session, key.as_ref())
        .map_err(|e| session_error(session, e));
    Ok(SessionReport {
        data,
        verify,
        key_given: key.is_some(),
    })
}

/// Subjects for an attestation: the files the session's Write/Edit/
/// MultiEdit/NotebookEdit calls changed that still exist, with the SHA-256
/// of their current content. Relative paths are resolved against the
/// record's `context.cwd`; names are relative to it when the file is under it.
pub fn changed_file_subjects(data: &ReportData) -> Result<Vec<Subject>, AuditError> {
    let mut subjects: BTreeMap<String, Subject> = BTreeMap::new();
    for tool in &data.tools {
        let r = &tool.record;
        if tool.status() == ToolStatus::Blocked {
            continue;
        }
        let Some((_, field)) = FILE_CHANGING_TOOLS.iter().find(|(t, _)| *t == r.tool) else {
            continue;
        };
        let Some(file) = r.input.get(*field).and_then(Value::as_str) else {
            continue;
        };
        let cwd = r
            .context
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from);
        let path = match &cwd {
            Some(cwd) if Path::new(file).is_relative() => cwd.join(file),
            _ => PathBuf::from(file),
        };
        if !path.is_file() {
            continue;
        }
        let name = cwd
            .as_deref()
            .and_then(|c| path.strip_prefix(c).ok())
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let subject =
            Subject::from_file(name.clone(), &path).map_err(|source| AuditError::Hash {
                path: path.clone(),
                source: Box::new(source),
            })?;
        subjects.insert(name, subject);
    }
    Ok(subjects.into_values().collect())
}

/// A session's signed attestation: what `tascer export --attestation`
/// writes and `tascer serve` offers for download.
#[derive(Debug)]
#[non_exhaustive]
pub struct Attestation {
    /// The in-toto Statement in its DSSE envelope.
    pub envelope: Envelope,
    /// How many subjects the Statement names (at least one: the session).
    pub subjects: usize,
    /// The id of the key that signed it.
    pub key_id: String,
}

/// Exports `session` of `home`'s ledger as an attestation signed with the
/// home's key: the changed files that still exist are its subjects
/// ([`changed_file_subjects`]). A broken ledger is refused.
pub fn attest_session(home: &Path, session: &str) -> Result<Attestation, AuditError> {
    let paths = KeyPaths::in_home(home);
    let key = load_home_signing_key(home)
        .map_err(|source| AuditError::PrivateKey {
            path: paths.private.clone(),
            source: Box::new(source),
        })?
        .ok_or_else(|| AuditError::NoSigningKey {
            path: paths.private.clone(),
        })?;
    let key_id = key_id(&key.verifying_key());
    let ledger = open_home_ledger(home, Some(key))?;
    let data = ledger
        .report(session)
        .map_err(|e| session_error(session, e))?;
    let subjects = changed_file_subjects(&data)?;
    let count = subjects.len().max(1);
    let envelope = ledger
        .export_attestation(session, subjects)
        .map_err(|e| session_error(session, e))?;
    Ok(Attestation {
        envelope,
        subjects: count,
        key_id,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_home_without_a_database_is_not_given_one() {
        let home = tempfile::tempdir().unwrap();
        let err = open_ledger(home.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no ledger database at {} (no session has been recorded in this Tascer home)",
                home.path().join("tascer.db").display()
            )
        );
        assert!(!home.path().join("tascer.db").exists());
    }

    #[test]
    fn an_empty_session_is_an_unknown_one() {
        let err = session_error("s1", LedgerError::EmptySession("s1".into()));
        assert_eq!(
            err.to_string(),
            "unknown session s1: it has no ledger entries"
        );
        let err = session_error("s1", LedgerError::NoSigningKey);
        assert!(
            error_chain(&err).starts_with("session s1: no signing key configured"),
            "{}",
            error_chain(&err)
        );
    }
}
