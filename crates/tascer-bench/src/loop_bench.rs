//! The agent loop's own cost per tool call, against the scripted mock model
//! at 0 ms latency, and the bench process's peak memory.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer::{Message, Options, ProviderConfig, Tool, ToolContext, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::repo::REPO_FILES;
use crate::stats::{Stats, Table, ms_since};

/// Tool calls per benchmarked session.
const CALLS_PER_SESSION: usize = 20;
/// Measured sessions (after warm-up).
const SESSIONS: usize = 30;
/// Warm-up sessions.
const WARMUP: usize = 3;

/// A tool that does nothing, so the figures are the loop's own cost.
struct Noop;

impl Tool for Noop {
    fn name(&self) -> &str {
        "Noop"
    }
    fn description(&self) -> &str {
        "Does nothing."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, _input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async { ToolOutput::text("ok") })
    }
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Per-iteration times (ms) of the loop: from one assistant message to the
/// next, i.e. tool dispatch + store writes + one model round trip.
async fn loop_iterations(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
) -> anyhow::Result<Vec<f64>> {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    let options = Options::new()
        .provider(provider)
        .model("bench-model")
        .cwd(cwd)
        .home(home)
        .tools(Vec::<String>::new())
        .tool(Arc::new(Noop))
        // Allowed by a rule, so every call goes through the full decision.
        .allowed_tools(["Noop"]);
    let mut stream = tascer::query("bench", options);
    let mut last: Option<Instant> = None;
    let mut out = Vec::new();
    while let Some(message) = stream.next().await {
        if let Message::Assistant(_) = message {
            let now = Instant::now();
            if let Some(prev) = last {
                out.push((now - prev).as_secs_f64() * 1000.0);
            }
            last = Some(now);
        }
        if let Message::Result(r) = &message
            && r.is_error
        {
            bail!("bench session failed: {:?}", r.errors);
        }
    }
    Ok(out)
}

/// Baseline: the same model round trips without the loop (one HTTP request
/// with a one-message history, through the same provider client).
async fn raw_round_trips(server: &MockServer, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    let client = tascer::ModelClient::new(provider).context("cannot build the model client")?;
    let request = tascer::ModelRequest {
        model: "bench-model".into(),
        system: Some("bench".into()),
        messages: vec![tascer::ChatMessage::user_text("bench")],
        tools: Vec::new(),
        max_tokens: None,
        stream: true,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut out = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        client
            .send(&request, None, &cancel)
            .await
            .context("baseline request failed")?;
        out.push(ms_since(start));
    }
    Ok(out)
}

/// Loop iterations (ms) of the measured sessions, after warm-up.
async fn sessions(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
) -> anyhow::Result<Vec<f64>> {
    let mut iterations = Vec::new();
    for i in 0..(WARMUP + SESSIONS) {
        let times = loop_iterations(server, cwd, home).await?;
        if i >= WARMUP {
            iterations.extend(times);
        }
        server.clear_requests();
    }
    Ok(iterations)
}

/// Runs the loop benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let root = tempfile::tempdir().context("cannot create a temp dir")?;
    let scenario = (0..CALLS_PER_SESSION).fold(Scenario::new(), |s, _| {
        s.turn(Turn::tool("Noop", json!({})))
    });
    let scenario = scenario.turn(Turn::text("done"));
    let server = MockServer::start(scenario)
        .await
        .context("cannot start the mock server")?;

    // The same sessions in a git repository, where every call's context
    // capture checks the repository's state, and in a plain directory.
    // The repository is made first, and the plain sessions run after the
    // repository's, so that the writes of its set-up are long done.
    let plain = root.path().join("plain");
    let repo = root.path().join("repo");
    std::fs::create_dir_all(&plain).context("cannot create the plain workspace")?;
    std::fs::create_dir_all(&repo).context("cannot create the repository")?;
    crate::repo::make_repo(&repo, REPO_FILES)?;
    let in_repo = sessions(&server, &repo, &root.path().join("home-repo")).await?;
    let in_plain = sessions(&server, &plain, &root.path().join("home-plain")).await?;
    let baseline = raw_round_trips(&server, in_plain.len()).await?;
    let rss = peak_rss_kib();

    let plain = Stats::of(in_plain);
    let repo = Stats::of(in_repo);
    let b = Stats::of(baseline);
    let mut table = Table::new(
        format!(
            "Agent loop ({CALLS_PER_SESSION} tool calls per session, {SESSIONS} sessions per workspace, mock model at 0 ms latency)"
        ),
        "ratio / baseline",
    );
    table.row(
        "loop iteration, plain directory (tool dispatch + governance + store writes + model round trip)",
        &plain,
        Some(plain.median / b.median),
    );
    table.row(
        format!("loop iteration, {REPO_FILES}-file git repository (3 modified + 1 untracked)"),
        &repo,
        Some(repo.median / b.median),
    );
    table.row(
        "baseline: bare model round trip through the same provider client",
        &b,
        Some(1.0),
    );
    table.raw_row(
        "loop overhead per tool call, plain directory (iteration − baseline)",
        crate::stats::fmt_ms(plain.median - b.median),
        crate::stats::fmt_ms(plain.p99 - b.p99),
        "",
    );
    table.raw_row(
        format!("loop overhead per tool call, {REPO_FILES}-file git repository"),
        crate::stats::fmt_ms(repo.median - b.median),
        crate::stats::fmt_ms(repo.p99 - b.p99),
        "",
    );
    if let Some(kib) = rss {
        table.note(format!(
            "Peak RSS of the bench process so far (VmHWM), which also hosts the mock server: {:.1} MiB",
            kib as f64 / 1024.0
        ));
    }
    table.print();
    Ok(())
}
