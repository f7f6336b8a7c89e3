//! Benchmarks of the agent loop: per-tool-call overhead against the mock
//! model at 0 ms latency, peak memory, and CLI start-up and demo wall time.
//!
//! Run with `scripts/bench` (builds release binaries first). Prints a
//! markdown table for BENCHMARKS.md.

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer::{Message, Options, ProviderConfig, Tool, ToolContext, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
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
async fn loop_iterations(server: &MockServer, root: &std::path::Path) -> Vec<f64> {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    let options = Options::new()
        .provider(provider)
        .model("bench-model")
        .cwd(root)
        .home(root.join("home"))
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
        if let Message::Result(r) = &message {
            assert!(!r.is_error, "bench session failed: {:?}", r.errors);
        }
    }
    out
}

/// Baseline: the same model round trips without the loop (one HTTP request
/// with a history of the same size, through the same provider client).
async fn raw_round_trips(server: &MockServer, n: usize) -> Vec<f64> {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("bench".into());
    let client = match tascer::ModelClient::new(provider) {
        Ok(c) => c,
        Err(e) => panic!("cannot build the model client: {e}"),
    };
    let request = tascer_model_request();
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut out = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        if let Err(e) = client.send(&request, None, &cancel).await {
            panic!("baseline request failed: {e}");
        }
        out.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    out
}

fn tascer_model_request() -> tascer::ModelRequest {
    tascer::ModelRequest {
        model: "bench-model".into(),
        system: Some("bench".into()),
        messages: vec![tascer::ChatMessage::user_text("bench")],
        tools: Vec::new(),
        max_tokens: None,
        stream: true,
    }
}

fn time_command(program: &std::path::Path, args: &[&str], runs: usize) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
        out.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    Some(out)
}

#[tokio::main]
async fn main() {
    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("cannot create a temp dir: {e}"),
    };
    let scenario = (0..CALLS_PER_SESSION).fold(Scenario::new(), |s, _| {
        s.turn(Turn::tool("Noop", json!({})))
    });
    let scenario = scenario.turn(Turn::text("done"));
    let server = match MockServer::start(scenario).await {
        Ok(s) => s,
        Err(e) => panic!("cannot start the mock server: {e}"),
    };

    let mut iterations = Vec::new();
    for i in 0..(WARMUP + SESSIONS) {
        let times = loop_iterations(&server, root.path()).await;
        if i >= WARMUP {
            iterations.extend(times);
        }
        server.clear_requests();
    }
    let baseline = raw_round_trips(&server, iterations.len()).await;
    let rss = peak_rss_kib();

    let iterations = sorted(iterations);
    let baseline = sorted(baseline);
    let (it50, it99) = (percentile(&iterations, 50.0), percentile(&iterations, 99.0));
    let (b50, b99) = (percentile(&baseline, 50.0), percentile(&baseline, 99.0));

    println!(
        "## Agent loop ({CALLS_PER_SESSION} tool calls per session, {SESSIONS} sessions, mock model at 0 ms latency)\n"
    );
    println!("| measure | median | p99 |");
    println!("| --- | --- | --- |");
    println!(
        "| loop iteration (tool dispatch + store writes + model round trip) | {it50:.3} ms | {it99:.3} ms |"
    );
    println!(
        "| baseline: bare model round trip through the same provider client | {b50:.3} ms | {b99:.3} ms |"
    );
    println!(
        "| loop overhead per tool call (iteration − baseline) | {:.3} ms | {:.3} ms |",
        it50 - b50,
        it99 - b99
    );
    println!("| ratio iteration / baseline | {:.2}× | |", it50 / b50);
    if let Some(kib) = rss {
        println!(
            "\nPeak RSS of the bench process (VmHWM): {:.1} MiB",
            kib as f64 / 1024.0
        );
    }

    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let tascer = exe_dir.map(|d| d.join("tascer")).filter(|p| p.exists());
    match tascer {
        Some(tascer) => {
            println!("\n## CLI wall time ({})\n", tascer.display());
            println!("| command | runs | median | min |");
            println!("| --- | --- | --- | --- |");
            for (args, runs) in [(&["--version"][..], 20), (&["demo"][..], 5)] {
                match time_command(&tascer, args, runs) {
                    Some(t) => {
                        let t = sorted(t);
                        println!(
                            "| `tascer {}` | {runs} | {:.1} ms | {:.1} ms |",
                            args.join(" "),
                            percentile(&t, 50.0),
                            t[0]
                        );
                    }
                    None => println!("| `tascer {}` | failed | | |", args.join(" ")),
                }
            }
        }
        None => println!("\n(no release `tascer` binary next to the bench; run scripts/bench)"),
    }
}
