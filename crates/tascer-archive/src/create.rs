//! Making an archive: stage every object in a local directory (hashing
//! each), then upload them, the signed manifest last.

use std::path::{Path, PathBuf};

use futures::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt as _, PutPayload, WriteMultipart};
use tascer_ledger::transfer::session_blobs;
use tascer_ledger::{Ledger, SigningKey, Subject, export_attestation, key_id};
use tokio::io::AsyncReadExt as _;

use crate::error::{ArchiveError, Result, io_err};
use crate::manifest::{
    ATTESTATION_NAME, EVIDENCE_DIR, FileEntry, HEAD_NAME, LEDGER_NAME, LedgerHead, MANIFEST_FORMAT,
    MANIFEST_NAME, Manifest, Signer, WORKDIR_NAME,
};
use crate::target::Location;
use crate::workdir::{WorkdirPolicy, hash_reader, write_tarball};

/// Objects larger than this are uploaded in parts (S3 multipart upload).
pub const MULTIPART_THRESHOLD: u64 = 8 * 1024 * 1024;
/// Size of each part of a multipart upload (S3's minimum is 5 MiB).
pub const PART_SIZE: usize = 8 * 1024 * 1024;

/// What to archive.
#[derive(Debug)]
pub struct ArchiveRequest<'a> {
    /// The ledger holding the session.
    pub ledger: &'a Ledger,
    /// The session.
    pub session_id: &'a str,
    /// The session's working directory; `None` archives no tarball.
    pub workdir: Option<&'a Path>,
    /// The Tascer key: signs the attestation and the manifest, and is
    /// trusted when the ledger is verified before archiving.
    pub key: &'a SigningKey,
    /// Attestation subjects (empty: the ledger head).
    pub subjects: Vec<Subject>,
    /// What goes into the tarball.
    pub policy: WorkdirPolicy,
}

/// An archive staged locally, ready to upload.
#[derive(Debug)]
pub struct Staged {
    dir: tempfile::TempDir,
    manifest: Manifest,
    envelope: tascer_ledger::Envelope,
}

impl Staged {
    /// The manifest that will be uploaded.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The local directory holding the staged objects.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// An uploaded archive.
#[derive(Debug, Clone)]
pub struct Archived {
    /// The archive's URL (pass it to `tascer archive verify`).
    pub url: String,
    /// Its location.
    pub location: Location,
    /// Its manifest.
    pub manifest: Manifest,
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err("cannot create", dir))?;
    }
    std::fs::write(path, bytes).map_err(io_err("cannot write", path))
}

/// `evidence/sha256/<2 hex>/<64 hex>` for a digest `sha256:<hex>`.
fn evidence_object(digest: &str) -> Option<String> {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("{EVIDENCE_DIR}/sha256/{}/{hex}", &hex[..2]))
}

/// Every regular file under `root`, relative and `/`-separated, sorted.
fn files_under(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let read = match std::fs::read_dir(&dir) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err("cannot read", &dir)(e)),
        };
        for item in read {
            let item = item.map_err(io_err("cannot read", &dir))?;
            let path = item.path();
            let kind = item.file_type().map_err(io_err("cannot read", &path))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && let Ok(rel) = path.strip_prefix(root)
            {
                out.push(
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Stages an archive of one session: checks that its ledger verifies with
/// the key, then writes the ledger (`ledger.jsonl`, `head.json`), every
/// evidence blob and file, the attestation, the working-directory tarball
/// and the signed manifest into a temporary directory.
pub fn stage(req: &ArchiveRequest<'_>) -> Result<Staged> {
    let session = req.session_id;
    let vk = req.key.verifying_key();
    let report = req.ledger.verify(session, Some(&vk))?;
    if let Some(b) = &report.first_broken {
        return Err(ArchiveError::BrokenLedger {
            session: session.to_string(),
            detail: b.to_string(),
        });
    }
    let dir = tempfile::Builder::new()
        .prefix("tascer-archive-")
        .tempdir()
        .map_err(io_err(
            "cannot create a temporary directory",
            std::env::temp_dir(),
        ))?;
    let root = dir.path();

    // The head first, then the entries up to it: a session still being
    // written is archived as the signed prefix its head names.
    let head = req
        .ledger
        .head(session)?
        .ok_or_else(|| tascer_ledger::LedgerError::EmptySession(session.to_string()))?;
    let mut lines = String::new();
    for entry in req.ledger.store().entries(session)? {
        if entry.seq > head.seq {
            break;
        }
        lines.push_str(&serde_json::to_string(&entry)?);
        lines.push('\n');
    }
    write_file(&root.join(LEDGER_NAME), lines.as_bytes())?;
    write_file(&root.join(HEAD_NAME), &serde_json::to_vec_pretty(&head)?)?;

    for (digest, bytes) in session_blobs(req.ledger.store(), session)? {
        if let Some(name) = evidence_object(&digest) {
            write_file(&root.join(name), &bytes)?;
        }
    }
    let files = req.ledger.evidence(session);
    for rel in files_under(&files.dir().join("sha256"))? {
        let Some(hex) = rel.rsplit('/').next() else {
            continue;
        };
        let Some(name) = evidence_object(hex) else {
            continue; // a temporary file of an interrupted write
        };
        // Checked against its digest: never archive changed evidence.
        let bytes = files.get(hex)?;
        write_file(&root.join(name), &bytes)?;
    }

    let envelope = export_attestation(req.ledger, session, req.subjects.clone(), req.key)?;
    let mut line = serde_json::to_string(&envelope)?;
    line.push('\n');
    write_file(&root.join(ATTESTATION_NAME), line.as_bytes())?;

    let (workdir, workdir_files, skipped) = match req.workdir {
        Some(wd) => {
            let listing = write_tarball(wd, &root.join(WORKDIR_NAME), &req.policy)?;
            (wd.display().to_string(), listing.files, listing.skipped)
        }
        None => (String::new(), Vec::new(), Vec::new()),
    };

    let mut objects = Vec::new();
    for rel in files_under(root)? {
        let path = root.join(&rel);
        let f = std::fs::File::open(&path).map_err(io_err("cannot read", &path))?;
        let (sha256, size) = hash_reader(f).map_err(io_err("cannot read", &path))?;
        objects.push(FileEntry {
            path: rel,
            size,
            sha256,
        });
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        session_id: session.to_string(),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        workdir,
        objects,
        workdir_files,
        skipped,
        ledger_head: LedgerHead {
            seq: head.seq,
            hash: head.hash.clone(),
            key_id: head.key_id.clone(),
        },
        signer: Signer {
            key_id: key_id(&vk),
            public_key: hex::encode(vk.as_bytes()),
        },
        tascer_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let envelope = manifest.sign(req.key)?;
    Ok(Staged {
        dir,
        manifest,
        envelope,
    })
}

/// The archive id under a destination: `<session>/<UTC time>`.
pub fn archive_id(manifest: &Manifest) -> String {
    let stamp: String = manifest
        .created_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    format!("{}/{stamp}", manifest.session_id)
}

/// Uploads a staged archive under `dest/<session>/<time>/`: every object
/// first (large ones in parts; a failed multipart upload is aborted), the
/// manifest last, so an interrupted upload never shows as an archive. On
/// failure, the objects already uploaded are deleted (best effort).
pub async fn upload(staged: &Staged, dest: &Location) -> Result<Archived> {
    let location = dest.join(&archive_id(&staged.manifest));
    let mut done: Vec<ObjectPath> = Vec::new();
    let outcome = upload_objects(staged, &location, &mut done).await;
    let outcome = match outcome {
        Ok(()) => {
            let manifest = serde_json::to_vec_pretty(&staged.envelope)?;
            let path = location.child(MANIFEST_NAME);
            // A failed put may still have landed: clean it up too.
            done.push(path.clone());
            location
                .store()
                .put(&path, PutPayload::from(manifest))
                .await
                .map(|_| ())
                .map_err(ArchiveError::from)
        }
        Err(e) => Err(e),
    };
    if let Err(e) = outcome {
        // The manifest (last in `done`) goes first, so that no moment
        // shows an archive with objects missing.
        for path in done.into_iter().rev() {
            let _ = location.store().delete(&path).await;
        }
        return Err(e);
    }
    Ok(Archived {
        url: location.url(),
        location,
        manifest: staged.manifest.clone(),
    })
}

async fn upload_objects(
    staged: &Staged,
    location: &Location,
    done: &mut Vec<ObjectPath>,
) -> Result<()> {
    for object in &staged.manifest.objects {
        let local = staged.dir().join(&object.path);
        let path = location.child(&object.path);
        if object.size > MULTIPART_THRESHOLD {
            upload_multipart(location, &path, &local).await?;
        } else {
            let bytes = tokio::fs::read(&local)
                .await
                .map_err(io_err("cannot read", &local))?;
            location.store().put(&path, PutPayload::from(bytes)).await?;
        }
        done.push(path);
    }
    Ok(())
}

async fn upload_multipart(location: &Location, path: &ObjectPath, local: &PathBuf) -> Result<()> {
    let upload = location.store().put_multipart(path).await?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
    let result: Result<()> = async {
        let mut file = tokio::fs::File::open(local)
            .await
            .map_err(io_err("cannot read", local))?;
        let mut buf = vec![0u8; PART_SIZE];
        loop {
            let n = file
                .read(&mut buf)
                .await
                .map_err(io_err("cannot read", local))?;
            if n == 0 {
                break;
            }
            // Keep at most a few parts in flight.
            writer.wait_for_capacity(4).await?;
            writer.write(&buf[..n]);
        }
        Ok(())
    }
    .await;
    match result {
        Ok(()) => {
            writer.finish().await?;
            Ok(())
        }
        Err(e) => {
            let _ = writer.abort().await;
            Err(e)
        }
    }
}

/// Every archive under `loc` (each a prefix holding a `manifest.json`),
/// as URLs, sorted. Objects of an interrupted upload have no manifest and
/// are not listed.
pub async fn list_archives(loc: &Location) -> Result<Vec<String>> {
    let prefix = loc.prefix().clone();
    let mut stream = loc.store().list(if prefix.as_ref().is_empty() {
        None
    } else {
        Some(&prefix)
    });
    let mut out = Vec::new();
    while let Some(meta) = stream.next().await {
        let meta = meta?;
        if meta.location.filename() == Some(MANIFEST_NAME) {
            let parts: Vec<_> = meta.location.parts().collect();
            let parent =
                ObjectPath::from_iter(parts[..parts.len().saturating_sub(1)].iter().cloned());
            out.push(loc.url_of(&parent));
        }
    }
    out.sort();
    Ok(out)
}
