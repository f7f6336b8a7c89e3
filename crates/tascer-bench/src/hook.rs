//! `tascer hook` per invocation (a new process per Claude Code event) and
//! `tascer run` cold start against the mock, each against the start-up of
//! the same binary (`tascer --version`) measured in the same run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::repo::REPO_FILES;
use crate::stats::{Stats, Table, ms_since};

const RUNS: usize = 50;

/// Names another `tascer` binary to measure (an older build, for a
/// before/after comparison in one session).
const BINARY_ENV: &str = "TASCER_BENCH_TASCER";

/// The `tascer` binary to measure: `$TASCER_BENCH_TASCER`, else the release
/// binary next to this executable, if built.
fn tascer_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(BINARY_ENV) {
        return Some(PathBuf::from(path)).filter(|p| p.exists());
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("tascer")).filter(|p| p.exists())
}

/// Runs `program args` with `stdin`, returning the wall time in ms.
fn timed(
    program: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
    cwd: &Path,
) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes())?;
    }
    let status = child.wait()?;
    anyhow::ensure!(
        status.success(),
        "{} {args:?} failed: {status}",
        program.display()
    );
    Ok(ms_since(start))
}

/// A minimal Node.js command hook: reads standard input to its end, then
/// exits 0 with no answer.
const NODE_HOOK: &str = "process.stdin.on('data', () => {}); process.stdin.on('end', () => {});";

/// `node` on the `PATH`, if any.
fn which_node() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("node"))
            .find(|p| p.is_file())
    })
}

fn pre_tool_use(cwd: &Path, id: usize, command: &str) -> String {
    event(
        cwd,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": format!("toolu_{id}")}),
    )
}

/// The `PostToolUse` of call `id`'s `ls -la`.
fn post_tool_use(cwd: &Path, id: usize) -> String {
    event(
        cwd,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls -la"}, "tool_use_id": format!("toolu_{id}"),
               "tool_response": {"stdout": "a\nb\n", "stderr": "", "interrupted": false}}),
    )
}

fn event(cwd: &Path, name: &str, extra: Value) -> String {
    let mut v = json!({
        "hook_event_name": name,
        "session_id": "bench-session",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
    });
    for (k, x) in extra.as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    v.to_string()
}

/// Runs the group and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let Some(tascer) = tascer_binary() else {
        println!("\n(no `tascer` binary: run scripts/bench, or set {BINARY_ENV} to one)");
        return Ok(());
    };
    let home = tempfile::tempdir()?;
    // Claude Code works in a repository: the benchmark's (10 000 files).
    let work = tempfile::tempdir()?;
    crate::repo::make_repo(work.path(), REPO_FILES)?;
    std::fs::create_dir_all(work.path().join(".tascer"))?;
    std::fs::write(
        work.path().join(".tascer/settings.json"),
        json!({"permissions": {"deny": ["Bash(rm:*)", "Bash(curl:*)", "Bash(git push:*)"]}})
            .to_string(),
    )?;
    let home_text = home.path().display().to_string();
    let env = [("TASCER_HOME", home_text.as_str())];
    let cwd = work.path();
    Command::new(&tascer)
        .args(["keys", "generate"])
        .envs(env)
        .stdout(Stdio::null())
        .status()?;

    let mut baseline = Vec::new();
    let mut allowed = Vec::new();
    let mut denied = Vec::new();
    let mut post = Vec::new();
    let mut prompt = Vec::new();
    // The usual alternative: a Node.js command hook that reads the event
    // and exits (the cost of starting Node alone), when `node` is here.
    let node = which_node();
    let mut node_hook = Vec::new();
    // The hook-only executable `tascer install` uses, when built.
    let hook_only = Some(tascer.with_file_name("tascer-hook")).filter(|p| p.exists());
    let mut hook_only_pre = Vec::new();
    let mut hook_only_post = Vec::new();
    let mut own_process_pre = Vec::new();
    let mut own_process_post = Vec::new();
    // Every event in its own process, as without the hook server.
    let off_env = [
        ("TASCER_HOME", home_text.as_str()),
        ("TASCER_HOOK_SERVER", "off"),
    ];
    // The first event of each executable starts its hook server: started
    // before the timed runs.
    let warm_up = pre_tool_use(cwd, 10 * RUNS, "ls -la");
    timed(&tascer, &["hook"], &warm_up, &env, cwd)?;
    let mut servers = 1;
    if let Some(hook_only) = &hook_only {
        timed(hook_only, &[], &warm_up, &env, cwd)?;
        servers += 1;
    }
    wait_for_servers(home.path(), servers);
    for i in 0..RUNS {
        baseline.push(timed(&tascer, &["--version"], "", &env, cwd)?);
        allowed.push(timed(
            &tascer,
            &["hook"],
            &pre_tool_use(cwd, i, "ls -la"),
            &env,
            cwd,
        )?);
        post.push(timed(
            &tascer,
            &["hook"],
            &post_tool_use(cwd, i),
            &env,
            cwd,
        )?);
        denied.push(timed(
            &tascer,
            &["hook"],
            &pre_tool_use(cwd, RUNS + i, "rm -rf build"),
            &env,
            cwd,
        )?);
        prompt.push(timed(
            &tascer,
            &["hook"],
            &event(cwd, "UserPromptSubmit", json!({"prompt": "next step"})),
            &env,
            cwd,
        )?);
        if let Some(hook_only) = &hook_only {
            hook_only_pre.push(timed(
                hook_only,
                &[],
                &pre_tool_use(cwd, 2 * RUNS + i, "ls -la"),
                &env,
                cwd,
            )?);
            hook_only_post.push(timed(
                hook_only,
                &[],
                &post_tool_use(cwd, 2 * RUNS + i),
                &env,
                cwd,
            )?);
            own_process_pre.push(timed(
                hook_only,
                &[],
                &pre_tool_use(cwd, 3 * RUNS + i, "ls -la"),
                &off_env,
                cwd,
            )?);
            own_process_post.push(timed(
                hook_only,
                &[],
                &post_tool_use(cwd, 3 * RUNS + i),
                &off_env,
                cwd,
            )?);
        }
        if let Some(node) = &node {
            node_hook.push(timed(
                node,
                &["-e", NODE_HOOK],
                &pre_tool_use(cwd, i, "ls -la"),
                &env,
                cwd,
            )?);
        }
    }

    // `tascer run` cold start: one reply from the mock, exec to exit.
    let server = MockServer::start(Scenario::new().turn(Turn::text("done"))).await?;
    let url = server.url();
    let run_env = [
        ("TASCER_HOME", home_text.as_str()),
        ("ANTHROPIC_API_KEY", "bench"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
    ];
    let mut run = Vec::new();
    for _ in 0..20 {
        run.push(timed(
            &tascer,
            &["run", "--output-format", "json", "hello"],
            "",
            &run_env,
            cwd,
        )?);
    }

    let base = Stats::of(baseline);
    let mut table = Table::new(
        format!(
            "`tascer hook` per invocation and `tascer run` cold start ({})",
            tascer.display()
        ),
        "× `--version`",
    );
    table.row("`tascer --version` (baseline: process start)", &base, None);
    for (name, samples) in [
        (
            "`tascer hook` PreToolUse, allowed (admission + 2 ledger entries)",
            allowed,
        ),
        (
            "`tascer hook` PreToolUse, denied by a rule (+ closed record)",
            denied,
        ),
        (
            "`tascer hook` PostToolUse (post-gates + closed record)",
            post,
        ),
        ("`tascer hook` UserPromptSubmit (one ledger entry)", prompt),
        (
            "`tascer-hook` PreToolUse, allowed (the hook-only executable)",
            hook_only_pre,
        ),
        (
            "`tascer-hook` PostToolUse (the hook-only executable)",
            hook_only_post,
        ),
        (
            "`tascer-hook` PreToolUse in its own process (`TASCER_HOOK_SERVER=off`)",
            own_process_pre,
        ),
        (
            "`tascer-hook` PostToolUse in its own process (`TASCER_HOOK_SERVER=off`)",
            own_process_post,
        ),
        ("`tascer run` one reply from the mock, exec to exit", run),
        (
            "reference: a Node.js command hook that reads the event and exits",
            node_hook,
        ),
    ] {
        if samples.is_empty() {
            continue;
        }
        let s = Stats::of(samples);
        let ratio = s.median / base.median;
        table.row(name, &s, Some(ratio));
    }
    table.note(format!(
        "{RUNS} runs each (20 for `tascer run`), interleaved, in a git repository of \
         {REPO_FILES} files; signed ledger in a temp home; the `tascer hook` and `tascer-hook` \
         rows go through each executable's hook server (started before the timed runs) unless \
         they say otherwise"
    ));
    table.print();
    Ok(())
}

/// Waits (up to 10 s) until `count` hook servers listen in `home`.
fn wait_for_servers(home: &Path, count: usize) {
    let started = Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        let listening = std::fs::read_dir(home.join("run"))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
                    .count()
            })
            .unwrap_or(0);
        if listening >= count {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    eprintln!(
        "bench hook: the hook servers did not start; the rows measure hooks in their own processes"
    );
}
