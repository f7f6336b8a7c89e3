//! The contract executor: its overhead per contract over a plain session
//! (same scripted turns, mock model at 0 ms), and contracts per minute at
//! `--parallel 1, 2, 4` with the mock answering each turn after 100 ms.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::json;
use tascer::{Message, Options, ProviderConfig};
use tascer_contracts::{RunOptions, RunStatus, contract_prompt, parse, run_all};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::stats::{Stats, Table, ms_since};

/// Measured contracts (and plain sessions) for the overhead figure.
const SAMPLES: usize = 20;
/// Contracts per throughput run.
const CONTRACTS: usize = 8;
/// Throughput runs per parallelism.
const RUNS: usize = 3;
/// Mock latency per turn in the throughput runs, ms.
const LATENCY_MS: u64 = 100;

/// A pending contract `title` that writes `file`.
pub(crate) fn contract_text(title: &str, file: &str) -> String {
    format!(
        "# Contract: {title}\n\n## Status\npending\n\n## Task\nWrite {file}.\n\n## Constraints\n- Files: {file}\n- Turn budget: 5 turns\n"
    )
}

/// Its two turns (a Write, then the answer), each after `latency_ms`.
pub(crate) fn turns(file: &str, latency_ms: u64) -> Vec<Turn> {
    vec![
        Turn::tool("Write", json!({"file_path": file, "content": "x\n"}))
            .with_latency_ms(latency_ms),
        Turn::text(format!("Wrote {file}.")).with_latency_ms(latency_ms),
    ]
}

fn base_options(server: &MockServer, home: &Path) -> Options {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    Options::new()
        .provider(provider)
        .model("bench-model")
        .home(home)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// One plain session playing the contract's turns, in ms.
async fn plain_session(options: Options, prompt: String) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut stream = tascer::query(prompt, options);
    let mut ok = false;
    while let Some(m) = stream.next().await {
        if let Message::Result(r) = m {
            ok = !r.is_error;
        }
    }
    if !ok {
        bail!("the baseline session failed");
    }
    Ok(ms_since(start))
}

/// One contract run by the executor, in ms.
async fn one_contract(base: &Options, ws: &Path, i: usize) -> anyhow::Result<f64> {
    let dir = ws.join("contracts");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(format!("c{i:03}.md"));
    std::fs::write(&file, contract_text("Bench", "out.txt"))?;
    let start = Instant::now();
    let summary = run_all(&RunOptions::new("contracts").cwd(ws).base(base.clone())).await?;
    let ms = ms_since(start);
    if summary.count(RunStatus::Completed) != 1 {
        bail!(
            "the benchmarked contract did not complete: {}",
            summary.to_markdown()
        );
    }
    Ok(ms)
}

/// Runs the group.
pub async fn run() -> anyhow::Result<()> {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    tascer::ledger::generate_keypair(&home, false)?;

    // Overhead: executor vs a plain session with the same turns.
    let scenario = Scenario::new().conversation("Contract: Bench", turns("out.txt", 0));
    let server = MockServer::start(scenario).await?;
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws)?;
    let base = base_options(&server, &home);
    let probe = ws.join("probe.md");
    std::fs::write(&probe, contract_text("Bench", "out.txt"))?;
    let prompt = contract_prompt(&parse(&probe)?);
    std::fs::remove_file(&probe)?;
    let (mut plain, mut executor) = (Vec::new(), Vec::new());
    for i in 0..SAMPLES + 2 {
        let p = plain_session(base.clone().cwd(&ws), prompt.clone()).await?;
        let e = one_contract(&base, &ws, i).await?;
        if i >= 2 {
            plain.push(p);
            executor.push(e);
        }
    }
    let (plain, executor) = (Stats::of(plain), Stats::of(executor));
    let mut table = Table::new(
        "Contract executor overhead (2-turn contract, mock at 0 ms)",
        "ratio / plain session",
    );
    table.row("plain session (`tascer::query`, same turns)", &plain, None);
    table.row(
        "one contract (`run_all`: parse, lease, write-back ×2, move)",
        &executor,
        Some(executor.median / plain.median),
    );
    table.raw_row(
        "executor overhead per contract (median difference)",
        crate::stats::fmt_ms(executor.median - plain.median),
        "",
        "",
    );
    table.note(format!(
        "{SAMPLES} samples each, after 2 warm-up rounds; sequential, in one directory."
    ));
    table.print();

    // Throughput at --parallel 1, 2, 4.
    let mut scenario = Scenario::new();
    for i in 0..CONTRACTS {
        scenario = scenario.conversation(
            format!("Contract: Job {i}\n"),
            turns(&format!("job{i}.txt"), LATENCY_MS),
        );
    }
    let server = MockServer::start(scenario).await?;
    let base = base_options(&server, &home);
    let mut table = Table::new(
        format!(
            "Contracts per minute ({CONTRACTS} contracts of 2 turns, mock answering each turn after {LATENCY_MS} ms)"
        ),
        "ratio / --parallel 1",
    );
    let mut baseline = None;
    for parallel in [1usize, 2, 4] {
        let mut rates = Vec::new();
        let mut walls = Vec::new();
        for run in 0..RUNS {
            let ws = root.path().join(format!("p{parallel}-{run}"));
            std::fs::create_dir_all(ws.join("contracts"))?;
            git(&ws, &["init", "--quiet"])?;
            std::fs::write(ws.join("README.md"), "bench\n")?;
            git(&ws, &["add", "README.md"])?;
            git(&ws, &["commit", "--quiet", "-m", "base"])?;
            for i in 0..CONTRACTS {
                std::fs::write(
                    ws.join(format!("contracts/job{i}.md")),
                    contract_text(&format!("Job {i}"), &format!("job{i}.txt")),
                )?;
            }
            let opts = RunOptions::new("contracts")
                .cwd(&ws)
                .base(base.clone())
                .parallel(parallel);
            let start = Instant::now();
            let summary = run_all(&opts).await?;
            let ms = ms_since(start);
            if summary.count(RunStatus::Completed) != CONTRACTS {
                bail!(
                    "throughput run at --parallel {parallel}: {}",
                    summary.to_markdown()
                );
            }
            walls.push(ms);
            rates.push(CONTRACTS as f64 / (ms / 60_000.0));
        }
        let wall = Stats::of(walls);
        let rate = Stats::of(rates).median;
        let base_rate = *baseline.get_or_insert(rate);
        let how = if parallel == 1 {
            "one after another, in the working directory"
        } else {
            "git worktree per contract, commit on contracts/<name>"
        };
        table.raw_row(
            format!("--parallel {parallel} ({how}): {rate:.0} contracts/min"),
            crate::stats::fmt_ms(wall.median),
            crate::stats::fmt_ms(wall.p99),
            crate::stats::fmt_ratio(rate / base_rate),
        );
    }
    table.note(format!(
        "median/p99 columns: wall time of the whole run of {CONTRACTS} contracts, {RUNS} runs each; \
         ratio: contracts/minute against --parallel 1 measured in the same run."
    ));
    table.print();
    Ok(())
}
