//! The loop benchmark's telemetry variant: the same sessions with an OTLP
//! exporter (HTTP/protobuf, traces, metrics and log events) sending to a
//! sink on loopback, alternated session by session with sessions without
//! one, so both see the same machine (docs/telemetry.md, BENCHMARKS.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use serde_json::json;
use tascer::ContextCache;
use tascer_telemetry::{Telemetry, TelemetryConfig};
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::loop_bench::{CALLS_PER_SESSION, loop_iterations_with};
use crate::stats::{Stats, Table};

/// Measured session pairs (after warm-up).
const PAIRS: usize = 30;
/// Warm-up pairs.
const WARMUP: usize = 3;

/// Loop iterations (ms) without and with the exporter, and how many
/// export requests the sink took.
struct Pair {
    pub without: Vec<f64>,
    pub with: Vec<f64>,
    pub exports: usize,
}

/// An OTLP/HTTP sink on 127.0.0.1 that answers every export with 200 and
/// counts them; its URL.
async fn sink(count: Arc<AtomicUsize>) -> anyhow::Result<String> {
    let app = axum::Router::new().fallback(move || {
        let count = Arc::clone(&count);
        async move {
            count.fetch_add(1, Ordering::Relaxed);
            ""
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot bind the OTLP sink")?;
    let addr = listener.local_addr().context("no sink address")?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{addr}"))
}

/// Sessions in `cwd` alternating without and with telemetry.
async fn pairs(
    server: &MockServer,
    cwd: &std::path::Path,
    home: &std::path::Path,
) -> anyhow::Result<Pair> {
    let count = Arc::new(AtomicUsize::new(0));
    let url = sink(Arc::clone(&count)).await?;
    let env = move |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| url.clone());
    let config = TelemetryConfig::resolve(&env, &Default::default())?
        .context("the OTLP endpoint did not turn telemetry on")?;
    let telemetry = Telemetry::start(&config, "tascer")?;
    let observer = telemetry.observer();
    let cache = ContextCache::new();
    let mut pair = Pair {
        without: Vec::new(),
        with: Vec::new(),
        exports: 0,
    };
    for i in 0..(WARMUP + PAIRS) {
        let without = loop_iterations_with(server, cwd, home, |o| {
            o.allowed_tools(["Noop"]).context_cache(cache.clone())
        })
        .await?;
        server.clear_requests();
        let observed = Arc::clone(&observer);
        let with = loop_iterations_with(server, cwd, home, |o| {
            o.allowed_tools(["Noop"])
                .context_cache(cache.clone())
                .observer(observed)
        })
        .await?;
        server.clear_requests();
        if i >= WARMUP {
            pair.without.extend(without);
            pair.with.extend(with);
        }
    }
    drop(observer);
    if let Some(warning) = telemetry.shutdown() {
        anyhow::bail!("the sink did not take everything: {warning}");
    }
    pair.exports = count.load(Ordering::Relaxed);
    Ok(pair)
}

/// Runs the telemetry variant of the loop benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let root = tempfile::tempdir().context("cannot create a temp dir")?;
    let scenario = (0..CALLS_PER_SESSION).fold(Scenario::new(), |s, _| {
        s.turn(Turn::tool("Noop", json!({})))
    });
    let server = MockServer::start(scenario.turn(Turn::text("done")))
        .await
        .context("cannot start the mock server")?;
    let plain = root.path().join("plain");
    std::fs::create_dir_all(&plain).context("cannot create the workspace")?;
    let pair = pairs(&server, &plain, &root.path().join("home")).await?;
    let without = Stats::of(pair.without);
    let with = Stats::of(pair.with);
    let mut table = Table::new(
        format!(
            "Agent loop with OpenTelemetry ({CALLS_PER_SESSION} tool calls per session, {PAIRS} session pairs alternating without/with, mock model at 0 ms latency)"
        ),
        "ratio / without",
    );
    table.row(
        "loop iteration, plain directory, no telemetry",
        &without,
        Some(1.0),
    );
    table.row(
        "loop iteration, plain directory, OTLP/HTTP exporter (traces, metrics, log events) to a loopback sink",
        &with,
        Some(with.median / without.median),
    );
    table.note(format!(
        "{} export requests reached the sink (batches of spans and events, metric exports)",
        pair.exports
    ));
    table.print();
    Ok(())
}
