//! The Bash tool with the OS sandbox on and off: the same commands, in one
//! run, interleaved, so the added time per command is read off directly
//! (issue 22's goal: a median of 3 ms or less).

use std::time::Instant;

use anyhow::bail;
use serde_json::json;
use tascer::tools::{BashTool, CommandSandbox, ToolState};
use tascer::{Tool, ToolContext};
use tascer_sandbox::{Launcher, SandboxPolicy};

use crate::cli::tascer_binary;
use crate::stats::{Stats, Table, ms_since};

const WARMUP: usize = 5;
const RUNS: usize = 60;
/// The commands, as a model would send them.
const COMMANDS: &[&str] = &[
    "true",
    "echo hello > out.txt && cat out.txt",
    "ls -la",
    "git status --short",
];

/// Times `command` through `tool`, in milliseconds per call.
async fn time(tool: &BashTool, ctx: &ToolContext, command: &str) -> anyhow::Result<f64> {
    let t = Instant::now();
    let out = tool.call(json!({ "command": command }), ctx).await;
    let ms = ms_since(t);
    if out.is_error {
        bail!("`{command}` failed: {:?}", out.content);
    }
    Ok(ms)
}

/// Runs the group and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let support = tascer_sandbox::support();
    let Some(tascer) = tascer_binary() else {
        println!("\n(no release `tascer` binary next to the bench; run scripts/bench)");
        return Ok(());
    };
    if !support.usable() {
        println!("\n(no OS sandbox on this machine: {:?})", support.missing());
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let cwd = dir.path().canonicalize()?;
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&cwd)
        .status()?;
    let ctx = crate::gates::tool_context(&cwd);
    let plain = BashTool::new(ToolState::new());
    let policy = SandboxPolicy::for_workspace(&cwd, std::env::home_dir().as_deref());
    let small_helper = tascer.with_file_name(tascer_sandbox::EXEC_HELPER_NAME);
    if !small_helper.exists() {
        bail!("no {} next to {}", small_helper.display(), tascer.display());
    }
    let boxed = BashTool::new(ToolState::new().with_sandbox(CommandSandbox::new(
        Launcher::exec_helper(small_helper),
        policy.clone(),
    )?));
    let boxed_by_tascer = BashTool::new(
        ToolState::new().with_sandbox(CommandSandbox::new(Launcher::tascer(tascer), policy)?),
    );

    let mut table = Table::new(
        "Bash tool: OS sandbox on (tascer-sandbox-exec, the default helper; and `tascer \
         sandbox`, the helper before) vs off, same commands, one run",
        "added (median)",
    );
    let (mut added_all, mut added_by_tascer) = (Vec::new(), Vec::new());
    for command in COMMANDS {
        let (mut off, mut on, mut on_tascer) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..(WARMUP + RUNS) {
            let a = time(&plain, &ctx, command).await?;
            let b = time(&boxed, &ctx, command).await?;
            let c = time(&boxed_by_tascer, &ctx, command).await?;
            if i >= WARMUP {
                off.push(a);
                on.push(b);
                on_tascer.push(c);
                added_all.push(b - a);
                added_by_tascer.push(c - a);
            }
        }
        let (off, on, on_tascer) = (Stats::of(off), Stats::of(on), Stats::of(on_tascer));
        table.row(format!("`{command}` sandbox off"), &off, None);
        for (label, stats) in [("tascer-sandbox-exec", &on), ("tascer sandbox", &on_tascer)] {
            table.raw_row(
                format!("`{command}` sandbox on ({label})"),
                crate::stats::fmt_ms(stats.median),
                crate::stats::fmt_ms(stats.p99),
                crate::stats::fmt_ms(stats.median - off.median),
            );
        }
    }
    let (added, by_tascer) = (Stats::of(added_all), Stats::of(added_by_tascer));
    table.note(format!(
        "Median added time per command over all commands: {} with tascer-sandbox-exec \
         (goal ≤ 3 ms), {} with `tascer sandbox`; {} runs each, off and both helpers \
         interleaved. Landlock {}, user namespaces {}.",
        crate::stats::fmt_ms(added.median),
        crate::stats::fmt_ms(by_tascer.median),
        RUNS,
        support.landlock,
        support.user_namespaces,
    ));
    table.print();
    Ok(())
}
