//! Contract workers on a PostgreSQL queue (`tascer contracts worker`):
//! contracts per minute with 1, 2 and 4 worker processes, and the memory
//! each concurrent session costs one worker process (100 sessions waiting
//! on the mock).
//!
//! Uses the release `tascer` next to this binary, a throw-away PostgreSQL
//! (the testkit's; `TASCER_TEST_POSTGRES_URL` names a running one), a bare
//! git repository as the remote, and archives into a directory: every job
//! does what a real one does (checkout, session, archive, two commits,
//! push, result).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario};
use tokio::process::Command;

use crate::contracts::{contract_text, turns};
use crate::memory::status_kib;
use crate::stats::{Stats, Table, fmt_ms, fmt_ratio, ms_since};

/// Contracts per throughput run.
const CONTRACTS: usize = 24;
/// Throughput runs per worker count.
const RUNS: usize = 3;
/// Mock latency of each model turn in the throughput runs, ms.
const LATENCY_MS: u64 = 100;
/// Sessions waiting at once in the memory run.
const IDLE_SESSIONS: usize = 100;

fn title(i: usize) -> String {
    format!("Job {i:03}")
}

/// The contracts' conversations: the first turn after `first_ms`, the
/// second at once (or both after `first_ms` when `both`).
fn scenario(n: usize, first_ms: u64, both: bool) -> Scenario {
    let mut scenario = Scenario::new();
    for i in 0..n {
        let file = format!("out/c{i:03}.txt");
        let mut t = turns(&file, first_ms);
        if !both {
            t[1] = t[1].clone().with_latency_ms(0);
        }
        scenario = scenario.conversation(format!("Contract: {}\n", title(i)), t);
    }
    scenario
}

async fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .output()
        .await
        .context("cannot run git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// A workspace with `n` contracts committed and pushed to a bare `origin`.
async fn repo(root: &Path, n: usize) -> anyhow::Result<PathBuf> {
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("contracts"))?;
    git(root, &["init", "--quiet", "--bare", "origin.git"]).await?;
    git(&ws, &["init", "--quiet"]).await?;
    std::fs::write(ws.join("README.md"), "bench\n")?;
    for i in 0..n {
        std::fs::write(
            ws.join(format!("contracts/c{i:03}.md")),
            contract_text(&title(i), &format!("out/c{i:03}.txt")),
        )?;
    }
    git(&ws, &["add", "."]).await?;
    git(&ws, &["commit", "--quiet", "-m", "base"]).await?;
    let origin = root.join("origin.git");
    git(
        &ws,
        &["remote", "add", "origin", &origin.display().to_string()],
    )
    .await?;
    git(&ws, &["push", "--quiet", "origin", "HEAD"]).await?;
    Ok(ws)
}

/// `tascer` with a home of its own, the mock as provider and a git identity.
fn tascer(bin: &Path, home: &Path, cwd: &Path, mock: &MockServer) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("TASCER_HOME", home)
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", mock.url())
        .env("GIT_AUTHOR_NAME", "Worker")
        .env("GIT_AUTHOR_EMAIL", "worker@example.invalid")
        .env("GIT_COMMITTER_NAME", "Worker")
        .env("GIT_COMMITTER_EMAIL", "worker@example.invalid")
        .env_remove("TASCER_LOG")
        .env_remove("TASCER_QUEUE")
        .current_dir(cwd)
        .stdin(Stdio::null());
    cmd
}

async fn enqueue(
    bin: &Path,
    root: &Path,
    ws: &Path,
    db: &str,
    mock: &MockServer,
) -> anyhow::Result<()> {
    let out = tascer(bin, &root.join("enqueuer"), ws, mock)
        .args(["contracts", "enqueue", "contracts", "--queue", db])
        .output()
        .await?;
    if !out.status.success() {
        bail!("enqueue: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn worker(
    bin: &Path,
    root: &Path,
    w: usize,
    db: &str,
    mock: &MockServer,
    extra: &[&str],
) -> Command {
    let home = root.join(format!("home-{w}"));
    let mut cmd = tascer(bin, &home, root, mock);
    cmd.args(["contracts", "worker", "--queue", db])
        .arg("--archive-to")
        .arg(root.join("archives"))
        .arg("--work-dir")
        .arg(root.join(format!("work-{w}")))
        .args(["--poll-ms", "100"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

async fn completed(
    bin: &Path,
    root: &Path,
    ws: &Path,
    db: &str,
    mock: &MockServer,
) -> anyhow::Result<usize> {
    let out = tascer(bin, &root.join("enqueuer"), ws, mock)
        .args(["contracts", "status", "--json", "--queue", db])
        .output()
        .await?;
    let jobs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)?;
    Ok(jobs.iter().filter(|j| j["status"] == "completed").count())
}

/// One throughput run: `workers` processes on `CONTRACTS` contracts; wall ms.
async fn throughput_run(
    bin: &Path,
    pg: &PgServer,
    mock: &MockServer,
    workers: usize,
) -> anyhow::Result<f64> {
    let root = tempfile::tempdir()?;
    let db = pg.fresh_database("bench_workers")?;
    let ws = repo(root.path(), CONTRACTS).await?;
    enqueue(bin, root.path(), &ws, &db, mock).await?;
    let start = Instant::now();
    let mut children = Vec::new();
    for w in 0..workers {
        children.push(worker(bin, root.path(), w, &db, mock, &["--until-empty"]).spawn()?);
    }
    for child in children {
        let out = child.wait_with_output().await?;
        if !out.status.success() {
            bail!("a worker failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let ms = ms_since(start);
    let done = completed(bin, root.path(), &ws, &db, mock).await?;
    if done != CONTRACTS {
        bail!("{done} of {CONTRACTS} contracts completed");
    }
    Ok(ms)
}

/// The median of five RSS samples 200 ms apart, KiB.
async fn rss_sampled(pid: u32) -> anyhow::Result<f64> {
    let mut samples = Vec::new();
    for _ in 0..5 {
        samples.push(
            status_kib(&pid.to_string(), "VmRSS").context("cannot read the worker's RSS")? as f64,
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(Stats::of(samples).median)
}

/// Memory: one worker with `--concurrency 100`, idle, then with 100
/// sessions waiting on the mock's first turn. Returns (idle KiB, busy KiB).
async fn memory_run(bin: &Path, pg: &PgServer) -> anyhow::Result<(f64, f64)> {
    let mock = MockServer::start(scenario(IDLE_SESSIONS, 600_000, false)).await?;
    let root = tempfile::tempdir()?;
    let db = pg.fresh_database("bench_workers_memory")?;
    let ws = repo(root.path(), IDLE_SESSIONS).await?;
    let concurrency = IDLE_SESSIONS.to_string();
    let mut child = worker(
        bin,
        root.path(),
        0,
        &db,
        &mock,
        &["--concurrency", &concurrency, "--lease-secs", "600"],
    )
    .spawn()?;
    let pid = child.id().context("the worker has no pid")?;
    // Connected and polling an empty queue.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let idle = rss_sampled(pid).await?;
    enqueue(bin, root.path(), &ws, &db, &mock).await?;
    let deadline = Instant::now() + Duration::from_secs(300);
    while mock.requests().len() < IDLE_SESSIONS {
        if Instant::now() > deadline {
            bail!(
                "only {} of {IDLE_SESSIONS} sessions reached the mock",
                mock.requests().len()
            );
        }
        if let Some(status) = child.try_wait()? {
            bail!("the worker exited: {status}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let busy = rss_sampled(pid).await?;
    child.kill().await?;
    Ok((idle, busy))
}

/// Runs the group.
pub async fn run() -> anyhow::Result<()> {
    let Some(bin) = crate::cli::tascer_binary() else {
        println!("\n(no release `tascer` binary next to the bench; run scripts/bench)");
        return Ok(());
    };
    let Some(pg) = PgServer::shared("bench workers") else {
        return Ok(());
    };

    let mock = MockServer::start(scenario(CONTRACTS, LATENCY_MS, true)).await?;
    let mut table = Table::new(
        format!(
            "Contract workers: contracts per minute ({CONTRACTS} contracts of 2 turns, mock answering each turn after {LATENCY_MS} ms, one PostgreSQL queue)"
        ),
        "ratio / 1 worker",
    );
    let mut baseline = None;
    for workers in [1usize, 2, 4] {
        let mut walls = Vec::new();
        for _ in 0..RUNS {
            walls.push(throughput_run(&bin, pg, &mock, workers).await?);
        }
        let wall = Stats::of(walls);
        let rate = CONTRACTS as f64 / (wall.median / 60_000.0);
        let base = *baseline.get_or_insert(rate);
        table.raw_row(
            format!("{workers} worker process(es), --concurrency 1: {rate:.0} contracts/min"),
            fmt_ms(wall.median),
            fmt_ms(wall.p99),
            fmt_ratio(rate / base),
        );
    }
    table.note(format!(
        "median/p99 columns: wall time from starting the workers (`--until-empty`) to the last one exiting, \
         {RUNS} runs each; each job: fresh worktree, session, archive to a directory (verified), \
         two commits, push to a bare repository, conditional completion."
    ));
    table.print();

    let (idle, busy) = memory_run(&bin, pg).await?;
    let per = (busy - idle) / IDLE_SESSIONS as f64;
    let mut table = Table::new(
        format!(
            "Memory per concurrent session in one worker ({IDLE_SESSIONS} sessions waiting on the mock)"
        ),
        "per session",
    );
    table.raw_row(
        "worker RSS, idle (`--concurrency 100`, empty queue)",
        format!("{:.1} MiB", idle / 1024.0),
        "",
        "",
    );
    table.raw_row(
        format!("worker RSS, {IDLE_SESSIONS} sessions waiting for their first model reply"),
        format!("{:.1} MiB", busy / 1024.0),
        "",
        format!("{:.2} MiB", per / 1024.0),
    );
    table.note(format!(
        "VmRSS of the worker process, median of 5 samples; per session = (waiting − idle) / {IDLE_SESSIONS}. \
         Goal: ≤ 2 MiB per session. Git runs in child processes and is not counted."
    ));
    table.print();
    Ok(())
}
