//! The governance cost of one tool call: permission decisions
//! (`PermissionEngine::decide`) and PreToolUse hooks (`HookRunner`).

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use serde_json::json;
use tascer::guard::hooks::{
    HookCommon, HookEvent, HookOptions, HookOutput, HookRegistry, HookRunner, PreToolUseInput,
};
use tascer::guard::permissions::{Behavior, PermissionEngine, PermissionRules, ToolCall};

use crate::stats::{Stats, Table, fmt_ms, ms_since};

/// Timed calls per in-process measure (after warm-up).
const ITERATIONS: usize = 20_000;
/// Timed calls per command-hook measure (each spawns a process).
const COMMAND_ITERATIONS: usize = 300;
/// Untimed calls before each measure.
const WARMUP: usize = 200;

/// 23 rules in the shapes settings files use.
fn rules() -> anyhow::Result<PermissionRules> {
    let allow = [
        "Bash(npm test:*)",
        "Bash(npm run lint)",
        "Bash(cargo build:*)",
        "Bash(cargo test:*)",
        "Bash(cargo clippy:*)",
        "Bash(git status)",
        "Bash(git diff:*)",
        "Bash(git log:*)",
        "Bash(ls:*)",
        "Bash(cat:*)",
        "Bash(grep:*)",
        "Read(./src/**)",
        "Edit(./src/**)",
        "WebFetch(domain:docs.rs)",
        "Glob",
        "Grep",
    ];
    let ask = ["Bash(git push:*)", "Bash(docker:*)", "Write(./Cargo.toml)"];
    let deny = [
        "Bash(rm -rf:*)",
        "Bash(curl:*)",
        "Bash(sudo:*)",
        "Read(./.env)",
        "Edit(./secrets/**)",
    ];
    PermissionRules::parse(&allow, &ask, &deny).context("bench rules do not parse")
}

fn engine(cwd: &Path, cache: bool) -> anyhow::Result<PermissionEngine> {
    PermissionEngine::builder()
        .rules(rules()?)
        .default_policies()
        .home_dir(cwd.join("home"))
        .cache(cache)
        .build()
        .context("cannot build the permission engine")
}

/// Times `f` `n` times after `WARMUP` untimed calls; samples in ms.
async fn time_async<F, Fut>(n: usize, mut f: F) -> Vec<f64>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..WARMUP.min(n) {
        f().await;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        f().await;
        out.push(ms_since(start));
    }
    out
}

fn pre_tool_use(cwd: &Path) -> PreToolUseInput {
    PreToolUseInput {
        common: HookCommon {
            session_id: "bench".into(),
            transcript_path: cwd.join("t.jsonl").display().to_string(),
            cwd: cwd.display().to_string(),
            permission_mode: Some("default".into()),
        },
        tool_name: "Bash".into(),
        tool_input: json!({"command": "cargo test --workspace"}),
        tool_use_id: "toolu_bench".into(),
        ..Default::default()
    }
}

/// Runs the guard benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temp dir")?;
    let cwd = tmp.path().canonicalize()?;
    std::fs::create_dir_all(cwd.join("src"))?;
    std::fs::create_dir_all(cwd.join("home"))?;
    std::fs::write(cwd.join("src/lib.rs"), "pub fn f() {}\n")?;
    let decisions = measure_decisions(&cwd).await?;
    let hooks = measure_hooks(&cwd).await?;
    decisions.print();
    hooks.print();
    Ok(())
}

/// Timings of `PermissionEngine::decide`.
struct DecisionTimes {
    /// Timer overhead: an awaited no-op future.
    noop: Stats,
    empty_engine: Stats,
    bash_off: Stats,
    bash_on: Stats,
    read: Stats,
}

/// Times `decide` on a Bash and a Read call, with and without the cache,
/// against an empty engine; each engine is checked to allow first.
async fn measure_decisions(cwd: &Path) -> anyhow::Result<DecisionTimes> {
    let bash = ToolCall::new(
        "Bash",
        json!({"command": "git log --oneline -n 20 | grep fix && cargo test --workspace"}),
        cwd,
    );
    let read = ToolCall::new("Read", json!({"file_path": cwd.join("src/lib.rs")}), cwd);
    let uncached = engine(cwd, false)?;
    let cached = engine(cwd, true)?;
    for (name, e, call) in [
        ("bash, cache off", &uncached, &bash),
        ("bash, cache on", &cached, &bash),
        ("read", &uncached, &read),
    ] {
        let d = e.decide(call).await;
        if d.behavior != Behavior::Allow {
            anyhow::bail!("{name}: expected allow, got {:?}: {}", d.behavior, d.reason);
        }
    }

    let noop = Stats::of(time_async(ITERATIONS, || async {}).await);
    let empty = PermissionEngine::builder()
        .cache(false)
        .build()
        .context("cannot build the permission engine")?;
    Ok(DecisionTimes {
        noop,
        empty_engine: time_decide(&empty, &bash).await,
        bash_off: time_decide(&uncached, &bash).await,
        bash_on: time_decide(&cached, &bash).await,
        read: time_decide(&uncached, &read).await,
    })
}

/// `ITERATIONS` timed `decide` calls.
async fn time_decide(engine: &PermissionEngine, call: &ToolCall) -> Stats {
    Stats::of(
        time_async(ITERATIONS, || async {
            std::hint::black_box(engine.decide(call).await);
        })
        .await,
    )
}

impl DecisionTimes {
    fn print(&self) {
        let mut table = Table::new(
            format!("Permission decision per tool call ({ITERATIONS} calls each)"),
            "ratio / empty engine",
        );
        let ratio = |s: &Stats| Some(s.median / self.empty_engine.median);
        table.row(
            "`decide` Bash `git log … \\| grep … && cargo test …`, 23 rules + default policies, cache off",
            &self.bash_off,
            ratio(&self.bash_off),
        );
        table.row(
            "`decide` same Bash call, cache on (identical input → cache hit)",
            &self.bash_on,
            ratio(&self.bash_on),
        );
        table.row(
            "`decide` Read `src/lib.rs`, 23 rules + file policy (Read is never cached)",
            &self.read,
            ratio(&self.read),
        );
        table.row(
            "baseline: `decide` same Bash call, empty engine (no rules, no policies, cache off)",
            &self.empty_engine,
            Some(1.0),
        );
        table.note(format!(
            "Timer overhead (an awaited no-op future, timed the same way): {}.",
            fmt_ms(self.noop.median)
        ));
        table.print();
    }
}

/// Timings of `HookRunner::pre_tool_use`.
struct HookTimes {
    no_hooks: Stats,
    one_fn: Stats,
    one_cmd: Stats,
}

/// Times PreToolUse with no hook, one in-process hook and one command hook
/// (checked to run first).
async fn measure_hooks(cwd: &Path) -> anyhow::Result<HookTimes> {
    let input = pre_tool_use(cwd);
    let no_hook_runner = HookRunner::new(HookRegistry::new());
    let no_hooks = time_pre_tool_use(ITERATIONS, &no_hook_runner, &input).await;
    let in_process = HookRunner::new(
        HookRegistry::builder()
            .on(HookEvent::PreToolUse, "Bash", |_input| async {
                Ok(HookOutput::default())
            })
            .build()
            .context("cannot build the hook registry")?,
    );
    let one_fn = time_pre_tool_use(ITERATIONS, &in_process, &input).await;
    let script = cwd.join("hook.sh");
    std::fs::write(&script, "#!/bin/sh\ncat > /dev/null\nexit 0\n")?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    let command = HookRunner::new(
        HookRegistry::builder()
            .command(
                HookEvent::PreToolUse,
                "Bash",
                script.display().to_string(),
                cwd,
                HookOptions::default(),
            )
            .build()
            .context("cannot build the hook registry")?,
    );
    let (check, runs) = command.pre_tool_use(input.clone()).await;
    if check.denied().is_some() || runs.len() != 1 {
        anyhow::bail!("the command hook did not run as expected: {runs:?}");
    }
    let one_cmd = time_pre_tool_use(COMMAND_ITERATIONS, &command, &input).await;
    Ok(HookTimes {
        no_hooks,
        one_fn,
        one_cmd,
    })
}

/// `n` timed PreToolUse runs of `runner`.
async fn time_pre_tool_use(n: usize, runner: &HookRunner, input: &PreToolUseInput) -> Stats {
    Stats::of(
        time_async(n, || {
            let i = input.clone();
            async move {
                std::hint::black_box(runner.pre_tool_use(i).await);
            }
        })
        .await,
    )
}

impl HookTimes {
    fn print(&self) {
        let mut table = Table::new(
            format!(
                "PreToolUse hooks per tool call ({ITERATIONS} calls each, command hook {COMMAND_ITERATIONS})"
            ),
            "ratio / no hooks",
        );
        let ratio = |s: &Stats| Some(s.median / self.no_hooks.median);
        table.row(
            "PreToolUse, one in-process hook (closure → no decision)",
            &self.one_fn,
            ratio(&self.one_fn),
        );
        table.row(
            "PreToolUse, one command hook (`#!/bin/sh` script: reads stdin, exits 0)",
            &self.one_cmd,
            ratio(&self.one_cmd),
        );
        table.row(
            "baseline: PreToolUse, no hooks registered (the runner's no-op)",
            &self.no_hooks,
            Some(1.0),
        );
        table.print();
    }
}
