//! Tascer's benchmarks. Each prints a markdown table for BENCHMARKS.md.
//!
//! Run with `scripts/bench` (builds release binaries first), or one group:
//! `scripts/bench grep` (see [`GROUPS`]).

mod cli;
mod concurrency;
mod contracts;
mod gates;
mod guard;
mod hook;
mod hook_profile;
mod ledger;
mod loop_bench;
mod memory;
mod otel_loop;
mod process;
mod repo;
mod safety;
mod sandbox;
mod search;
mod stats;
mod store;
mod workers;

/// Benchmark groups, in the order `all` runs them.
const GROUPS: &[(&str, &str)] = &[
    ("loop", "agent loop overhead per tool call, mock model"),
    (
        "cli",
        "tascer --version, a one-reply tascer run and tascer demo wall time",
    ),
    (
        "process",
        "a whole tascer run process: one-turn and 20-tool-call sessions, start to exit, gaps, peak memory",
    ),
    ("grep", "Grep and Glob tools vs ripgrep"),
    ("guard", "permission decisions and PreToolUse hooks"),
    ("ledger", "ledger append, verify, context capture"),
    ("gates", "default pre+post gates of an Edit call"),
    ("hook", "tascer hook per invocation, tascer run cold start"),
    (
        "hook-profile",
        "tascer-hook PreToolUse with the safe profile install writes, against true; the hook server's idle memory",
    ),
    (
        "concurrency",
        "sessions/s of 20 and 50 tascer run processes on one home",
    ),
    (
        "contracts",
        "contract executor overhead and contracts/minute at --parallel 1, 2, 4",
    ),
    (
        "store",
        "ledger appends per tool call and a 20-tool session, SQLite vs PostgreSQL",
    ),
    (
        "safety",
        "webhooks and tool-approve (cached, uncached) per tool call in the loop",
    ),
    (
        "sandbox",
        "the Bash tool with the OS sandbox on vs off, same commands, one run",
    ),
    (
        "workers",
        "contract workers on a PostgreSQL queue: contracts/minute at 1, 2, 4 workers; memory per idle session",
    ),
];

fn usage() -> String {
    let mut s = String::from("usage: tascer-bench [all | GROUP...]\ngroups:\n");
    for (name, what) in GROUPS {
        s.push_str(&format!("  {name:<11} {what}\n"));
    }
    s
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{}", usage());
        return Ok(());
    }
    let selected: Vec<&str> = if args.is_empty() || args.iter().any(|a| a == "all") {
        GROUPS.iter().map(|(name, _)| *name).collect()
    } else {
        args.iter().map(String::as_str).collect()
    };
    for group in &selected {
        if !GROUPS.iter().any(|(name, _)| name == group) {
            anyhow::bail!("unknown benchmark group `{group}`\n{}", usage());
        }
    }
    for group in selected {
        let started = std::time::Instant::now();
        match group {
            "loop" => {
                loop_bench::run().await?;
                otel_loop::run().await?;
            }
            "cli" => cli::run(),
            "process" => process::run().await?,
            "grep" => search::run().await?,
            "guard" => guard::run().await?,
            "ledger" => ledger::run().await?,
            "gates" => gates::run().await?,
            "hook" => hook::run().await?,
            "hook-profile" => hook_profile::run().await?,
            "concurrency" => concurrency::run().await?,
            "contracts" => contracts::run().await?,
            "store" => store::run().await?,
            "safety" => safety::run().await?,
            "sandbox" => sandbox::run().await?,
            "workers" => workers::run().await?,
            _ => {}
        }
        eprintln!("bench {group}: {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}
