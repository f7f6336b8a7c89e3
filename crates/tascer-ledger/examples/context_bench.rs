//! Benchmarks context capture on a 10k-file repository.
//!
//! `cargo run --release -p tascer-ledger --example context_bench [-- FILES]`
//!
//! Creates a repository in a temporary directory with the `git` CLI (one
//! commit of FILES small files in nested directories, default 10 000),
//! modifies a few files, then times the first capture and 100 further
//! captures per [`Freshness`] mode, with and without `invalidate()` before
//! each. Prints a markdown table.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use tascer_ledger::context::{ContextCapturer, Freshness};

const CAPTURES: usize = 100;

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
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
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn make_repo(root: &Path, files: usize) -> Result<(), String> {
    git(root, &["init", "-q"])?;
    for i in 0..files {
        let dir = root.join(format!("d{:02}/e{:02}", i / 1000, (i / 100) % 10));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(format!("f{i:05}.txt")), format!("file {i}\n"))
            .map_err(|e| e.to_string())?;
    }
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "bench"])?;
    Ok(())
}

fn modify(root: &Path) -> Result<(), String> {
    for rel in [
        "d00/e00/f00000.txt",
        "d01/e05/f01500.txt",
        "d02/e09/f02999.txt",
    ] {
        std::fs::write(root.join(rel), "modified\n").map_err(|e| e.to_string())?;
    }
    std::fs::write(root.join("d00/untracked.txt"), "new\n").map_err(|e| e.to_string())?;
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

struct Row {
    label: String,
    median: Duration,
    total: Duration,
    refreshes: u64,
}

fn run(root: &Path, freshness: Freshness, invalidate: bool) -> Row {
    let mut c = ContextCapturer::new(root, ["PATH"]).with_freshness(freshness);
    c.capture(); // warm: open the repository and compute the first status
    let before = c.stats().full_refreshes;
    let mut times = Vec::with_capacity(CAPTURES);
    let start = Instant::now();
    for _ in 0..CAPTURES {
        let t = Instant::now();
        if invalidate {
            c.invalidate();
        }
        let snap = c.capture();
        std::hint::black_box(&snap);
        times.push(t.elapsed());
    }
    let total = start.elapsed();
    Row {
        label: format!(
            "{freshness:?}{}",
            if invalidate {
                " + invalidate() each"
            } else {
                ""
            }
        ),
        median: median(times),
        total,
        refreshes: c.stats().full_refreshes - before,
    }
}

fn main() -> ExitCode {
    let files = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000usize);
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tempdir: {e}");
            return ExitCode::FAILURE;
        }
    };
    let root = tmp.path();
    let t = Instant::now();
    if let Err(e) = make_repo(root, files).and_then(|()| modify(root)) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    eprintln!("repo with {files} files set up in {:.1?}", t.elapsed());
    // Leave the racy window behind so the steady state is measured.
    std::thread::sleep(Duration::from_millis(100));

    let mut c = ContextCapturer::new(root, ["PATH"]);
    let t = Instant::now();
    let snap = c.capture();
    let first = t.elapsed();
    let Some(git) = snap.git else {
        eprintln!("no git state: {:?}", snap.git_error);
        return ExitCode::FAILURE;
    };
    eprintln!(
        "dirty={:?} untracked={:?} digest={}",
        git.dirty, git.untracked, git.diff_digest
    );

    let rows = [
        run(root, Freshness::Manual, false),
        run(root, Freshness::Fingerprint, false),
        run(root, Freshness::Always, false),
        run(root, Freshness::Fingerprint, true),
    ];

    println!("Context capture, {files}-file repository, 3 modified + 1 untracked\n");
    println!(
        "First capture (discover + open + full status): {}\n",
        ms(first)
    );
    println!("| mode | median / capture | total for {CAPTURES} | full status recomputations |");
    println!("| --- | ---: | ---: | ---: |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} |",
            r.label,
            ms(r.median),
            ms(r.total),
            r.refreshes
        );
    }
    ExitCode::SUCCESS
}
