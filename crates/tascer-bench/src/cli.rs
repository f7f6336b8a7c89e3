//! Wall time of the release `tascer` binary: start-up, a one-reply run
//! against the mock model, and the demo.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use tascer_testkit::{MockServer, Scenario, Turn};

use crate::stats::{Stats, ms_since};

fn time_command(program: &Path, args: &[&str], runs: usize) -> Option<Vec<f64>> {
    time_command_with(program, args, &[], runs)
}

fn time_command_with(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    runs: usize,
) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
        out.push(ms_since(start));
    }
    Some(out)
}

/// Names another `tascer` binary to measure (an older build, for a
/// before/after comparison in one session).
pub(crate) const BINARY_ENV: &str = "TASCER_BENCH_TASCER";

/// The `tascer` binary to measure: `$TASCER_BENCH_TASCER`, else the release
/// binary next to this executable, if built.
pub(crate) fn tascer_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(BINARY_ENV) {
        return Some(PathBuf::from(path)).filter(|p| p.exists());
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("tascer")).filter(|p| p.exists())
}

/// Runs the CLI benchmark and prints its table.
pub fn run() {
    let Some(tascer) = tascer_binary() else {
        println!("\n(no release `tascer` binary next to the bench; run scripts/bench)");
        return;
    };
    println!("\n## CLI wall time ({})\n", tascer.display());
    println!("| command | runs | median | min |");
    println!("| --- | --- | --- | --- |");
    for (args, runs) in [(&["--version"][..], 20), (&["demo"][..], 5)] {
        match time_command(&tascer, args, runs) {
            Some(t) => {
                let s = Stats::of(t);
                println!(
                    "| `tascer {}` | {runs} | {:.1} ms | {:.1} ms |",
                    args.join(" "),
                    s.median,
                    s.min
                );
            }
            None => println!("| `tascer {}` | failed | | |", args.join(" ")),
        }
    }
    one_reply_run(&tascer);
}

/// `tascer run` with a one-reply answer from the mock model over plain
/// HTTP, exec to exit: the start-up cost a short session pays.
fn one_reply_run(tascer: &Path) {
    const RUNS: usize = 40;
    let scenario = Scenario::new().turn(Turn::text("ok")).loop_last_turn(true);
    let (Ok(server), Ok(home)) = (MockServer::start_blocking(scenario), tempfile::tempdir()) else {
        println!("| `tascer run` one reply | failed to start the mock | | |");
        return;
    };
    let url = server.url();
    let home_path = home.path().display().to_string();
    let env = [
        ("TASCER_HOME", home_path.as_str()),
        ("ANTHROPIC_API_KEY", "bench"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
    ];
    let args = ["run", "--output-format", "json", "--cwd", &home_path, "hi"];
    match time_command_with(tascer, &args, &env, RUNS) {
        Some(t) => {
            let s = Stats::of(t);
            println!(
                "| `tascer run --output-format json hi`, one reply, mock over http://127.0.0.1 | {RUNS} | {:.1} ms | {:.1} ms |",
                s.median, s.min
            );
        }
        None => println!("| `tascer run` one reply | failed | | |"),
    }
}
