//! Wall time of the release `tascer` binary: start-up and the demo.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::stats::{Stats, ms_since};

fn time_command(program: &Path, args: &[&str], runs: usize) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
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

/// The release `tascer` binary next to this executable, if built.
pub(crate) fn tascer_binary() -> Option<PathBuf> {
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
}
