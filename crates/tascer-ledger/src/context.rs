//! Context capture: a cheap, cacheable snapshot of where a tool call ran.
//!
//! A [`ContextSnapshot`] records the working directory, the Tascer version,
//! the git state of the enclosing repository ([`GitState`]) and an
//! **allowlisted** subset of the environment. Git state is read in-process
//! with `gix` (no `git` subprocess).
//!
//! [`ContextCapturer`] keeps the opened repository and the last status result
//! and only recomputes the (expensive) status when a cheap fingerprint says
//! something may have changed; see [`Freshness`] for the exact staleness
//! guarantee of each mode.
//!
//! # `diff_digest`
//!
//! [`GitState::diff_digest`] is the lowercase hex SHA-256 of the
//! concatenation, over every *changed path* sorted by its UTF-8 bytes, of
//!
//! ```text
//! <path> 0x00 <content-id> 0x0A
//! ```
//!
//! where the changed paths are all of [`GitState::dirty`] plus **all**
//! untracked entries (not only the capped [`GitState::untracked`] list), and
//! `<content-id>` describes the path's current *worktree* content:
//!
//! * a regular file: the lowercase hex SHA-256 of its bytes;
//! * a symlink: `symlink:` followed by the hex SHA-256 of its target path bytes;
//! * a directory (a collapsed untracked directory, a submodule): `dir`;
//! * absent from the worktree (deleted): `missing`;
//! * unreadable: `unreadable`.
//!
//! A clean worktree therefore has the digest of the empty input
//! (`e3b0c442…b855`). Together with [`GitState::head`] the digest identifies
//! the worktree contents of a repository; staged-only differences (index
//! content differing from both HEAD and the worktree) are not covered.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::worktree_watch::WorktreeWatch;

mod head;

pub use head::{GitHead, GitHeads, git_head};

/// The default maximum number of untracked entries listed in
/// [`GitState::untracked`].
pub const DEFAULT_UNTRACKED_CAP: usize = 200;

/// Files modified within this window before a status computation started
/// make the cached status "racy": it is recomputed at the next capture.
const RACY_WINDOW: Duration = Duration::from_millis(50);

/// The version string recorded by default: this crate's version.
pub const TASCER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where and in what state a tool call ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSnapshot {
    /// The working directory the capture was made for (lossy UTF-8).
    pub cwd: String,
    /// The Tascer version that made the capture.
    pub tascer_version: String,
    /// The enclosing repository's state; `None` when `cwd` is not inside a
    /// git repository or the repository could not be read (see `git_error`).
    pub git: Option<GitState>,
    /// Why the git state could not be read, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_error: Option<String>,
    /// The values of the allowlisted environment variables that are set.
    /// Variables not named in the allowlist are never recorded.
    pub env: BTreeMap<String, String>,
    /// When the snapshot was taken.
    pub captured_at: DateTime<Utc>,
}

/// The git state of the repository enclosing the capture directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitState {
    /// The worktree root (or the git dir for a bare repository), lossy UTF-8.
    pub root: String,
    /// The commit `HEAD` resolves to (hex); `None` before the first commit.
    pub head: Option<String>,
    /// The short branch name `HEAD` points to (also for an unborn branch);
    /// `None` when detached.
    pub branch: Option<String>,
    /// `HEAD` points directly at a commit.
    pub detached: bool,
    /// Tracked paths that differ between `HEAD`, the index and the worktree
    /// (modified, added, deleted, type-changed, conflicted; staged or not),
    /// sorted and de-duplicated, repository-relative with `/` separators.
    pub dirty: Vec<String>,
    /// Untracked, non-ignored entries, sorted, at most the capturer's cap.
    /// A directory holding only untracked files is listed once, as `dir/`
    /// (like `git status` with `status.showUntrackedFiles=normal`).
    pub untracked: Vec<String>,
    /// The total number of untracked entries, including those left out of
    /// `untracked` by the cap.
    pub untracked_count: usize,
    /// SHA-256 over the changed paths and their worktree content; see the
    /// [module documentation](self) for the exact definition.
    pub diff_digest: String,
    /// The repository has no worktree.
    pub is_bare: bool,
}

/// What can go wrong while reading git state.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// `gix` failed to discover, open or read the repository.
    #[error("git: {0}")]
    Git(String),
}

impl ContextError {
    fn git(err: impl std::fmt::Display) -> Self {
        ContextError::Git(err.to_string())
    }
}

/// How a [`ContextCapturer`] decides whether its cached status is still valid.
///
/// In every mode `HEAD` (commit and branch) is re-read at each capture and a
/// change of it, or of the index file's size/mtime/ctime/inode (which `git
/// add`, `git rm`, `git commit`, `git checkout`, `git reset` all rewrite),
/// triggers a recomputation. If a watched path (the index file, plus what
/// the mode lists) has an mtime within 50 ms before a recomputation started,
/// that result is "racy" (the filesystem clock is coarse) and is recomputed
/// again at the next capture. [`ContextCapturer::invalidate`] always forces a
/// recomputation. Changes to ignore rules outside the worktree
/// (`.git/info/exclude`, `core.excludesFile`) and to submodule worktrees are
/// never watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Freshness {
    /// Only `HEAD` and the index file are checked: worktree edits are seen
    /// only after [`ContextCapturer::invalidate`]. Cheapest.
    Manual,
    /// Also watch every already-changed path (dirty and untracked entries),
    /// every directory that contains a tracked file, and the git directory.
    /// Sees: new, deleted and renamed files, further edits to
    /// already-changed files, atomic (write-then-rename) saves.
    ///
    /// On Linux the paths carry inotify watches (added after each full
    /// status), so a capture costs one `read` of the event queue, and an
    /// in-place rewrite of a clean tracked file is seen as well (it is an
    /// event in its directory). Elsewhere, or when the inotify watch limit
    /// is reached, each path is `stat`ed at every capture (one `stat` per
    /// directory plus per changed path), and an in-place rewrite of a
    /// previously clean tracked file (its directory's mtime does not move)
    /// is **not** seen until [`ContextCapturer::invalidate`] is called.
    #[default]
    Fingerprint,
    /// Recompute the full status at every capture: sees every change, as
    /// reliably as `git status` does. Cost: one `stat` per tracked file plus
    /// a directory walk (about 20 ms for 10 000 files on 2 cores).
    Always,
}

/// Counters describing how a [`ContextCapturer`] served its captures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Captures that recomputed the full git status.
    pub full_refreshes: u64,
    /// Captures served from the cached status.
    pub cache_hits: u64,
}

/// Takes [`ContextSnapshot`]s for one directory, caching git state.
///
/// The repository is discovered (upwards from `cwd`) and opened once, at the
/// first capture, and kept; the status always covers the whole worktree, not
/// only `cwd`. The status is read-only: the index is never written back, so
/// files whose stat data is stale in the index are re-hashed at every full
/// recomputation (as `git status` would until it refreshes the index).
///
/// `Send` but not `Sync`; wrap it in a `Mutex` to share it.
pub struct ContextCapturer {
    cwd: PathBuf,
    allowlist: BTreeSet<String>,
    version: String,
    untracked_cap: usize,
    freshness: Freshness,
    repo: RepoSlot,
    cache: Option<Cached>,
    stats: CaptureStats,
}

enum RepoSlot {
    Unknown,
    NotARepo,
    Open(Box<gix::Repository>),
}

/// The cached result of a full status computation.
struct Cached {
    head: HeadInfo,
    dirty: Vec<String>,
    untracked_all: Vec<String>,
    diff_digest: String,
    /// Paths whose metadata is compared at each capture, and their signature
    /// when the status was computed.
    watched: Vec<(PathBuf, Option<StatSig>)>,
    /// Inotify watches on the same paths, when available: then a capture
    /// asks the kernel instead of comparing signatures.
    notifier: Option<WorktreeWatch>,
    racy: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HeadInfo {
    head: Option<String>,
    branch: Option<String>,
    detached: bool,
}

/// The metadata of a path that changes when its content (or, for a
/// directory, its list of entries) changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatSig {
    mtime: Option<SystemTime>,
    len: u64,
    is_dir: bool,
    #[cfg(unix)]
    ctime: (i64, i64),
    #[cfg(unix)]
    ino: u64,
}

impl StatSig {
    fn of(path: &Path) -> Option<StatSig> {
        let md = std::fs::symlink_metadata(path).ok()?;
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt as _;
        Some(StatSig {
            mtime: md.modified().ok(),
            len: md.len(),
            is_dir: md.is_dir(),
            #[cfg(unix)]
            ctime: (md.ctime(), md.ctime_nsec()),
            #[cfg(unix)]
            ino: md.ino(),
        })
    }
}

impl ContextCapturer {
    /// A capturer for `cwd` that records only the environment variables
    /// named in `env_allowlist`. Nothing is read until the first capture.
    pub fn new<I, S>(cwd: impl Into<PathBuf>, env_allowlist: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ContextCapturer {
            cwd: cwd.into(),
            allowlist: env_allowlist.into_iter().map(Into::into).collect(),
            version: TASCER_VERSION.to_string(),
            untracked_cap: DEFAULT_UNTRACKED_CAP,
            freshness: Freshness::default(),
            repo: RepoSlot::Unknown,
            cache: None,
            stats: CaptureStats::default(),
        }
    }

    /// Sets the cache-validation policy (default [`Freshness::Fingerprint`]).
    pub fn with_freshness(mut self, freshness: Freshness) -> Self {
        self.freshness = freshness;
        self
    }

    /// Sets the maximum number of untracked entries listed (default
    /// [`DEFAULT_UNTRACKED_CAP`]).
    pub fn with_untracked_cap(mut self, cap: usize) -> Self {
        self.untracked_cap = cap;
        self
    }

    /// Overrides the recorded Tascer version (default [`TASCER_VERSION`]).
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The directory captures are made for.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// How captures have been served so far.
    pub fn stats(&self) -> CaptureStats {
        self.stats
    }

    /// Forgets the cached status (and a cached "not a repository" result), so
    /// the next capture recomputes everything. Call it after a tool call that
    /// may have written to the worktree.
    pub fn invalidate(&mut self) {
        self.cache = None;
        if matches!(self.repo, RepoSlot::NotARepo) {
            self.repo = RepoSlot::Unknown;
        }
    }

    /// True when the cached status is watched for changes (inotify on
    /// Linux), so that writes to the worktree are seen without
    /// [`invalidate`](Self::invalidate).
    pub fn is_watching(&self) -> bool {
        self.cache.as_ref().is_some_and(|c| c.notifier.is_some())
    }

    /// Tells the capturer that a tool may have written to the worktree.
    /// While the status is watched ([`is_watching`](Self::is_watching))
    /// nothing is needed: the writes are events. Otherwise the cached
    /// status is forgotten, as by [`invalidate`](Self::invalidate), since
    /// signatures miss in-place rewrites.
    pub fn worktree_may_have_changed(&mut self) {
        if !self.is_watching() {
            self.invalidate();
        }
    }

    /// Takes a snapshot of the process environment and the git state.
    /// Never fails: git problems are reported in
    /// [`ContextSnapshot::git_error`].
    pub fn capture(&mut self) -> ContextSnapshot {
        let env = self.filter_env(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }));
        self.capture_with_env(env)
    }

    /// Like [`capture`](Self::capture), but records `env` (already filtered
    /// or not: it is filtered through the allowlist again) instead of the
    /// process environment.
    pub fn capture_with_env(&mut self, env: BTreeMap<String, String>) -> ContextSnapshot {
        let env = self.filter_env(env);
        let (git, git_error) = match self.git_state() {
            Ok(git) => (git, None),
            Err(err) => (None, Some(err.to_string())),
        };
        ContextSnapshot {
            cwd: self.cwd.to_string_lossy().into_owned(),
            tascer_version: self.version.clone(),
            git,
            git_error,
            env,
            captured_at: Utc::now(),
        }
    }

    /// Keeps only the variables named in the allowlist.
    pub fn filter_env<I>(&self, vars: I) -> BTreeMap<String, String>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        vars.into_iter()
            .filter(|(k, _)| self.allowlist.contains(k))
            .collect()
    }

    /// The git state alone: `Ok(None)` outside a repository.
    pub fn git_state(&mut self) -> Result<Option<GitState>, ContextError> {
        if matches!(self.repo, RepoSlot::Unknown) {
            self.repo = discover(&self.cwd)?;
        }
        let repo = match &self.repo {
            RepoSlot::Open(repo) => repo,
            RepoSlot::NotARepo | RepoSlot::Unknown => return Ok(None),
        };
        let is_bare = repo.is_bare() || repo.workdir().is_none();
        let root = repo
            .workdir()
            .unwrap_or_else(|| repo.git_dir())
            .to_path_buf();
        let head = head_info(repo)?;

        let fresh = match (&mut self.cache, self.freshness) {
            (None, _) | (_, Freshness::Always) => false,
            (Some(cached), _) => {
                !cached.racy
                    && cached.head == head
                    && match cached.notifier.as_mut() {
                        Some(notifier) => notifier.unchanged(),
                        None => cached
                            .watched
                            .iter()
                            .all(|(path, sig)| StatSig::of(path) == *sig),
                    }
            }
        };
        if fresh {
            self.stats.cache_hits += 1;
        } else {
            let computed = if is_bare {
                Cached {
                    head: head.clone(),
                    dirty: Vec::new(),
                    untracked_all: Vec::new(),
                    diff_digest: hex::encode(Sha256::digest(b"")),
                    watched: vec![watch(repo.index_path())],
                    notifier: None,
                    racy: false,
                }
            } else {
                compute_status(repo, &root, head.clone(), self.freshness)?
            };
            self.cache = Some(computed);
            self.stats.full_refreshes += 1;
        }
        let Some(cached) = &self.cache else {
            return Ok(None);
        };
        Ok(Some(GitState {
            root: root.to_string_lossy().into_owned(),
            head: head.head,
            branch: head.branch,
            detached: head.detached,
            dirty: cached.dirty.clone(),
            untracked: cached
                .untracked_all
                .iter()
                .take(self.untracked_cap)
                .cloned()
                .collect(),
            untracked_count: cached.untracked_all.len(),
            diff_digest: cached.diff_digest.clone(),
            is_bare,
        }))
    }
}

fn watch(path: PathBuf) -> (PathBuf, Option<StatSig>) {
    let sig = StatSig::of(&path);
    (path, sig)
}

fn discover(cwd: &Path) -> Result<RepoSlot, ContextError> {
    discover_with(cwd, gix::sec::trust::Mapping::default())
}

/// The repository enclosing `cwd`, opened with `trust`'s options for its
/// trust level.
fn discover_with(
    cwd: &Path,
    trust: gix::sec::trust::Mapping<gix::open::Options>,
) -> Result<RepoSlot, ContextError> {
    match gix::ThreadSafeRepository::discover_opts(cwd, Default::default(), trust) {
        Ok(repo) => Ok(RepoSlot::Open(Box::new(repo.into()))),
        Err(err) => {
            use gix::discover::upwards::Error as Up;
            match err.downcast_any_ref::<Up>() {
                Some(
                    Up::NoGitRepository { .. }
                    | Up::NoGitRepositoryWithinCeiling { .. }
                    | Up::NoGitRepositoryWithinFs { .. },
                ) => Ok(RepoSlot::NotARepo),
                _ => Err(ContextError::git(format!(
                    "cannot open repository at {}: {err}",
                    cwd.display()
                ))),
            }
        }
    }
}

fn head_info(repo: &gix::Repository) -> Result<HeadInfo, ContextError> {
    let head = repo.head().map_err(ContextError::git)?;
    Ok(HeadInfo {
        head: head.id().map(|id| id.to_string()),
        branch: head.referent_name().map(|name| name.shorten().to_string()),
        detached: head.is_detached(),
    })
}

fn compute_status(
    repo: &gix::Repository,
    root: &Path,
    head: HeadInfo,
    freshness: Freshness,
) -> Result<Cached, ContextError> {
    use gix::status::{Item, index_worktree};

    let started = SystemTime::now();
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(ContextError::git)?
        .untracked_files(gix::status::UntrackedFiles::Collapsed)
        .index_worktree_rewrites(None)
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: gix::submodule::config::Ignore::Dirty,
            check_dirty: false,
        })
        .dirwalk_options(|opts| opts.empty_patterns_match_prefix(false))
        .into_iter(Vec::<gix::bstr::BString>::new())
        .map_err(ContextError::git)?;

    let mut dirty = BTreeSet::new();
    let mut untracked = BTreeSet::new();
    for item in iter {
        let item = item.map_err(ContextError::git)?;
        match &item {
            Item::TreeIndex(_) => {
                dirty.insert(item.location().to_string());
            }
            Item::IndexWorktree(index_worktree::Item::Modification { status, .. }) => {
                if !matches!(
                    status,
                    gix::status::plumbing::index_as_worktree::EntryStatus::NeedsUpdate(_)
                ) {
                    dirty.insert(item.location().to_string());
                }
            }
            Item::IndexWorktree(index_worktree::Item::DirectoryContents { entry, .. }) => {
                if entry.status == gix::dir::entry::Status::Untracked {
                    untracked.insert(dir_entry_path(entry));
                }
            }
            Item::IndexWorktree(index_worktree::Item::Rewrite {
                source,
                dirwalk_entry,
                ..
            }) => {
                dirty.insert(source.rela_path().to_string());
                untracked.insert(dir_entry_path(dirwalk_entry));
            }
        }
    }
    let dirty: Vec<String> = dirty.into_iter().collect();
    let untracked_all: Vec<String> = untracked.into_iter().collect();

    let mut changed: Vec<&String> = dirty.iter().chain(untracked_all.iter()).collect();
    changed.sort();
    changed.dedup();
    let mut hasher = Sha256::new();
    for path in &changed {
        hasher.update(path.as_bytes());
        hasher.update([0u8]);
        hasher.update(content_id(&root.join(path.trim_end_matches('/'))).as_bytes());
        hasher.update([b'\n']);
    }
    let diff_digest = hex::encode(hasher.finalize());

    let index_path = repo.index_path();
    let mut paths = vec![index_path.clone()];
    if freshness == Freshness::Fingerprint {
        // The git directory too: the index is replaced by a rename there.
        paths.extend(index_path.parent().map(Path::to_path_buf));
        let index = repo.index_or_empty().map_err(ContextError::git)?;
        let mut dirs: BTreeSet<&[u8]> = BTreeSet::new();
        dirs.insert(b"");
        for entry in index.entries() {
            let path: &[u8] = entry.path(&index);
            let mut rest = path;
            while let Some(pos) = rest.iter().rposition(|b| *b == b'/') {
                rest = &rest[..pos];
                if !dirs.insert(rest) {
                    break;
                }
            }
        }
        for rel in dirs {
            paths.push(root.join(String::from_utf8_lossy(rel).as_ref()));
        }
        for path in &changed {
            paths.push(root.join(path.trim_end_matches('/')));
        }
    }
    // Watches first, signatures second: a change after its path's watch
    // was added is an event, one before shows in the signature (and makes
    // the status racy below).
    let notifier = if freshness == Freshness::Fingerprint {
        WorktreeWatch::new(paths.iter().map(PathBuf::as_path))
    } else {
        None
    };
    let watched: Vec<_> = paths.into_iter().map(watch).collect();
    let threshold = started.checked_sub(RACY_WINDOW).unwrap_or(started);
    let racy = watched.iter().any(|(_, sig)| {
        sig.and_then(|s| s.mtime)
            .is_some_and(|mtime| mtime >= threshold)
    });
    Ok(Cached {
        head,
        dirty,
        untracked_all,
        diff_digest,
        watched,
        notifier,
        racy,
    })
}

fn dir_entry_path(entry: &gix::dir::Entry) -> String {
    let mut path = entry.rela_path.to_string();
    if matches!(
        entry.disk_kind,
        Some(gix::dir::entry::Kind::Directory | gix::dir::entry::Kind::Repository)
    ) && !path.ends_with('/')
    {
        path.push('/');
    }
    path
}

/// The `<content-id>` of the module documentation.
fn content_id(path: &Path) -> String {
    let md = match std::fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return "missing".into(),
        Err(_) => return "unreadable".into(),
    };
    if md.file_type().is_symlink() {
        return match std::fs::read_link(path) {
            Ok(target) => format!(
                "symlink:{}",
                hex::encode(Sha256::digest(target.to_string_lossy().as_bytes()))
            ),
            Err(_) => "unreadable".into(),
        };
    }
    if md.is_dir() {
        return "dir".into();
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return "unreadable".into();
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return "unreadable".into(),
        }
    }
    hex::encode(hasher.finalize())
}
