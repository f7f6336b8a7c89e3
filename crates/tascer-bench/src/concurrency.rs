//! Many `tascer run` processes on one Tascer home: sessions per second at
//! 1 (baseline), 20 and 50 concurrent processes, each a 20-tool-call
//! session against the mock model, all writing one SQLite file.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::stats::{Stats, ms_since};

/// Tool calls per session.
const TOOL_CALLS: usize = 20;
/// Process counts measured; the first is the baseline.
const LEVELS: [usize; 3] = [1, 20, 50];
/// Repetitions of each level.
const RUNS: usize = 3;

fn scenario() -> Scenario {
    let mut scenario = Scenario::new();
    for _ in 0..TOOL_CALLS {
        scenario = scenario.turn(Turn::tool("Read", json!({"file_path": "notes.txt"})));
    }
    scenario.turn(Turn::text("done"))
}

/// One batch: `n` processes started together on a fresh home. Returns the
/// wall time (ms) and how many runs failed or printed a lock message.
fn batch(tascer: &Path, url: &str, n: usize) -> anyhow::Result<(f64, usize)> {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(&ws)?;
    std::fs::write(ws.join("notes.txt"), "notes\n")?;
    let start = Instant::now();
    let children = (0..n)
        .map(|i| {
            Command::new(tascer)
                .env("TASCER_HOME", &home)
                .env("ANTHROPIC_API_KEY", "bench")
                .env("ANTHROPIC_BASE_URL", url)
                .env_remove("TASCER_LOG")
                .current_dir(&ws)
                .args([
                    "run",
                    "--output-format",
                    "json",
                    "--permission-mode",
                    "bypassPermissions",
                    &format!("session {i}"),
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut bad = 0;
    for child in children {
        let out = child.wait_with_output()?;
        let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
        if !out.status.success() || stderr.contains("locked") || stderr.contains("busy") {
            bad += 1;
        }
    }
    Ok((ms_since(start), bad))
}

/// Runs the benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let Some(tascer) = crate::cli::tascer_binary() else {
        println!("\n(no release `tascer` binary next to the bench; run scripts/bench)");
        return Ok(());
    };
    let server = MockServer::start(scenario()).await?;
    let url = server.url();
    let rows = tokio::task::spawn_blocking(move || {
        let mut rows = Vec::new();
        for n in LEVELS {
            let mut times = Vec::new();
            let mut bad = 0;
            for _ in 0..RUNS {
                let (ms, failed) = batch(&tascer, &url, n)?;
                times.push(ms);
                bad += failed;
            }
            rows.push((n, Stats::of(times), bad));
        }
        anyhow::Ok(rows)
    })
    .await??;
    println!(
        "\n## Concurrent sessions on one Tascer home ({TOOL_CALLS} tool calls each, \
         {RUNS} runs per row)\n"
    );
    println!("| processes | median wall | sessions/s | vs 1 process | failed or locked runs |");
    println!("| --- | --- | --- | --- | --- |");
    let base = rows
        .first()
        .map_or(f64::NAN, |(n, s, _)| *n as f64 / s.median * 1000.0);
    for (n, stats, bad) in rows {
        let rate = n as f64 / stats.median * 1000.0;
        println!(
            "| {n} | {:.0} ms | {rate:.1} | {:.1}× | {bad} of {} |",
            stats.median,
            rate / base,
            n * RUNS
        );
    }
    server.shutdown();
    Ok(())
}
