//! `tascer hook` per invocation (a new process per Claude Code event) and
//! `tascer run` cold start against the mock, each against the smallest
//! process there is (`true`) and the start-up of the same binary
//! (`tascer --version`), measured in the same run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::cli::{BINARY_ENV, tascer_binary};
use crate::repo::REPO_FILES;
use crate::stats::{Stats, Table, ms_since};

const RUNS: usize = 50;

/// Runs `program args` with `stdin`, returning the wall time in ms.
pub(crate) fn timed(
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
    let bench = Bench::set_up(tascer)?;
    let samples = bench.measure_hooks()?;
    let run = bench.measure_cold_start().await?;
    print_table(&bench.tascer, samples, run);
    Ok(())
}

/// The binaries measured and the home and repository they run in.
struct Bench {
    tascer: PathBuf,
    /// The hook-only executable `tascer install` uses, when built.
    hook_only: Option<PathBuf>,
    /// The usual alternative: a Node.js command hook that reads the event
    /// and exits (the cost of starting Node alone), when `node` is here.
    node: Option<PathBuf>,
    home: tempfile::TempDir,
    /// Claude Code works in a repository: the benchmark's (10 000 files).
    work: tempfile::TempDir,
    home_text: String,
}

/// The timings of the hook rows, in milliseconds.
#[derive(Default)]
struct Samples {
    /// `true`: what starting any process costs.
    true_baseline: Vec<f64>,
    baseline: Vec<f64>,
    allowed: Vec<f64>,
    denied: Vec<f64>,
    post: Vec<f64>,
    prompt: Vec<f64>,
    node_hook: Vec<f64>,
    hook_only_pre: Vec<f64>,
    hook_only_post: Vec<f64>,
    own_process_pre: Vec<f64>,
    own_process_post: Vec<f64>,
}

impl Bench {
    /// A temp home with a signing key, and a repository with deny rules.
    fn set_up(tascer: PathBuf) -> anyhow::Result<Bench> {
        let home = tempfile::tempdir()?;
        let work = tempfile::tempdir()?;
        crate::repo::make_repo(work.path(), REPO_FILES)?;
        std::fs::create_dir_all(work.path().join(".tascer"))?;
        std::fs::write(
            work.path().join(".tascer/settings.json"),
            json!({"permissions": {"deny": ["Bash(rm:*)", "Bash(curl:*)", "Bash(git push:*)"]}})
                .to_string(),
        )?;
        let home_text = home.path().display().to_string();
        Command::new(&tascer)
            .args(["keys", "generate"])
            .envs([("TASCER_HOME", home_text.as_str())])
            .stdout(Stdio::null())
            .status()?;
        Ok(Bench {
            node: which_node(),
            hook_only: Some(tascer.with_file_name("tascer-hook")).filter(|p| p.exists()),
            tascer,
            home,
            work,
            home_text,
        })
    }

    /// `RUNS` rounds of every hook row, interleaved, after starting the
    /// hook servers.
    fn measure_hooks(&self) -> anyhow::Result<Samples> {
        let env = [("TASCER_HOME", self.home_text.as_str())];
        let cwd = self.work.path();
        // The first event of each executable starts its hook server: started
        // before the timed runs.
        let warm_up = pre_tool_use(cwd, 10 * RUNS, "ls -la");
        timed(&self.tascer, &["hook"], &warm_up, &env, cwd)?;
        if let Some(hook_only) = &self.hook_only {
            timed(hook_only, &[], &warm_up, &env, cwd)?;
        }
        // Both executables serve through `tascer hook --serve` of the same
        // `tascer` in the same environment: one server.
        wait_for_servers(self.home.path(), 1);
        let mut samples = Samples::default();
        for i in 0..RUNS {
            self.measure_round(i, &mut samples)?;
        }
        Ok(samples)
    }

    /// Round `i`: each row once.
    fn measure_round(&self, i: usize, samples: &mut Samples) -> anyhow::Result<()> {
        let tascer = &self.tascer;
        let env = [("TASCER_HOME", self.home_text.as_str())];
        // Every event in its own process, as without the hook server.
        let off_env = [
            ("TASCER_HOME", self.home_text.as_str()),
            ("TASCER_HOOK_SERVER", "off"),
        ];
        let cwd = self.work.path();
        let hook = |stdin: &str| timed(tascer, &["hook"], stdin, &env, cwd);
        samples
            .true_baseline
            .push(timed(Path::new("true"), &[], "", &env, cwd)?);
        samples
            .baseline
            .push(timed(tascer, &["--version"], "", &env, cwd)?);
        samples.allowed.push(hook(&pre_tool_use(cwd, i, "ls -la"))?);
        samples.post.push(hook(&post_tool_use(cwd, i))?);
        samples
            .denied
            .push(hook(&pre_tool_use(cwd, RUNS + i, "rm -rf build"))?);
        samples.prompt.push(hook(&event(
            cwd,
            "UserPromptSubmit",
            json!({"prompt": "next step"}),
        ))?);
        if let Some(hook_only) = &self.hook_only {
            let pre = pre_tool_use(cwd, 2 * RUNS + i, "ls -la");
            samples
                .hook_only_pre
                .push(timed(hook_only, &[], &pre, &env, cwd)?);
            let post = post_tool_use(cwd, 2 * RUNS + i);
            samples
                .hook_only_post
                .push(timed(hook_only, &[], &post, &env, cwd)?);
            let pre = pre_tool_use(cwd, 3 * RUNS + i, "ls -la");
            samples
                .own_process_pre
                .push(timed(hook_only, &[], &pre, &off_env, cwd)?);
            let post = post_tool_use(cwd, 3 * RUNS + i);
            samples
                .own_process_post
                .push(timed(hook_only, &[], &post, &off_env, cwd)?);
        }
        if let Some(node) = &self.node {
            let pre = pre_tool_use(cwd, i, "ls -la");
            samples
                .node_hook
                .push(timed(node, &["-e", NODE_HOOK], &pre, &env, cwd)?);
        }
        Ok(())
    }

    /// `tascer run` cold start: one reply from the mock, exec to exit.
    async fn measure_cold_start(&self) -> anyhow::Result<Vec<f64>> {
        let server = MockServer::start(Scenario::new().turn(Turn::text("done"))).await?;
        let url = server.url();
        let run_env = [
            ("TASCER_HOME", self.home_text.as_str()),
            ("ANTHROPIC_API_KEY", "bench"),
            ("ANTHROPIC_BASE_URL", url.as_str()),
        ];
        let mut run = Vec::new();
        for _ in 0..20 {
            run.push(timed(
                &self.tascer,
                &["run", "--output-format", "json", "hello"],
                "",
                &run_env,
                self.work.path(),
            )?);
        }
        Ok(run)
    }
}

/// The group's table: each row against the `true` baseline.
fn print_table(tascer: &Path, samples: Samples, run: Vec<f64>) {
    let base = Stats::of(samples.true_baseline);
    let mut table = Table::new(
        format!(
            "`tascer hook` per invocation and `tascer run` cold start ({})",
            tascer.display()
        ),
        "× `true`",
    );
    table.row("`true` (baseline: starting a process)", &base, None);
    for (name, samples) in [
        (
            "`tascer --version` (the binary's start-up)",
            samples.baseline,
        ),
        (
            "`tascer hook` PreToolUse, allowed (admission + 2 ledger entries)",
            samples.allowed,
        ),
        (
            "`tascer hook` PreToolUse, denied by a rule (+ closed record)",
            samples.denied,
        ),
        (
            "`tascer hook` PostToolUse (post-gates + closed record)",
            samples.post,
        ),
        (
            "`tascer hook` UserPromptSubmit (one ledger entry)",
            samples.prompt,
        ),
        (
            "`tascer-hook` PreToolUse, allowed (the hook-only executable)",
            samples.hook_only_pre,
        ),
        (
            "`tascer-hook` PostToolUse (the hook-only executable)",
            samples.hook_only_post,
        ),
        (
            "`tascer-hook` PreToolUse in its own process (`TASCER_HOOK_SERVER=off`)",
            samples.own_process_pre,
        ),
        (
            "`tascer-hook` PostToolUse in its own process (`TASCER_HOOK_SERVER=off`)",
            samples.own_process_post,
        ),
        ("`tascer run` one reply from the mock, exec to exit", run),
        (
            "reference: a Node.js command hook that reads the event and exits",
            samples.node_hook,
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
