//! `tascer-hook` per `PreToolUse` with the safe profile that `tascer install
//! claude-code` writes (the `auto` mode, the sandboxed Bash rewrite and the
//! reviewers), against the same run's `true`; and the hook server's
//! resident memory after those events, busy and idle.
//!
//! Rows: a read-only command and a workspace `Read` (the profile runs them
//! without a model), a reviewed call whose verdict is cached, and a
//! reviewed call asked of the mock model every time (each input new). The
//! mock answers at once, so the reviewed row is Tascer's own cost of a
//! review plus one loopback HTTP exchange.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Route, Scenario, reviewer_verdict};

use crate::cli::{BINARY_ENV, tascer_binary};
use crate::hook::timed;
use crate::memory::status_kib;
use crate::stats::{Stats, Table};

/// Timed rounds (each row once per round, interleaved).
const RUNS: usize = 40;
/// The quiet time after which a grown server hands over to a fresh one
/// (`TASCER_HOOK_SERVER_RENEW_SECS`; a minute by default, shortened here).
const RENEW_SECS: &str = "2";
/// How long the server is left without events before its idle memory is
/// read: past the renewal, with time for the successor to start.
const IDLE_WAIT: Duration = Duration::from_secs(5);

/// A `PreToolUse` event of Claude Code in `bypassPermissions`, from `cwd`.
fn pre_tool_use(cwd: &Path, id: String, tool: &str, input: Value) -> String {
    json!({
        "hook_event_name": "PreToolUse",
        "session_id": "bench-profile-session",
        "transcript_path": cwd.join("transcript.jsonl").display().to_string(),
        "cwd": cwd.display().to_string(),
        "permission_mode": "bypassPermissions",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": id,
    })
    .to_string()
}

/// Runs the group and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let Some(tascer) = tascer_binary() else {
        println!("\n(no `tascer` binary: run scripts/bench, or set {BINARY_ENV} to one)");
        return Ok(());
    };
    let hook = tascer.with_file_name("tascer-hook");
    if !hook.exists() {
        println!(
            "\n(no `tascer-hook` next to {}: build it)",
            tascer.display()
        );
        return Ok(());
    }
    let server = MockServer::start(Scenario::new().route(Route::reviewer(
        "tool-approve",
        "npm install",
        reviewer_verdict("allow", "installing a package the project needs"),
    )))
    .await?;
    let bench = Profile::set_up(&tascer, hook, server.url())?;
    let samples = bench.measure()?;
    let memory = bench.server_memory()?;
    let reviews = tascer_testkit::reviewer_requests(&server.requests(), "tool-approve");
    print_table(&bench, samples, memory, reviews);
    Ok(())
}

/// A project after `tascer install claude-code --project`, and the
/// environment Claude Code would give its hooks.
struct Profile {
    hook: PathBuf,
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    env: Vec<(String, String)>,
}

/// Timings in milliseconds.
#[derive(Default)]
struct Samples {
    baseline: Vec<f64>,
    read_only: Vec<f64>,
    read: Vec<f64>,
    cached: Vec<f64>,
    reviewed: Vec<f64>,
}

/// The hook server's memory, in KiB: (RSS, anonymous, file-backed).
struct Memory {
    busy: (u64, u64, u64),
    idle: (u64, u64, u64),
    /// True when the idle figure is another process (the server renewed).
    renewed: bool,
    /// The first events after the idle wait, in ms.
    after_idle: Vec<f64>,
}

impl Profile {
    fn set_up(tascer: &Path, hook: PathBuf, url: String) -> anyhow::Result<Profile> {
        let root = tempfile::tempdir()?;
        let home = root.path().join("tascer-home");
        let user = root.path().join("user");
        let work = root.path().join("project");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(user.join(".claude"))?;
        std::fs::create_dir_all(work.join("src"))?;
        std::fs::write(work.join("src/lib.rs"), "pub fn f() {}\n")?;
        crate::repo::git(&work, &["init", "-q"])?;
        let env: Vec<(String, String)> = [
            ("TASCER_HOME", home.display().to_string()),
            ("HOME", user.display().to_string()),
            (
                "CLAUDE_CONFIG_DIR",
                user.join(".claude").display().to_string(),
            ),
            ("ANTHROPIC_API_KEY", "bench".to_string()),
            ("ANTHROPIC_BASE_URL", url),
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("TASCER_HOOK_SERVER_RENEW_SECS", RENEW_SECS.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for args in [
            &["keys", "generate"][..],
            &["install", "claude-code", "--project"],
        ] {
            let status = Command::new(tascer)
                .args(args)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .current_dir(&work)
                .stdout(Stdio::null())
                .status()
                .with_context(|| format!("cannot run tascer {args:?}"))?;
            anyhow::ensure!(status.success(), "tascer {args:?} failed: {status}");
        }
        Ok(Profile {
            hook,
            _root: root,
            home,
            work,
            env,
        })
    }

    fn env(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// Runs `tascer-hook` on `event` from the project's `src/`.
    fn hook(&self, event: &str) -> anyhow::Result<f64> {
        timed(&self.hook, &[], event, &self.env(), &self.work.join("src"))
    }

    /// Warms the hook server and the cached verdict, then `RUNS` rounds.
    fn measure(&self) -> anyhow::Result<Samples> {
        let cwd = self.work.join("src");
        let cached =
            |id: String| pre_tool_use(&cwd, id, "Bash", json!({"command": "npm install left-pad"}));
        self.hook(&cached("toolu_warm".into()))?;
        let mut s = Samples::default();
        let truth = PathBuf::from("/bin/true");
        for i in 0..RUNS {
            s.baseline.push(timed(&truth, &[], "", &self.env(), &cwd)?);
            s.read_only.push(self.hook(&pre_tool_use(
                &cwd,
                format!("toolu_ls{i}"),
                "Bash",
                json!({"command": "ls -la"}),
            ))?);
            s.read.push(self.hook(&pre_tool_use(
                &cwd,
                format!("toolu_read{i}"),
                "Read",
                json!({"file_path": cwd.join("lib.rs").display().to_string()}),
            ))?);
            s.cached
                .push(self.hook(&cached(format!("toolu_cached{i}")))?);
            s.reviewed.push(self.hook(&pre_tool_use(
                &cwd,
                format!("toolu_new{i}"),
                "Bash",
                json!({"command": format!("npm install left-pad-{i}")}),
            ))?);
        }
        Ok(s)
    }

    /// The hook server's memory right after the runs and after
    /// [`IDLE_WAIT`] without events (by then a fresh server's), then the
    /// first events after that wait.
    fn server_memory(&self) -> anyhow::Result<Memory> {
        let pid = server_pid(&self.home).context("no hook server is running")?;
        let read = |pid: &str| {
            (
                status_kib(pid, "VmRSS").unwrap_or(0),
                status_kib(pid, "RssAnon").unwrap_or(0),
                status_kib(pid, "RssFile").unwrap_or(0),
            )
        };
        let busy = read(&pid);
        std::thread::sleep(IDLE_WAIT);
        let now = server_pid(&self.home).context("no hook server after the quiet time")?;
        let idle = read(&now);
        let cwd = self.work.join("src");
        let mut after_idle = Vec::new();
        for i in 0..3 {
            after_idle.push(self.hook(&pre_tool_use(
                &cwd,
                format!("toolu_after{i}"),
                "Bash",
                json!({"command": "ls -la"}),
            ))?);
        }
        Ok(Memory {
            busy,
            idle,
            renewed: now != pid,
            after_idle,
        })
    }
}

/// The pid of the hook server of `home` (its lock file holds it).
fn server_pid(home: &Path) -> Option<String> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let pid = std::fs::read_dir(home.join("run"))
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "lock"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .map(|text| text.trim().to_string())
            .find(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if pid.is_some() {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn print_table(bench: &Profile, samples: Samples, memory: Memory, reviews: usize) {
    let base = Stats::of(samples.baseline);
    let mut table = Table::new(
        format!(
            "`tascer-hook` PreToolUse with the safe profile ({})",
            bench.hook.display()
        ),
        "× `true`",
    );
    table.row("`true` (baseline: a process start)", &base, None);
    for (name, samples) in [
        (
            "`ls -la` (read-only command: run by the profile, no model)",
            samples.read_only,
        ),
        ("`Read` of a workspace file (no model)", samples.read),
        (
            "`npm install left-pad` (tool-approve, verdict cached)",
            samples.cached,
        ),
        (
            "`npm install left-pad-N` (tool-approve asks the mock each time)",
            samples.reviewed,
        ),
    ] {
        let s = Stats::of(samples);
        let ratio = s.median / base.median;
        table.row(name, &s, Some(ratio));
    }
    let idle_name = if memory.renewed {
        "hook server RSS after 5 s without events (renewed after 2 s)"
    } else {
        "hook server RSS after 5 s without events (not renewed)"
    };
    for (name, (rss, anon, file)) in [
        ("hook server RSS right after the runs", memory.busy),
        (idle_name, memory.idle),
    ] {
        table.raw_row(
            name,
            mib(rss),
            format!("anon {} · file {}", mib(anon), mib(file)),
            "",
        );
    }
    let firsts: Vec<String> = memory
        .after_idle
        .iter()
        .map(|ms| format!("{ms:.2} ms"))
        .collect();
    table.raw_row(
        "the first 3 `ls -la` events after the quiet time",
        firsts.join(", "),
        "",
        "",
    );
    table.note(format!(
        "{RUNS} runs of each row, interleaved, through the hook server (warmed first); Claude \
         Code's `bypassPermissions` from the project's `src/`, after `tascer install claude-code \
         --project` and nothing else; the mock model answered {reviews} tool-approve requests \
         (1 warm-up + {RUNS} uncached expected); memory rows: median column = RSS, p99 column = \
         its anonymous and file-backed parts"
    ));
    table.print();
}
