#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Context capture against real repositories made with the `git` CLI.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use tascer_ledger::context::{ContextCapturer, Freshness, GitState};

const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Tascer Test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository with one commit holding `a.txt` and `sub/b.txt`.
fn committed_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q"]);
    std::fs::write(p.join("a.txt"), "alpha\n").unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::fs::write(p.join("sub/b.txt"), "beta\n").unwrap();
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "init"]);
    dir
}

fn state(dir: &Path) -> GitState {
    let mut c = ContextCapturer::new(dir, Vec::<String>::new());
    let snap = c.capture();
    assert_eq!(snap.git_error, None);
    snap.git.expect("inside a repo")
}

#[test]
fn clean_repo() {
    let dir = committed_repo();
    let s = state(dir.path());
    assert_eq!(
        s.head.as_deref(),
        Some(git(dir.path(), &["rev-parse", "HEAD"]).as_str())
    );
    assert_eq!(s.branch.as_deref(), Some("main"));
    assert!(!s.detached);
    assert!(!s.is_bare);
    assert!(s.dirty.is_empty(), "{:?}", s.dirty);
    assert!(s.untracked.is_empty());
    assert_eq!(s.untracked_count, 0);
    assert_eq!(s.diff_digest, EMPTY_SHA256);
}

#[test]
fn capture_from_subdirectory_sees_whole_repo() {
    let dir = committed_repo();
    std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
    let s = state(&dir.path().join("sub"));
    assert_eq!(s.dirty, vec!["a.txt"]);
}

#[test]
fn modified_tracked_file() {
    let dir = committed_repo();
    std::fs::write(dir.path().join("sub/b.txt"), "BETA changed\n").unwrap();
    let s = state(dir.path());
    assert_eq!(s.dirty, vec!["sub/b.txt"]);
    assert!(s.untracked.is_empty());
    assert_ne!(s.diff_digest, EMPTY_SHA256);
}

#[test]
fn diff_digest_follows_documented_definition() {
    use sha2::{Digest as _, Sha256};
    let dir = committed_repo();
    std::fs::write(dir.path().join("a.txt"), "new content\n").unwrap();
    std::fs::write(dir.path().join("u.txt"), "untracked\n").unwrap();
    std::fs::remove_file(dir.path().join("sub/b.txt")).unwrap();
    let s = state(dir.path());
    let mut h = Sha256::new();
    for (path, id) in [
        ("a.txt", hex::encode(Sha256::digest(b"new content\n"))),
        ("sub/b.txt", "missing".to_string()),
        ("u.txt", hex::encode(Sha256::digest(b"untracked\n"))),
    ] {
        h.update(path.as_bytes());
        h.update([0u8]);
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    assert_eq!(s.diff_digest, hex::encode(h.finalize()));
}

#[test]
fn untracked_file_and_collapsed_dir() {
    let dir = committed_repo();
    std::fs::write(dir.path().join("new.txt"), "n\n").unwrap();
    std::fs::create_dir(dir.path().join("newdir")).unwrap();
    std::fs::write(dir.path().join("newdir/x.txt"), "x\n").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(dir.path().join("ignored.log"), "i\n").unwrap();
    let s = state(dir.path());
    assert!(s.dirty.is_empty());
    assert_eq!(s.untracked, vec![".gitignore", "new.txt", "newdir/"]);
    assert_eq!(s.untracked_count, 3);
}

#[test]
fn untracked_list_is_capped_but_counted() {
    let dir = committed_repo();
    for i in 0..10 {
        std::fs::write(dir.path().join(format!("u{i}.txt")), "u").unwrap();
    }
    let mut c = ContextCapturer::new(dir.path(), Vec::<String>::new()).with_untracked_cap(3);
    let s = c.capture().git.unwrap();
    assert_eq!(s.untracked, vec!["u0.txt", "u1.txt", "u2.txt"]);
    assert_eq!(s.untracked_count, 10);
}

#[test]
fn staged_add() {
    let dir = committed_repo();
    std::fs::write(dir.path().join("staged.txt"), "s\n").unwrap();
    git(dir.path(), &["add", "staged.txt"]);
    let s = state(dir.path());
    assert_eq!(s.dirty, vec!["staged.txt"]);
    assert!(s.untracked.is_empty());
}

#[test]
fn deleted_file_unstaged_and_staged() {
    let dir = committed_repo();
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    assert_eq!(state(dir.path()).dirty, vec!["a.txt"]);
    git(dir.path(), &["rm", "-q", "sub/b.txt"]);
    assert_eq!(state(dir.path()).dirty, vec!["a.txt", "sub/b.txt"]);
}

#[test]
fn branch_name() {
    let dir = committed_repo();
    git(dir.path(), &["checkout", "-q", "-b", "feature/x"]);
    let s = state(dir.path());
    assert_eq!(s.branch.as_deref(), Some("feature/x"));
    assert!(!s.detached);
}

#[test]
fn detached_head() {
    let dir = committed_repo();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    git(dir.path(), &["checkout", "-q", "--detach"]);
    let s = state(dir.path());
    assert!(s.detached);
    assert_eq!(s.branch, None);
    assert_eq!(s.head.as_deref(), Some(head.as_str()));
}

#[test]
fn git_head_reads_where_head_points_from_any_subdirectory() {
    let dir = committed_repo();
    git(dir.path(), &["checkout", "-q", "-b", "feature/x"]);
    let commit = git(dir.path(), &["rev-parse", "HEAD"]);
    let head = tascer_ledger::git_head(&dir.path().join("sub"))
        .unwrap()
        .expect("inside a repo");
    assert_eq!(head.head.as_deref(), Some(commit.as_str()));
    assert_eq!(head.branch.as_deref(), Some("feature/x"));
    assert!(!head.detached);
    assert_eq!(
        Path::new(&head.root).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );

    git(dir.path(), &["checkout", "-q", "--detach"]);
    let head = tascer_ledger::git_head(dir.path()).unwrap().unwrap();
    assert!(head.detached);
    assert_eq!(head.branch, None);
    assert_eq!(head.head.as_deref(), Some(commit.as_str()));
}

#[test]
fn git_head_before_the_first_commit_and_outside_a_repo() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(tascer_ledger::git_head(dir.path()).unwrap(), None);
    git(dir.path(), &["init", "-q"]);
    let head = tascer_ledger::git_head(dir.path()).unwrap().unwrap();
    assert_eq!(head.head, None);
    assert_eq!(head.branch.as_deref(), Some("main"));
    assert!(!head.detached);
}

#[test]
fn no_commits() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("f.txt"), "f").unwrap();
    let s = state(dir.path());
    assert_eq!(s.head, None);
    assert_eq!(s.branch.as_deref(), Some("main"));
    assert!(!s.detached);
    assert_eq!(s.untracked, vec!["f.txt"]);
    git(dir.path(), &["add", "f.txt"]);
    let s = state(dir.path());
    assert_eq!(s.dirty, vec!["f.txt"]);
}

#[test]
fn bare_repo() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--bare"]);
    let s = state(dir.path());
    assert!(s.is_bare);
    assert!(s.dirty.is_empty());
    assert_eq!(s.head, None);
}

#[test]
fn not_a_repo() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ContextCapturer::new(dir.path(), Vec::<String>::new());
    let snap = c.capture();
    assert_eq!(snap.git, None);
    assert_eq!(snap.git_error, None);
    // `git init` later: seen after invalidate().
    git(dir.path(), &["init", "-q"]);
    c.invalidate();
    assert!(c.capture().git.is_some());
}

#[test]
fn missing_directory_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ContextCapturer::new(dir.path().join("does/not/exist"), Vec::<String>::new());
    let snap = c.capture();
    assert_eq!(snap.git, None);
}

#[test]
fn env_allowlist_filters() {
    let c = ContextCapturer::new(".", ["TASCER_CTX_OK", "TASCER_CTX_ABSENT"]);
    let fake = [
        ("TASCER_CTX_OK".to_string(), "yes".to_string()),
        ("TASCER_CTX_SECRET".to_string(), "hunter2".to_string()),
        ("AWS_SECRET_ACCESS_KEY".to_string(), "x".to_string()),
    ];
    let env = c.filter_env(fake);
    assert_eq!(
        env,
        BTreeMap::from([("TASCER_CTX_OK".to_string(), "yes".to_string())])
    );
}

#[test]
fn env_from_process_only_allowlisted() {
    // PATH is set for the test process; HOME (usually set too) is not allowlisted.
    let dir = tempfile::tempdir().unwrap();
    let mut c = ContextCapturer::new(dir.path(), ["PATH", "TASCER_CTX_SURELY_UNSET_42"]);
    let snap = c.capture();
    let keys: Vec<&str> = snap.env.keys().map(String::as_str).collect();
    assert!(keys.iter().all(|k| *k == "PATH"), "{keys:?}");
    assert_eq!(snap.env.get("PATH"), std::env::var("PATH").ok().as_ref());
    assert!(!snap.env.contains_key("HOME"));
}

#[test]
fn snapshot_serde_roundtrip() {
    let dir = committed_repo();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    let mut c = ContextCapturer::new(dir.path(), ["PATH"]);
    let snap = c.capture();
    let json = serde_json::to_string(&snap).unwrap();
    let back: tascer_ledger::ContextSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, snap);
    assert!(!snap.tascer_version.is_empty());
}

#[test]
fn cached_captures_and_invalidate() {
    let dir = committed_repo();
    let mut c = ContextCapturer::new(dir.path(), Vec::<String>::new());
    let first = c.capture().git.unwrap();
    assert!(first.dirty.is_empty());
    // Let the racy window pass so the cached result is trusted.
    std::thread::sleep(std::time::Duration::from_millis(120));
    c.capture();
    let cached_before = c.stats().cache_hits;
    c.capture();
    assert_eq!(c.stats().cache_hits, cached_before + 1, "{:?}", c.stats());

    // In-place edit of a clean tracked file of the same size, in the same
    // directory: without inotify (not Linux) the Fingerprint mode sees it
    // only after invalidate(), which always works.
    std::fs::write(dir.path().join("a.txt"), "ALPHA\n").unwrap();
    c.invalidate();
    let s = c.capture().git.unwrap();
    assert_eq!(s.dirty, vec!["a.txt"]);
}

/// With inotify watches on the tracked files' directories, the default
/// mode sees an in-place edit of a clean tracked file without
/// `invalidate()`, and still serves unchanged captures from the cache.
#[cfg(target_os = "linux")]
#[test]
fn fingerprint_mode_sees_in_place_edit_on_linux() {
    let dir = committed_repo();
    let mut c = ContextCapturer::new(dir.path(), Vec::<String>::new());
    assert!(c.capture().git.unwrap().dirty.is_empty());
    std::thread::sleep(std::time::Duration::from_millis(120));
    c.capture();
    let hits = c.stats().cache_hits;
    let refreshes = c.stats().full_refreshes;
    c.capture();
    assert_eq!(c.stats().cache_hits, hits + 1, "{:?}", c.stats());

    for (file, content) in [("a.txt", "ALPHA\n"), ("sub/b.txt", "BETA\n")] {
        std::fs::write(dir.path().join(file), content).unwrap();
        assert!(c.capture().git.unwrap().dirty.contains(&file.to_string()));
    }
    assert!(c.stats().full_refreshes >= refreshes + 2, "{:?}", c.stats());
}

#[test]
fn new_file_seen_without_invalidate() {
    let dir = committed_repo();
    let mut c = ContextCapturer::new(dir.path(), Vec::<String>::new());
    assert_eq!(c.capture().git.unwrap().untracked_count, 0);
    std::thread::sleep(std::time::Duration::from_millis(120));
    c.capture();
    std::fs::write(dir.path().join("sub/new.txt"), "n").unwrap();
    assert_eq!(c.capture().git.unwrap().untracked, vec!["sub/new.txt"]);
    // Editing an already-changed file changes the digest without invalidate().
    let d1 = c.capture().git.unwrap().diff_digest;
    std::thread::sleep(std::time::Duration::from_millis(120));
    std::fs::write(dir.path().join("sub/new.txt"), "changed, longer").unwrap();
    let d2 = c.capture().git.unwrap().diff_digest;
    assert_ne!(d1, d2);
}

#[test]
fn staging_and_commit_seen_without_invalidate() {
    let dir = committed_repo();
    let mut c =
        ContextCapturer::new(dir.path(), Vec::<String>::new()).with_freshness(Freshness::Manual);
    c.capture();
    std::thread::sleep(std::time::Duration::from_millis(120));
    std::fs::write(dir.path().join("a.txt"), "edited\n").unwrap();
    git(dir.path(), &["add", "a.txt"]);
    assert_eq!(c.capture().git.unwrap().dirty, vec!["a.txt"]);
    git(dir.path(), &["commit", "-q", "-m", "second"]);
    let s = c.capture().git.unwrap();
    assert!(s.dirty.is_empty(), "{:?}", s.dirty);
    assert_eq!(
        s.head.as_deref(),
        Some(git(dir.path(), &["rev-parse", "HEAD"]).as_str())
    );
}

#[test]
fn always_mode_sees_in_place_edit() {
    let dir = committed_repo();
    let mut c =
        ContextCapturer::new(dir.path(), Vec::<String>::new()).with_freshness(Freshness::Always);
    c.capture();
    std::thread::sleep(std::time::Duration::from_millis(120));
    c.capture();
    std::fs::write(dir.path().join("a.txt"), "ALPHA\n").unwrap();
    assert_eq!(c.capture().git.unwrap().dirty, vec!["a.txt"]);
}

#[test]
fn always_mode_never_caches() {
    let dir = committed_repo();
    let mut c =
        ContextCapturer::new(dir.path(), Vec::<String>::new()).with_freshness(Freshness::Always);
    for _ in 0..3 {
        c.capture();
    }
    assert_eq!(c.stats().full_refreshes, 3);
    assert_eq!(c.stats().cache_hits, 0);
}

#[test]
fn capturer_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<ContextCapturer>();
    assert_send::<tascer_ledger::ContextSnapshot>();
}
