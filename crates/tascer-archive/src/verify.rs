//! Verifying an archive from its objects alone: every object against the
//! signed manifest, every working-directory file against the manifest,
//! and the ledger inside (chain, evidence, head signature) with the ledger's
//! own verifier on a fresh store — no access to the original store.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use futures::StreamExt as _;
use object_store::ObjectStoreExt as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_ledger::store::RawEntry;
use tascer_ledger::transfer::import_raw;
use tascer_ledger::{
    Envelope, EvidenceStore, IN_TOTO_PAYLOAD_TYPE, LedgerStore, SignedHead, VerifyReport,
    VerifyingKey, key_id, verify_session,
};
use tokio::io::AsyncWriteExt as _;

use crate::error::{ArchiveError, Result, io_err};
use crate::manifest::{
    ATTESTATION_NAME, EVIDENCE_DIR, FileEntry, HEAD_NAME, LEDGER_NAME, MANIFEST_NAME, Manifest,
    WORKDIR_NAME, open_manifest,
};
use crate::target::Location;
use crate::workdir::{hash_reader, read_tarball};

/// One thing wrong with an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyProblem {
    /// What it concerns: an object name, `workdir/<path>`, `manifest`, `ledger`.
    pub what: String,
    /// What is wrong.
    pub detail: String,
}

/// The outcome of [`verify_archive`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ArchiveReport {
    /// The archive's URL.
    pub url: String,
    /// True when nothing is wrong.
    pub ok: bool,
    /// Session id (from the manifest, when readable).
    pub session_id: Option<String>,
    /// Key id that signed the manifest (when readable).
    pub signer_key_id: Option<String>,
    /// True when the manifest was checked against a key the caller gave
    /// (not only the key the manifest names).
    pub key_pinned: bool,
    /// Archive objects checked against the manifest.
    pub objects_checked: usize,
    /// Working-directory files checked against the manifest.
    pub workdir_files_checked: usize,
    /// The ledger's verification, run on the archived ledger.
    pub ledger: Option<VerifyReport>,
    /// Everything wrong, in the order found.
    pub problems: Vec<VerifyProblem>,
    /// Where the archive was restored, if asked.
    pub restored_to: Option<PathBuf>,
}

impl ArchiveReport {
    fn problem(&mut self, what: impl Into<String>, detail: impl Into<String>) {
        self.problems.push(VerifyProblem {
            what: what.into(),
            detail: detail.into(),
        });
    }
}

/// Reads and checks the archive at `loc`. With `trusted`, the manifest
/// must be signed by that key (else by the key it names, which proves
/// integrity but not origin: the report says so with `key_pinned: false`).
/// With `restore_to`, the archive's objects are written under that
/// directory and the working directory is unpacked into `<dir>/workdir`;
/// otherwise a temporary directory is used and removed.
pub async fn verify_archive(
    loc: &Location,
    trusted: Option<&VerifyingKey>,
    restore_to: Option<&Path>,
) -> Result<ArchiveReport> {
    let url = loc.url();
    let manifest_path = loc.child(MANIFEST_NAME);
    let text = match loc.store().get(&manifest_path).await {
        Ok(r) => r.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => return Err(ArchiveError::NoManifest(url)),
        Err(e) => return Err(e.into()),
    };
    let envelope: Envelope =
        serde_json::from_slice(&text).map_err(|e| ArchiveError::BadManifest {
            url: url.clone(),
            detail: format!("not a DSSE envelope: {e}"),
        })?;
    let mut report = ArchiveReport {
        url: url.clone(),
        ok: false,
        session_id: None,
        signer_key_id: None,
        key_pinned: trusted.is_some(),
        objects_checked: 0,
        workdir_files_checked: 0,
        ledger: None,
        problems: Vec::new(),
        restored_to: restore_to.map(Path::to_path_buf),
    };
    let (manifest, key) = match open_manifest(&envelope, trusted, &url) {
        Ok(ok) => ok,
        Err(rejected) => {
            let manifest = rejected.manifest.as_deref();
            report.session_id = manifest.map(|m| m.session_id.clone());
            report.signer_key_id = manifest.map(|m| m.signer.key_id.clone());
            report.problem(MANIFEST_NAME, rejected.detail);
            return Ok(report);
        }
    };
    report.session_id = Some(manifest.session_id.clone());
    report.signer_key_id = Some(key_id(&key));

    let temp;
    let root: PathBuf = match restore_to {
        Some(dir) => dir.to_path_buf(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("tascer-archive-verify-")
                .tempdir()
                .map_err(io_err(
                    "cannot create a temporary directory",
                    std::env::temp_dir(),
                ))?;
            temp.path().to_path_buf()
        }
    };
    download_and_check(loc, &manifest, &root, &mut report).await?;
    if report.problems.is_empty() {
        check_workdir(&manifest, &root, restore_to.is_some(), &mut report)?;
        check_ledger(&manifest, &root, &key, &mut report)?;
        check_attestation(&manifest, &root, &key, &mut report);
    }
    report.ok = report.problems.is_empty();
    Ok(report)
}

/// Downloads every object the manifest lists into `root`, checking size and
/// SHA-256, and reports objects under the archive the manifest does not list.
async fn download_and_check(
    loc: &Location,
    manifest: &Manifest,
    root: &Path,
    report: &mut ArchiveReport,
) -> Result<()> {
    let listed: BTreeSet<String> = manifest.objects.iter().map(|o| o.path.clone()).collect();
    let prefix = loc.prefix().clone();
    let mut stream = loc.store().list(Some(&prefix));
    let prefix_len = prefix.parts().count();
    while let Some(meta) = stream.next().await {
        let meta = meta?;
        let rel = meta
            .location
            .parts()
            .skip(prefix_len)
            .map(|p| p.as_ref().to_string())
            .collect::<Vec<_>>()
            .join("/");
        if rel != MANIFEST_NAME && !listed.contains(&rel) {
            report.problem(
                rel,
                "object is not in the manifest (added after the archive was made)",
            );
        }
    }
    for object in &manifest.objects {
        if object.path.split('/').any(|p| p == ".." || p.is_empty()) {
            report.problem(
                &object.path,
                "the manifest names an object outside the archive",
            );
            continue;
        }
        let local = root.join(&object.path);
        match download(loc, &object.path, &local).await {
            Ok(()) => {}
            Err(ArchiveError::Store(object_store::Error::NotFound { .. })) => {
                report.problem(&object.path, "object is missing");
                continue;
            }
            Err(e) => return Err(e),
        }
        let f = std::fs::File::open(&local).map_err(io_err("cannot read", &local))?;
        let (sha256, size) = hash_reader(f).map_err(io_err("cannot read", &local))?;
        if size != object.size || sha256 != object.sha256 {
            report.problem(
                &object.path,
                format!(
                    "object changed: {size} bytes with sha256 {sha256}, the manifest says {} bytes \
                     with sha256 {}",
                    object.size, object.sha256
                ),
            );
        } else {
            report.objects_checked += 1;
        }
    }
    Ok(())
}

/// Streams one object to a local file.
async fn download(loc: &Location, name: &str, local: &Path) -> Result<()> {
    if let Some(dir) = local.parent() {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(io_err("cannot create", dir))?;
    }
    let result = loc.store().get(&loc.child(name)).await?;
    let mut stream = result.into_stream();
    let mut file = tokio::fs::File::create(local)
        .await
        .map_err(io_err("cannot write", local))?;
    while let Some(chunk) = stream.next().await {
        file.write_all(&chunk?)
            .await
            .map_err(io_err("cannot write", local))?;
    }
    file.flush().await.map_err(io_err("cannot write", local))?;
    Ok(())
}

fn check_workdir(
    manifest: &Manifest,
    root: &Path,
    restore: bool,
    report: &mut ArchiveReport,
) -> Result<()> {
    let has_tarball = manifest.objects.iter().any(|o| o.path == WORKDIR_NAME);
    if !has_tarball {
        if !manifest.workdir_files.is_empty() {
            report.problem(
                WORKDIR_NAME,
                "the manifest lists files but there is no tarball",
            );
        }
        return Ok(());
    }
    let restore_dir = root.join("workdir");
    let found = read_tarball(
        &root.join(WORKDIR_NAME),
        restore.then_some(restore_dir.as_path()),
    )?;
    let want: BTreeMap<&str, &FileEntry> = manifest
        .workdir_files
        .iter()
        .map(|f| (f.path.as_str(), f))
        .collect();
    let mut seen = BTreeSet::new();
    for file in &found {
        seen.insert(file.path.as_str());
        match want.get(file.path.as_str()) {
            None => report.problem(
                format!("workdir/{}", file.path),
                "file is not in the manifest",
            ),
            Some(w) if w.sha256 != file.sha256 || w.size != file.size => report.problem(
                format!("workdir/{}", file.path),
                format!("file differs from the manifest (sha256 {})", file.sha256),
            ),
            Some(_) => report.workdir_files_checked += 1,
        }
    }
    for path in want.keys().filter(|p| !seen.contains(*p)) {
        report.problem(
            format!("workdir/{path}"),
            "file listed in the manifest is missing",
        );
    }
    Ok(())
}

/// One `ledger.jsonl` line as a raw row: what verification reads, so an
/// edited line is reported as a broken entry, not a load error.
fn raw_row(line: &str, session: &str) -> std::result::Result<RawEntry, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Ok(RawEntry {
        seq: v.get("seq").and_then(Value::as_i64).ok_or("no seq")?,
        session_id: v
            .get("session_id")
            .and_then(Value::as_str)
            .unwrap_or(session)
            .to_string(),
        ts: text("ts"),
        kind: text("kind"),
        payload: v
            .get("payload")
            .map(Value::to_string)
            .unwrap_or_else(|| "null".into()),
        prev_hash: text("prev_hash"),
        hash: text("hash"),
    })
}

fn check_ledger(
    manifest: &Manifest,
    root: &Path,
    key: &VerifyingKey,
    report: &mut ArchiveReport,
) -> Result<()> {
    let session = &manifest.session_id;
    let ledger_path = root.join(LEDGER_NAME);
    let text =
        std::fs::read_to_string(&ledger_path).map_err(io_err("cannot read", &ledger_path))?;
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match raw_row(line, session) {
            Ok(row) => rows.push(row),
            Err(e) => {
                report.problem(LEDGER_NAME, format!("line {}: {e}", i + 1));
                return Ok(());
            }
        }
    }
    if rows.iter().any(|r| &r.session_id != session) {
        report.problem(
            LEDGER_NAME,
            format!("an entry belongs to another session than {session}"),
        );
        return Ok(());
    }
    let head_path = root.join(HEAD_NAME);
    let head_text = std::fs::read(&head_path).map_err(io_err("cannot read", &head_path))?;
    let head: SignedHead = match serde_json::from_slice(&head_text) {
        Ok(h) => h,
        Err(e) => {
            report.problem(HEAD_NAME, format!("not a ledger head: {e}"));
            return Ok(());
        }
    };
    if head.seq != manifest.ledger_head.seq || head.hash != manifest.ledger_head.hash {
        report.problem(
            HEAD_NAME,
            "the ledger head differs from the one the manifest names",
        );
    }
    let scratch = tempfile::Builder::new()
        .prefix("tascer-archive-ledger-")
        .tempdir()
        .map_err(io_err(
            "cannot create a temporary directory",
            std::env::temp_dir(),
        ))?;
    let store = LedgerStore::open(scratch.path().join("ledger.db"))?;
    import_raw(&store, &rows, Some(&head))?;
    let evidence = EvidenceStore::new(root.join(EVIDENCE_DIR));
    // The head must be signed by the key the manifest was verified with
    // when the session was signed at all.
    let ledger_report = verify_session(&store, session, &evidence, Some(key))?;
    if let Some(b) = &ledger_report.first_broken {
        report.problem(LEDGER_NAME, b.to_string());
    }
    report.ledger = Some(ledger_report);
    Ok(())
}

fn check_attestation(
    manifest: &Manifest,
    root: &Path,
    key: &VerifyingKey,
    report: &mut ArchiveReport,
) {
    let path = root.join(ATTESTATION_NAME);
    let Ok(text) = std::fs::read_to_string(&path) else {
        report.problem(ATTESTATION_NAME, "cannot read the attestation");
        return;
    };
    let payload =
        Envelope::from_json(text.trim()).and_then(|env| env.verify(key, IN_TOTO_PAYLOAD_TYPE));
    let statement: Value = match payload.map(|p| serde_json::from_slice(&p)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return report.problem(ATTESTATION_NAME, format!("payload is not JSON: {e}")),
        Err(e) => return report.problem(ATTESTATION_NAME, e.to_string()),
    };
    let head = statement
        .pointer("/predicate/ledger/head")
        .and_then(Value::as_str);
    if head != Some(manifest.ledger_head.hash.as_str()) {
        report.problem(
            ATTESTATION_NAME,
            "the attestation names another ledger head than the manifest",
        );
    }
}
