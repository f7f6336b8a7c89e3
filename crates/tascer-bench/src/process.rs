//! A `tascer run` process as a user starts one, timed as a whole: a
//! one-turn session and a 20-tool-call session against the mock model
//! (served by this process over loopback), start to exit, the longest gap
//! between two model requests (the agent's own time between model calls:
//! the tool, its governance and the ledger), and the peak resident memory.
//! The baseline is the same run's `true`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::cli::tascer_binary;
use crate::stats::{Stats, fmt_ms, ms_since};

/// Measured runs of each session (after one warm-up run).
const RUNS: usize = 15;

/// The 20 tool calls of the long session: the built-in tools a coding
/// agent uses most, writing and reading files of several kinds.
fn twenty_calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Write",
            json!({"file_path": "notes.md", "content": "# Notes\n\n- first\n- second\n"}),
        ),
        ("Read", json!({"file_path": "notes.md"})),
        (
            "Edit",
            json!({"file_path": "notes.md", "old_string": "first", "new_string": "1st"}),
        ),
        ("Bash", json!({"command": "ls -la"})),
        ("Glob", json!({"pattern": "*.md"})),
        ("Grep", json!({"pattern": "second", "path": "."})),
        (
            "Write",
            json!({"file_path": "src/app.py", "content": "def main():\n    print('hi')\n"}),
        ),
        ("Read", json!({"file_path": "src/app.py"})),
        (
            "Edit",
            json!({"file_path": "src/app.py", "old_string": "hi", "new_string": "hello"}),
        ),
        ("Bash", json!({"command": "echo $((1 + 1))"})),
        (
            "Write",
            json!({"file_path": "data.json", "content": "{\"a\": 1}\n"}),
        ),
        ("Read", json!({"file_path": "data.json"})),
        ("Grep", json!({"pattern": "hello", "path": "src"})),
        ("Glob", json!({"pattern": "**/*.py"})),
        ("Bash", json!({"command": "wc -l notes.md"})),
        (
            "Edit",
            json!({"file_path": "data.json", "old_string": "1", "new_string": "2"}),
        ),
        (
            "Write",
            json!({"file_path": "README.md", "content": "# Project\n\nThe api_key setting lives in the environment.\n"}),
        ),
        ("Read", json!({"file_path": "README.md"})),
        ("Bash", json!({"command": "echo done"})),
        ("Glob", json!({"pattern": "*"})),
    ]
}

/// One measured kind of session.
struct Session {
    name: &'static str,
    scenario: Scenario,
}

/// What the runs of one session measured.
struct Measured {
    wall: Vec<f64>,
    /// Per run, the longest gap between two consecutive model requests.
    longest_gap: Vec<f64>,
    /// The largest peak resident set of any run so far, KiB.
    peak_rss_kib: i64,
}

/// Runs the group and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let Some(tascer) = tascer_binary() else {
        println!("\n(no release `tascer` binary next to the bench; run scripts/bench)");
        return Ok(());
    };
    let baseline = time_true(RUNS * 2)?;
    let one_turn = Session {
        name: "one-turn session (one text reply)",
        scenario: Scenario::new().turn(Turn::text("ok")),
    };
    let mut twenty = Scenario::new();
    for (name, input) in twenty_calls() {
        twenty = twenty.turn(Turn::tool(name, input));
    }
    let twenty = Session {
        name: "20-tool-call session",
        scenario: twenty.turn(Turn::text("All done.")),
    };
    // The one-turn session first: the peak resident set is read as the
    // largest of every child so far, so the smaller session goes first.
    let first = measure(&tascer, &one_turn).await?;
    let second = measure(&tascer, &twenty).await?;
    print_table(&baseline, &[(&one_turn, &first), (&twenty, &second)]);
    Ok(())
}

/// `true`, start to exit, `runs` times: the cost of a process at all.
fn time_true(runs: usize) -> anyhow::Result<Stats> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new("true").status().context("cannot run true")?;
        if !status.success() {
            bail!("true failed: {status}");
        }
        samples.push(ms_since(start));
    }
    Ok(Stats::of(samples))
}

/// Runs `session` once to warm up (which also creates the home's signing
/// key, as a user's first session does), then [`RUNS`] times, each in a
/// fresh git repository against a fresh mock server, all in one home.
async fn measure(tascer: &Path, session: &Session) -> anyhow::Result<Measured> {
    let mut wall = Vec::with_capacity(RUNS);
    let mut longest_gap = Vec::with_capacity(RUNS);
    let home_dir = tempfile::tempdir()?;
    for run in 0..=RUNS {
        let server = MockServer::start(session.scenario.clone()).await?;
        let dir = tempfile::tempdir()?;
        let (work, home) = (dir.path().join("work"), home_dir.path().to_path_buf());
        std::fs::create_dir_all(&work)?;
        git_init(&work)?;
        let url = server.url();
        let tascer = tascer.to_path_buf();
        let started = Instant::now();
        let status = tokio::task::spawn_blocking(move || {
            Command::new(&tascer)
                .args(["run", "--output-format", "json"])
                .args(["--permission-mode", "bypassPermissions", "go"])
                .current_dir(&work)
                .env("TASCER_HOME", &home)
                .env("ANTHROPIC_API_KEY", "bench")
                .env("ANTHROPIC_BASE_URL", &url)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        })
        .await??;
        let elapsed = ms_since(started);
        if !status.success() {
            bail!("tascer run ({}) failed: {status}", session.name);
        }
        if run == 0 {
            continue;
        }
        wall.push(elapsed);
        longest_gap.push(longest_gap_ms(&server.arrivals()));
    }
    Ok(Measured {
        wall,
        longest_gap,
        peak_rss_kib: children_peak_rss_kib()?,
    })
}

/// The longest time between two consecutive requests, ms.
fn longest_gap_ms(arrivals: &[Instant]) -> f64 {
    arrivals
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1000.0)
        .fold(0.0, f64::max)
}

/// The largest peak resident set of any child process waited for so far
/// (`getrusage(RUSAGE_CHILDREN)`), KiB.
fn children_peak_rss_kib() -> anyhow::Result<i64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).context("getrusage")?;
    Ok(usage.max_rss())
}

fn git_init(dir: &Path) -> anyhow::Result<()> {
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .context("cannot run git")?;
    if !status.success() {
        bail!("git init failed in {}", dir.display());
    }
    Ok(())
}

fn print_table(baseline: &Stats, sessions: &[(&Session, &Measured)]) {
    println!(
        "\n## A whole `tascer run` process against the mock model ({RUNS} runs each, a fresh git repository each, one home)\n"
    );
    println!("| measure | median | p99 | × `true` |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| baseline: `true`, start to exit | {} | {} |  |",
        fmt_ms(baseline.median),
        fmt_ms(baseline.p99)
    );
    for (session, measured) in sessions {
        let wall = Stats::of(measured.wall.clone());
        println!(
            "| {}, start to exit | {} | {} | {:.1}× |",
            session.name,
            fmt_ms(wall.median),
            fmt_ms(wall.p99),
            wall.median / baseline.median
        );
        let gap = Stats::of(measured.longest_gap.clone());
        println!(
            "| {}, longest gap between two model requests | {} | {} |  |",
            session.name,
            fmt_ms(gap.median),
            fmt_ms(gap.p99)
        );
        println!(
            "| {}, peak resident memory (largest of any run so far) | {:.1} MiB |  |  |",
            session.name,
            measured.peak_rss_kib as f64 / 1024.0
        );
    }
}
