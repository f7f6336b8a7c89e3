//! The agent loop's own cost per tool call, against the scripted mock model
//! at 0 ms latency, and the bench process's peak memory.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use futures::StreamExt;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tascer::{ContextCache, Message, Options, ProviderConfig, Tool, ToolContext, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::memory::status_kib;
use crate::repo::REPO_FILES;
use crate::stats::{Stats, Table, ms_since};

/// Tool calls per benchmarked session.
pub(crate) const CALLS_PER_SESSION: usize = 20;
/// Measured sessions (after warm-up).
const SESSIONS: usize = 30;
/// Warm-up sessions.
const WARMUP: usize = 3;

/// A tool that does nothing but note when it was called, so the figures
/// are the loop's own cost. The time between two calls is one loop
/// iteration, measured where it happens (the stream's consumer may be
/// scheduled late and receive several messages at once).
struct Noop {
    calls: Arc<Mutex<Vec<Instant>>>,
}

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
        let now = Instant::now();
        self.calls.lock().push(now);
        Box::pin(async { ToolOutput::text("ok") })
    }
}

/// The `governance_us` of every governed call the pipeline reports
/// ([`tascer::GOVERNANCE_TRACE_TARGET`]), in ms.
#[derive(Clone, Default)]
struct GovernanceTimes(Arc<Mutex<Vec<f64>>>);

impl GovernanceTimes {
    /// Installs the collector as the process's tracing subscriber (only the
    /// governance target is enabled, so nothing else is traced).
    fn install() -> anyhow::Result<Self> {
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::{Layer as _, filter::filter_fn};
        let times = GovernanceTimes::default();
        let layer = times
            .clone()
            .with_filter(filter_fn(|m| m.target() == tascer::GOVERNANCE_TRACE_TARGET));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .context("cannot install the governance trace collector")?;
        Ok(times)
    }

    /// The times collected since the last call.
    fn take(&self) -> Vec<f64> {
        std::mem::take(&mut *self.0.lock())
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for GovernanceTimes {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Micros(Option<u64>);
        impl tracing::field::Visit for Micros {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "governance_us" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut micros = Micros(None);
        event.record(&mut micros);
        if let Some(us) = micros.0 {
            let ms = us as f64 / 1000.0;
            self.0.lock().push(ms);
        }
    }
}

/// Per-iteration times (ms) of the loop: from one tool call to the next,
/// i.e. the tool result through governance and the stores, one model round
/// trip, and the next call through governance up to the tool.
async fn loop_iterations(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
    cache: &ContextCache,
) -> anyhow::Result<Vec<f64>> {
    // Allowed by a rule, so every call goes through the full decision.
    loop_iterations_with(server, cwd, home, |o| {
        o.allowed_tools(["Noop"]).context_cache(cache.clone())
    })
    .await
}

/// [`loop_iterations`] of a session whose options `configure` finishes
/// (the Noop tool is given, no rule allows it yet).
pub(crate) async fn loop_iterations_with(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
    configure: impl FnOnce(Options) -> Options,
) -> anyhow::Result<Vec<f64>> {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    let calls = Arc::new(Mutex::new(Vec::with_capacity(CALLS_PER_SESSION)));
    let options = Options::new()
        .provider(provider)
        .model("bench-model")
        .cwd(cwd)
        .home(home)
        .tools(Vec::<String>::new())
        .tool(Arc::new(Noop {
            calls: Arc::clone(&calls),
        }));
    let mut stream = tascer::query("bench", configure(options));
    while let Some(message) = stream.next().await {
        if let Message::Result(r) = &message
            && r.is_error
        {
            bail!("bench session failed: {:?}", r.errors);
        }
    }
    let calls = calls.lock().clone();
    if calls.len() != CALLS_PER_SESSION {
        bail!(
            "the session made {} tool calls, expected {CALLS_PER_SESSION}",
            calls.len()
        );
    }
    Ok(calls
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect())
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

/// Loop iterations (ms) of the measured sessions, after warm-up, and the
/// governance time of their calls as the pipeline reports it.
async fn sessions(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
    governance: &GovernanceTimes,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let mut iterations = Vec::new();
    // The sessions of a workspace share one context cache, as sessions
    // started one after another in one directory should.
    let cache = ContextCache::new();
    for i in 0..(WARMUP + SESSIONS) {
        if i == WARMUP {
            governance.take();
        }
        let times = loop_iterations(server, cwd, home, &cache).await?;
        if i >= WARMUP {
            iterations.extend(times);
        }
        server.clear_requests();
    }
    Ok((iterations, governance.take()))
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
    let governance = GovernanceTimes::install()?;
    let (in_repo, gov_repo) =
        sessions(&server, &repo, &root.path().join("home-repo"), &governance).await?;
    let (in_plain, gov_plain) = sessions(
        &server,
        &plain,
        &root.path().join("home-plain"),
        &governance,
    )
    .await?;
    let baseline = raw_round_trips(&server, in_plain.len()).await?;
    let rss = status_kib("self", "VmHWM");

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
        "loop iteration, plain directory (tool call to tool call: governance + store writes + model round trip)",
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
    let gov_plain = Stats::of(gov_plain);
    let gov_repo = Stats::of(gov_repo);
    table.row(
        "governance per tool call, plain directory (measured in the pipeline: all but the tool)",
        &gov_plain,
        Some(gov_plain.median / b.median),
    );
    table.row(
        format!("governance per tool call, {REPO_FILES}-file git repository"),
        &gov_repo,
        Some(gov_repo.median / b.median),
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
