//! The git repository the ledger and loop benchmarks run in.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// Committed files in the benchmark repository.
pub const REPO_FILES: usize = 10_000;

/// Runs `git args` in `dir` with a fixed identity and no user config.
pub fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Tascer Bench",
            "-c",
            "user.email=bench@example.invalid",
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
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// A repository of `files` committed files, 3 modified + 1 untracked.
pub fn make_repo(root: &Path, files: usize) -> anyhow::Result<()> {
    git(root, &["init", "-q"])?;
    for i in 0..files {
        let dir = root.join(format!("d{:02}/e{:02}", i / 1000, (i / 100) % 10));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("f{i:05}.txt")), format!("file {i}\n"))?;
    }
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "bench"])?;
    for rel in [
        "d00/e00/f00000.txt",
        "d01/e05/f01500.txt",
        "d02/e09/f02999.txt",
    ] {
        std::fs::write(root.join(rel), "modified\n")?;
    }
    std::fs::write(root.join("d00/untracked.txt"), "new\n")?;
    Ok(())
}
