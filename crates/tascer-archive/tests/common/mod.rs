//! Shared set-up: a real signed session (SQLite ledger, evidence blobs and
//! files, a working directory with a .gitignore), a failing store wrapper
//! for interrupted uploads.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path as ObjectPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};
use serde_json::json;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{EntryKind, Ledger, SigningKey, key_id};

/// A session recorded in a temporary Tascer home.
pub struct Session {
    pub dir: tempfile::TempDir,
    pub ledger: Ledger,
    pub key: SigningKey,
    pub id: String,
    pub workdir: PathBuf,
}

impl Session {
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

/// Records a signed session: start, a tool record with one small (database)
/// and one large (file) evidence, end; and a working directory.
pub fn recorded_session(big_file_bytes: usize) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let key = random_signing_key().unwrap();
    tascer_ledger::keys::write_keypair(&key, &tascer_ledger::KeyPaths::in_home(&home)).unwrap();
    let ledger = Ledger::open_in_home(&home, Some(key.clone())).unwrap();
    let id = "0b6f7c1e-archive-test".to_string();
    let workdir = dir.path().join("work");
    ledger
        .append(
            &id,
            EntryKind::SessionStart,
            json!({
                "model": "mock",
                "signing_key_id": key_id(&key.verifying_key()),
                "context": {"cwd": workdir.display().to_string()},
            }),
        )
        .unwrap();
    let small = b"small tool output".to_vec();
    let large = vec![b'L'; 100 * 1024];
    let refs = [
        tascer_ledger::sha256_ref(&small),
        tascer_ledger::sha256_ref(&large),
    ];
    ledger
        .append_with_evidence(
            &id,
            EntryKind::ToolRecord,
            json!({"tool": "Bash", "evidence": refs}),
            &[small, large],
        )
        .unwrap();
    ledger
        .append(&id, EntryKind::SessionEnd, json!({"status": "success"}))
        .unwrap();
    std::fs::create_dir_all(workdir.join("src")).unwrap();
    std::fs::create_dir_all(workdir.join("target")).unwrap();
    std::fs::write(workdir.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(workdir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(workdir.join("README.md"), "# work\n").unwrap();
    std::fs::write(workdir.join("target/ignored.o"), "junk").unwrap();
    if big_file_bytes > 0 {
        // Incompressible, so the tarball is as large (multipart upload).
        let mut bytes = vec![0u8; big_file_bytes];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for b in &mut bytes {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        std::fs::write(workdir.join("data.bin"), bytes).unwrap();
    }
    Session {
        dir,
        ledger,
        key,
        id,
        workdir,
    }
}

/// A request to archive `s` with the default policy.
pub fn request(s: &Session) -> tascer_archive::ArchiveRequest<'_> {
    tascer_archive::ArchiveRequest {
        ledger: &s.ledger,
        session_id: &s.id,
        workdir: Some(&s.workdir),
        key: &s.key,
        subjects: Vec::new(),
        policy: tascer_archive::WorkdirPolicy::default(),
    }
}

/// Every regular file under `dir`, relative, with its bytes, sorted.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        let rel = entry
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        out.push((rel, std::fs::read(&entry).unwrap()));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Wraps a real store and fails the `fail_at`-th simple put, or the
/// `fail_at`-th multipart part, as a dropped connection would.
#[derive(Debug)]
pub struct Failing {
    pub inner: Arc<dyn ObjectStore>,
    pub fail_put_at: usize,
    pub fail_part_at: usize,
    pub puts: AtomicUsize,
    pub parts: Arc<AtomicUsize>,
}

impl Failing {
    pub fn new(inner: Arc<dyn ObjectStore>, fail_put_at: usize, fail_part_at: usize) -> Self {
        Failing {
            inner,
            fail_put_at,
            fail_part_at,
            puts: AtomicUsize::new(0),
            parts: Arc::new(AtomicUsize::new(0)),
        }
    }
}

impl fmt::Display for Failing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failing({})", self.inner)
    }
}

fn injected() -> object_store::Error {
    object_store::Error::Generic {
        store: "failing",
        source: "connection dropped (injected)".into(),
    }
}

#[derive(Debug)]
struct FailingUpload {
    inner: Box<dyn MultipartUpload>,
    fail_at: usize,
    parts: Arc<AtomicUsize>,
}

#[async_trait]
impl MultipartUpload for FailingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let n = self.parts.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at {
            return Box::pin(async { Err(injected()) });
        }
        self.inner.put_part(data)
    }
    async fn complete(&mut self) -> object_store::Result<PutResult> {
        self.inner.complete().await
    }
    async fn abort(&mut self) -> object_store::Result<()> {
        self.inner.abort().await
    }
}

#[async_trait]
impl ObjectStore for Failing {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let n = self.puts.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_put_at {
            return Err(injected());
        }
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(FailingUpload {
            inner,
            fail_at: self.fail_part_at,
            parts: Arc::clone(&self.parts),
        }))
    }
    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
