//! What the safety chain costs a tool call in the loop (docs/reviewers.md):
//! webhooks (each call queues its `PreToolUse` and `PostToolUse` events
//! in the outbox), and a call the rules would ask about answered by the
//! `tool-approve` reviewer from its cache, or by a model call. Measured as
//! loop iterations (tool call to tool call) against the same sessions
//! allowed by a rule, in the same run, sessions interleaved.

use anyhow::Context;
use serde_json::json;
use tascer::Options;
use tascer::guard::permissions::PermissionMode;
use tascer_testkit::{MockServer, Route, Scenario, Turn, reviewer_verdict};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::loop_bench::{CALLS_PER_SESSION, loop_iterations_with};
use crate::stats::{Stats, Table};

/// Measured sessions per configuration (after one warm-up round).
const SESSIONS: usize = 20;

/// A webhook receiver on loopback that answers every POST with 200.
async fn receiver() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot bind the webhook receiver")?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 8192];
                // Read the head, then as much body as it announces.
                loop {
                    let Ok(n) = stream.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if seen.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    Ok(url)
}

/// Runs the safety benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let root = tempfile::tempdir().context("cannot create a temp dir")?;
    let cwd = root.path().join("ws");
    std::fs::create_dir_all(&cwd).context("cannot create the workspace")?;
    let scenario = (0..CALLS_PER_SESSION)
        .fold(Scenario::new(), |s, _| {
            s.turn(Turn::tool("Noop", json!({})))
        })
        .turn(Turn::text("done"))
        .route(Route::reviewer(
            "tool-approve",
            "Noop",
            reviewer_verdict("allow", "does nothing"),
        ));
    let server = MockServer::start(scenario)
        .await
        .context("cannot start the mock server")?;
    let url = receiver().await?;

    type Configure = Box<dyn Fn(Options) -> Options>;
    let configs: Vec<(&str, Configure)> = vec![
        (
            "baseline: allowed by a rule",
            Box::new(|o: Options| o.allowed_tools(["Noop"])),
        ),
        (
            "allowed by a rule, one webhook (2 events queued per call)",
            Box::new(move |o: Options| {
                o.allowed_tools(["Noop"])
                    .settings(json!({"webhooks": [{"url": url}]}).to_string())
            }),
        ),
        (
            "asked, answered by tool-approve from its cache",
            Box::new(|o: Options| {
                o.permission_mode(PermissionMode::Default)
                    .settings(json!({"safety": {"reviewers": {"toolApprove": {}}}}).to_string())
            }),
        ),
        (
            "asked, answered by tool-approve with a model call (cache off)",
            Box::new(|o: Options| {
                o.permission_mode(PermissionMode::Default).settings(
                    json!({"safety": {"reviewers": {"toolApprove": {"cacheTtlSeconds": 0}}}})
                        .to_string(),
                )
            }),
        ),
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    for round in 0..=SESSIONS {
        for (i, (_, configure)) in configs.iter().enumerate() {
            let home = root.path().join(format!("home-{i}"));
            let times = loop_iterations_with(&server, &cwd, &home, configure).await?;
            if round > 0 {
                samples[i].extend(times);
            }
            server.clear_requests();
        }
    }
    let stats: Vec<Stats> = samples.into_iter().map(Stats::of).collect();
    let base = stats[0].median;
    let mut table = Table::new(
        format!(
            "Safety chain in the loop ({CALLS_PER_SESSION} tool calls per session, {SESSIONS} sessions per configuration, mock model at 0 ms latency)"
        ),
        "ratio / baseline",
    );
    for ((name, _), s) in configs.iter().zip(&stats) {
        table.row(format!("loop iteration, {name}"), s, Some(s.median / base));
    }
    for ((name, _), s) in configs.iter().zip(&stats).skip(1) {
        table.raw_row(
            format!("added per tool call: {name}"),
            crate::stats::fmt_ms(s.median - base),
            "",
            "",
        );
    }
    table.note(
        "A loop iteration is one tool call to the next: the call's governance and store writes plus one model round trip.",
    );
    table.print();
    Ok(())
}
