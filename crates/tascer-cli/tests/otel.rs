//! OpenTelemetry end to end: a real `tascer run` session of 20 tool calls
//! against the mock model, exporting over OTLP/HTTP to a receiver in this
//! test that decodes the protobuf (`opentelemetry-proto`'s types). Also: a
//! collector that never answers does not hold the session or its exit, and
//! a gRPC exporter with no collector leaves the session alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn, Usage};

/// The model every turn names (priced, so the cost metric has a value).
const MODEL: &str = "claude-sonnet-4";
/// Allowed Bash calls; with the Write call and the denied one, 20 calls.
const ECHOES: usize = 18;

/// What the receiver was sent.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metrics: Vec<Metric>,
    logs: Vec<LogRecord>,
}

type Shared = Arc<Mutex<Received>>;

/// An OTLP/HTTP receiver on 127.0.0.1: `/v1/traces`, `/v1/metrics`,
/// `/v1/logs`, protobuf bodies.
async fn receiver() -> (SocketAddr, Shared) {
    let shared = Shared::default();
    let app = axum::Router::new()
        .route(
            "/v1/traces",
            post(|State(s): State<Shared>, body: Bytes| async move {
                let request = ExportTraceServiceRequest::decode(body).unwrap();
                let spans = request
                    .resource_spans
                    .into_iter()
                    .flat_map(|r| r.scope_spans)
                    .flat_map(|s| s.spans);
                s.lock().unwrap().spans.extend(spans);
                ""
            }),
        )
        .route(
            "/v1/metrics",
            post(|State(s): State<Shared>, body: Bytes| async move {
                let request = ExportMetricsServiceRequest::decode(body).unwrap();
                let metrics = request
                    .resource_metrics
                    .into_iter()
                    .flat_map(|r| r.scope_metrics)
                    .flat_map(|s| s.metrics);
                s.lock().unwrap().metrics.extend(metrics);
                ""
            }),
        )
        .route(
            "/v1/logs",
            post(|State(s): State<Shared>, body: Bytes| async move {
                let request = ExportLogsServiceRequest::decode(body).unwrap();
                let logs = request
                    .resource_logs
                    .into_iter()
                    .flat_map(|r| r.scope_logs)
                    .flat_map(|s| s.log_records);
                s.lock().unwrap().logs.extend(logs);
                ""
            }),
        )
        .with_state(Arc::clone(&shared));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, shared)
}

fn usage() -> Usage {
    Usage {
        input_tokens: 100,
        output_tokens: 10,
        cache_read_input_tokens: 7,
        cache_creation_input_tokens: 3,
    }
}

/// 18 allowed `echo` calls, a Write (allowed by a rule) and an `rm`
/// (denied by a rule), then the answer.
fn scenario() -> Scenario {
    let mut scenario = Scenario::new();
    for i in 0..ECHOES {
        scenario = scenario.turn(
            Turn::tool("Bash", json!({"command": format!("echo call-{i}")})).with_usage(usage()),
        );
    }
    scenario
        .turn(
            Turn::tool(
                "Write",
                json!({"file_path": "notes.md", "content": "one\ntwo\nthree\n"}),
            )
            .with_usage(usage()),
        )
        .turn(Turn::tool("Bash", json!({"command": "rm -rf build"})).with_usage(usage()))
        .turn(Turn::text("Done.").with_usage(usage()))
}

/// Runs `tascer run` in `dir` against `server` with `env`, in JSON output;
/// the output and the session id.
async fn run_session(dir: &Path, server: &MockServer, env: &[(&str, String)]) -> (Output, String) {
    let mut cmd = common::tascer(&dir.join("home"), dir);
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "run",
            "--model",
            MODEL,
            "--output-format",
            "json",
            "--allowedTools=Bash(echo:*),Write",
            "--disallowedTools=Bash(rm:*)",
            "go",
        ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "not a JSON result ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let session = result["session_id"].as_str().unwrap().to_string();
    (out, session)
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn text(attrs: &[KeyValue], key: &str) -> String {
    match attr(attrs, key) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        other => panic!("{key} is not a string: {other:?}"),
    }
}

fn int(attrs: &[KeyValue], key: &str) -> i64 {
    match attr(attrs, key) {
        Some(any_value::Value::IntValue(n)) => *n,
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The sum of a counter's points whose attributes include `with`.
fn counter_sum(metrics: &[Metric], name: &str, with: (&str, &str)) -> f64 {
    metrics
        .iter()
        .filter(|m| m.name == name)
        .filter_map(|m| match &m.data {
            Some(metric::Data::Sum(sum)) => Some(sum.data_points.clone()),
            _ => None,
        })
        .flatten()
        .filter(|p| with.0.is_empty() || text(&p.attributes, with.0) == with.1)
        .map(|p| match p.value {
            Some(number_data_point::Value::AsInt(n)) => n as f64,
            Some(number_data_point::Value::AsDouble(d)) => d,
            None => 0.0,
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_twenty_call_session_exports_spans_metrics_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    let (addr, received) = receiver().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_string()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-test=1".to_string()),
    ];
    let (out, session) = run_session(dir.path(), &server, &env).await;
    assert_ok(&out);
    let received = received.lock().unwrap();

    // Names: one invoke_agent, a chat per model call, an execute_tool per call.
    let names: Vec<&str> = received.spans.iter().map(|s| s.name.as_str()).collect();
    let count = |name: &str| names.iter().filter(|n| **n == name).count();
    assert_eq!(count("invoke_agent"), 1, "{names:?}");
    assert_eq!(count(&format!("chat {MODEL}")), ECHOES + 3, "{names:?}");
    assert_eq!(count("execute_tool Bash"), ECHOES + 1, "{names:?}");
    assert_eq!(count("execute_tool Write"), 1, "{names:?}");

    // Links: one trace, every chat and execute_tool a child of invoke_agent.
    let agent = received
        .spans
        .iter()
        .find(|s| s.name == "invoke_agent")
        .unwrap();
    assert!(agent.parent_span_id.is_empty(), "invoke_agent is the root");
    for span in received.spans.iter().filter(|s| s.name != "invoke_agent") {
        assert_eq!(
            span.trace_id, agent.trace_id,
            "{} in another trace",
            span.name
        );
        assert_eq!(
            span.parent_span_id, agent.span_id,
            "{} is not under invoke_agent",
            span.name
        );
        assert_eq!(text(&span.attributes, "gen_ai.conversation.id"), session);
        assert_eq!(text(&span.attributes, "session.id"), session);
    }
    assert_eq!(
        text(&agent.attributes, "gen_ai.operation.name"),
        "invoke_agent"
    );
    assert!(text(&agent.attributes, "tascer.policy.digest").starts_with("sha256:"));
    assert_eq!(
        int(&agent.attributes, "gen_ai.usage.input_tokens"),
        100 * (ECHOES as i64 + 3)
    );

    // Model calls: GenAI attributes and token usage.
    for chat in received
        .spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
    {
        let a = &chat.attributes;
        assert_eq!(text(a, "gen_ai.operation.name"), "chat");
        assert_eq!(text(a, "gen_ai.provider.name"), "anthropic");
        assert_eq!(text(a, "gen_ai.system"), "anthropic");
        assert_eq!(text(a, "gen_ai.request.model"), MODEL);
        assert_eq!(text(a, "gen_ai.response.model"), MODEL);
        assert_eq!(int(a, "gen_ai.usage.input_tokens"), 100);
        assert_eq!(int(a, "gen_ai.usage.output_tokens"), 10);
        assert!(attr(a, "gen_ai.response.finish_reasons").is_some());
    }

    // Tool calls: the decision and who made it, and the ledger hash of the
    // entry that closed each call's record, as the store has it.
    let records: Vec<common::LedgerRow> = common::ledger_rows(&dir.path().join("home"), &session)
        .into_iter()
        .filter(|r| r.kind == "tool_record")
        .collect();
    let ledger: BTreeMap<String, String> = records
        .iter()
        .map(|r| {
            (
                r.payload["tool_use_id"].as_str().unwrap().to_string(),
                r.hash.clone(),
            )
        })
        .collect();
    assert_eq!(ledger.len(), ECHOES + 2);
    let tools: Vec<&Span> = received
        .spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    for span in &tools {
        let a = &span.attributes;
        let id = text(a, "gen_ai.tool.call.id");
        assert_eq!(text(a, "gen_ai.tool.type"), "function");
        assert_eq!(
            Some(&text(a, "tascer.ledger.entry_hash")),
            ledger.get(&id),
            "ledger hash of {id}"
        );
    }
    // The span of the call whose recorded command is `command`.
    let by_command = |command: &str| {
        let record = records
            .iter()
            .find(|r| r.payload["input"]["command"] == command)
            .unwrap();
        let id = record.payload["tool_use_id"].as_str().unwrap();
        tools
            .iter()
            .find(|s| text(&s.attributes, "gen_ai.tool.call.id") == id)
            .copied()
            .unwrap()
    };
    let allowed = by_command("echo call-0");
    assert_eq!(text(&allowed.attributes, "gen_ai.tool.name"), "Bash");
    assert_eq!(
        text(&allowed.attributes, "tascer.permission.decision"),
        "allow"
    );
    assert_eq!(
        text(&allowed.attributes, "tascer.permission.source"),
        "rule"
    );
    assert_eq!(
        text(&allowed.attributes, "tascer.permission.source_name"),
        "Bash(echo:*)"
    );
    assert_eq!(text(&allowed.attributes, "tascer.tool.status"), "validated");
    let denied = by_command("rm -rf build");
    assert_eq!(
        text(&denied.attributes, "tascer.permission.decision"),
        "deny"
    );
    assert_eq!(text(&denied.attributes, "tascer.permission.source"), "rule");
    assert_eq!(
        text(&denied.attributes, "tascer.permission.source_name"),
        "Bash(rm:*)"
    );
    assert_eq!(text(&denied.attributes, "tascer.tool.status"), "blocked");
    assert_eq!(text(&denied.attributes, "error.type"), "blocked");

    // Metrics under Claude Code's names.
    let m = &received.metrics;
    let calls = (ECHOES + 3) as f64;
    assert_eq!(
        counter_sum(m, "claude_code.token.usage", ("type", "input")),
        100.0 * calls
    );
    assert_eq!(
        counter_sum(m, "claude_code.token.usage", ("type", "output")),
        10.0 * calls
    );
    assert_eq!(
        counter_sum(m, "claude_code.token.usage", ("type", "cacheRead")),
        7.0 * calls
    );
    assert!(counter_sum(m, "claude_code.cost.usage", ("model", MODEL)) > 0.0);
    assert_eq!(counter_sum(m, "claude_code.session.count", ("", "")), 1.0);
    assert_eq!(
        counter_sum(m, "claude_code.lines_of_code.count", ("type", "added")),
        3.0
    );
    assert_eq!(
        counter_sum(
            m,
            "claude_code.code_edit_tool.decision",
            ("decision", "accept")
        ),
        1.0
    );

    // Log events under Claude Code's names.
    let events = |name: &str| {
        received
            .logs
            .iter()
            .filter(|l| l.event_name == name)
            .collect::<Vec<_>>()
    };
    assert_eq!(events("claude_code.tool_result").len(), ECHOES + 2);
    assert_eq!(events("claude_code.tool_decision").len(), ECHOES + 2);
    assert_eq!(events("claude_code.api_request").len(), ECHOES + 3);
    let rejected: Vec<_> = events("claude_code.tool_decision")
        .into_iter()
        .filter(|l| text(&l.attributes, "decision") == "reject")
        .collect();
    assert_eq!(rejected.len(), 1);
    assert_eq!(text(&rejected[0].attributes, "tool_name"), "Bash");
    assert_eq!(text(&rejected[0].attributes, "session.id"), session);
}

/// The same session as the SDKs run it (`cli_path`: the control protocol
/// over stdin and stdout) exports the same spans.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_run_by_an_sdk_exports_its_spans_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    let (addr, received) = receiver().await;
    let prompt = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    let input = dir.path().join("stdin.jsonl");
    std::fs::write(&input, format!("{prompt}\n")).unwrap();
    let mut cmd = common::tascer(&dir.path().join("home"), dir.path());
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .args(common::protocol::PROTOCOL)
        .args([
            "--model",
            MODEL,
            "--allowedTools=Bash(echo:*),Write",
            "--disallowedTools=Bash(rm:*)",
        ])
        .stdin(std::fs::File::open(&input).unwrap());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#""subtype":"success""#),
        "no successful result: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let received = received.lock().unwrap();
    let names: Vec<&str> = received.spans.iter().map(|s| s.name.as_str()).collect();
    let count = |name: &str| names.iter().filter(|n| **n == name).count();
    assert_eq!(count("invoke_agent"), 1, "{names:?}");
    assert_eq!(count(&format!("chat {MODEL}")), ECHOES + 3, "{names:?}");
    assert_eq!(count("execute_tool Bash"), ECHOES + 1, "{names:?}");
    assert_eq!(count("execute_tool Write"), 1, "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_collector_that_never_answers_holds_neither_the_session_nor_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    // Connections are taken by the kernel's backlog and never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
        // Each export would wait ten minutes: only the exit deadline ends it.
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "600000".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
    ];
    let run = run_session(dir.path(), &server, &env);
    let (out, _) = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the session's exit waited for the collector");
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings = stderr.matches("did not take the last batch").count();
    assert_eq!(warnings, 1, "one warning at exit: {stderr}");
    drop(silent);
}

#[tokio::test(flavor = "multi_thread")]
async fn grpc_with_no_collector_leaves_the_session_alone() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
    ];
    let (out, session) = run_session(dir.path(), &server, &env).await;
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let rows = common::ledger_rows(&dir.path().join("home"), &session);
    assert_eq!(
        rows.iter().filter(|r| r.kind == "tool_record").count(),
        ECHOES + 2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_protocol_is_one_clear_warning_and_the_session_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:9".to_string(),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "udp".to_string()),
    ];
    let (out, _) = run_session(dir.path(), &server, &env).await;
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("telemetry is off: OTEL_EXPORTER_OTLP_PROTOCOL: must be grpc, http/protobuf or http/json, not \"udp\""),
        "{stderr}"
    );
}

/// One Claude Code hook event of `session` in `cwd`.
fn hook_event(cwd: &Path, session: &str, name: &str, extra: Value) -> Value {
    let mut event = json!({
        "hook_event_name": name,
        "session_id": session,
        "transcript_path": cwd.join("transcript.jsonl").display().to_string(),
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
    });
    for (k, v) in extra.as_object().unwrap() {
        event[k] = v.clone();
    }
    event
}

#[tokio::test(flavor = "multi_thread")]
async fn under_tascer_hook_the_spans_carry_claude_codes_session_and_tool_use_ids() {
    let (home, work) =
        common::project_with_settings(&json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let (addr, received) = receiver().await;
    let session = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    let cwd = work.path();
    let bash = |id: &str, command: &str| json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id});
    let mut ran = bash("toolu_echo", "echo hi");
    ran["tool_response"] = json!({"stdout": "hi\n", "stderr": "", "interrupted": false});
    let events = [
        hook_event(cwd, session, "SessionStart", json!({"source": "startup"})),
        hook_event(cwd, session, "PreToolUse", bash("toolu_echo", "echo hi")),
        hook_event(cwd, session, "PostToolUse", ran),
        hook_event(cwd, session, "PreToolUse", bash("toolu_rm", "rm -rf build")),
        hook_event(cwd, session, "SessionEnd", json!({"reason": "exit"})),
    ];
    for event in events {
        let mut cmd = common::tascer(home.path(), cwd);
        // Every event in its own process: each exports and flushes at exit.
        cmd.arg("hook")
            .env("TASCER_HOOK_SERVER", "off")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"));
        let out =
            tokio::task::spawn_blocking(move || common::run_with_stdin(cmd, &event.to_string()))
                .await
                .unwrap();
        assert!(
            out.status.code() == Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let received = received.lock().unwrap();
    let agent = received
        .spans
        .iter()
        .find(|s| s.name == "invoke_agent")
        .expect("SessionEnd sends the invoke_agent span");
    let tools: Vec<&Span> = received
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .collect();
    assert_eq!(tools.len(), 2);
    let hashes: BTreeMap<String, String> = common::ledger_rows(home.path(), session)
        .into_iter()
        .filter(|r| r.kind == "tool_record")
        .map(|r| {
            (
                r.payload["tool_use_id"].as_str().unwrap().to_string(),
                r.hash,
            )
        })
        .collect();
    for span in &tools {
        let a = &span.attributes;
        // Spans of different processes, one trace under one agent span.
        assert_eq!(span.trace_id, agent.trace_id);
        assert_eq!(span.parent_span_id, agent.span_id);
        assert_eq!(text(a, "session.id"), session);
        assert_eq!(text(a, "tascer.host"), "claude-code");
        let id = text(a, "gen_ai.tool.call.id");
        assert_eq!(Some(&text(a, "tascer.ledger.entry_hash")), hashes.get(&id));
        assert!(text(a, "tascer.policy.digest").starts_with("sha256:"));
        match id.as_str() {
            "toolu_echo" => assert_eq!(text(a, "tascer.tool.status"), "validated"),
            "toolu_rm" => {
                assert_eq!(text(a, "tascer.permission.decision"), "deny");
                assert_eq!(text(a, "tascer.permission.source"), "rule");
                assert_eq!(text(a, "tascer.tool.status"), "blocked");
            }
            other => panic!("unexpected tool_use_id {other}"),
        }
    }
    assert_eq!(
        counter_sum(
            &received.metrics,
            "claude_code.session.count",
            ("session.id", session)
        ),
        1.0
    );
}
