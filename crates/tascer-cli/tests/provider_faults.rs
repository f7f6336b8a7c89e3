//! Faults of the model provider, end to end through `tascer run`: faults
//! inside a streamed 200 response (a dropped connection, a `data:` line that
//! is not JSON, an error event or chunk) are retried and leave every turn
//! stored once; a provider that hangs or stalls times out; and a run that
//! runs out of retries ends with one clear sentence on stderr in every
//! output format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{json_lines, ledger_rows, tascer, texts};
use serde_json::{Value, json};
use tascer_testkit::{Fault, MockServer, RecordedRequest, Scenario, Turn, check_tool_pairing};

/// Tool calls in the session; the model then answers with text.
const TOOL_TURNS: usize = 20;

#[derive(Debug, Clone, Copy)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// `tascer run PROMPT --output-format FORMAT [extra…]` against the mock
/// over `wire`, with fast retries.
fn run(
    wire: Wire,
    server: &MockServer,
    home: &Path,
    ws: &Path,
    format: &str,
    extra: &[&str],
) -> Command {
    let mut cmd = tascer(home, ws);
    match wire {
        Wire::Anthropic => cmd
            .env("ANTHROPIC_API_KEY", "test")
            .env("ANTHROPIC_BASE_URL", server.url()),
        Wire::OpenAi => cmd.env("OPENAI_BASE_URL", server.openai_base_url()),
    };
    cmd.env("TASCER_MAX_RETRIES", "2")
        .args([
            "run",
            "--output-format",
            format,
            "--permission-mode",
            "bypassPermissions",
        ])
        .args(extra);
    cmd
}

fn id(turn: usize) -> String {
    format!("call_{turn:02}")
}

/// A 20-tool session (each turn reads `notes.txt`), then a closing text
/// turn, then one more text turn for `--resume`; `fault` hits the first
/// attempt of each turn in `at`.
fn session_scenario(file: &Path, fault: &Fault, at: &[usize]) -> Scenario {
    let mut scenario = Scenario::new();
    for turn in 0..=TOOL_TURNS + 1 {
        let mut t = match turn {
            t if t < TOOL_TURNS => Turn::text(format!("Reading, step {t}.")).with_tool_id(
                id(t),
                "Read",
                json!({"file_path": file.display().to_string()}),
            ),
            TOOL_TURNS => Turn::text("All twenty reads are done."),
            _ => Turn::text("Resumed answer."),
        };
        if at.contains(&turn) {
            t = t.with_fault(fault.clone());
        }
        scenario = scenario.turn(t);
    }
    scenario
}

fn of_type<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["type"] == kind).collect()
}

/// How often `"ID"` occurs in a request's body: a tool call id appears
/// twice per exchange (the call and its result) on both wires.
fn occurrences(request: &RecordedRequest, needle: &str) -> usize {
    request
        .body
        .to_string()
        .matches(&format!("\"{needle}\""))
        .count()
}

/// Checks the model's view of the history: every exchange once, pairs
/// intact, the closing text at most once.
fn check_history(request: &RecordedRequest, what: &str) {
    check_tool_pairing(&request.body).unwrap_or_else(|e| panic!("{what}: {e}"));
    for turn in 0..TOOL_TURNS {
        assert_eq!(occurrences(request, &id(turn)), 2, "{what}: {}", id(turn));
        let step = format!("Reading, step {turn}.");
        assert_eq!(
            request.body.to_string().matches(&step).count(),
            1,
            "{what}: {step}"
        );
    }
}

/// One session with `fault` at the first, a middle and the last turn.
fn fault_mid_stream(wire: Wire, fault: Fault) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let file = ws.path().join("notes.txt");
    std::fs::write(&file, "twenty reads of one note\n").unwrap();
    let at = [0, TOOL_TURNS / 2, TOOL_TURNS];
    let server = MockServer::start_blocking(session_scenario(&file, &fault, &at)).unwrap();
    let what = format!("{wire:?} {:?}", fault.kind);

    let out = run(
        wire,
        &server,
        home.path(),
        ws.path(),
        "stream-json",
        &["--include-partial-messages", "read the notes twenty times"],
    )
    .output()
    .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{what}: {stderr}\n{stdout}");
    assert!(!stderr.contains("error"), "{what}: {stderr}");
    let frames = json_lines(&out.stdout);
    let result = of_type(&frames, "result")[0];
    assert_eq!(result["is_error"], false, "{what}: {result}");
    assert_eq!(result["num_turns"], TOOL_TURNS + 1, "{what}");
    assert_eq!(result["result"], "All twenty reads are done.");
    let session = result["session_id"].as_str().unwrap().to_string();

    // Three failed attempts, each announced as a retry; the answers the
    // session acted on are the complete ones, each once.
    assert_eq!(
        of_type(&frames, "system")
            .iter()
            .filter(|f| f["subtype"] == "api_retry")
            .count(),
        3,
        "{what}"
    );
    let assistants = of_type(&frames, "assistant");
    assert_eq!(assistants.len(), TOOL_TURNS + 1, "{what}");
    for (turn, frame) in assistants.iter().take(TOOL_TURNS).enumerate() {
        assert_eq!(frame["message"]["content"][1]["id"], id(turn), "{what}");
    }
    // The failed attempts' partial events went out as they streamed; every
    // attempt (failed or not) starts with its own message_start.
    let starts = of_type(&frames, "stream_event")
        .iter()
        .filter(|f| f["event"]["type"] == "message_start")
        .count();
    assert_eq!(starts, TOOL_TURNS + 1 + at.len(), "{what}");

    // The mock saw each turn once more for each fault, with the same body:
    // nothing of a failed attempt reached the history.
    let requests = server.requests();
    assert_eq!(requests.len(), TOOL_TURNS + 1 + at.len(), "{what}");
    let mut retried = 0;
    for pair in requests.windows(2) {
        if pair[0].body == pair[1].body {
            retried += 1;
        }
    }
    assert_eq!(retried, at.len(), "{what}: a retry repeats its request");
    check_history(requests.last().unwrap(), &what);

    // Stored history: each turn once, no stream events.
    let show = tascer(home.path(), ws.path())
        .args(["sessions", "show", &session, "--json"])
        .output()
        .unwrap();
    assert!(show.status.success(), "{what}: {:?}", texts(&show));
    let stored = json_lines(&show.stdout);
    assert_eq!(
        of_type(&stored, "assistant").len(),
        TOOL_TURNS + 1,
        "{what}"
    );
    assert!(of_type(&stored, "stream_event").is_empty(), "{what}");
    let results: Vec<&Value> = of_type(&stored, "user")
        .into_iter()
        .filter(|f| f["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), TOOL_TURNS, "{what}");

    // The ledger: one model response per turn, one tool record per call.
    let rows = ledger_rows(home.path(), &session);
    let count = |kind: &str| rows.iter().filter(|r| r.kind == kind).count();
    assert_eq!(count("model_response"), TOOL_TURNS + 1, "{what}");

    let verify = tascer(home.path(), ws.path())
        .args(["verify", &session])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{what}: {:?}", texts(&verify));

    // Resumed, the model sees the stored history: every turn once.
    server.clear_requests();
    let out = run(
        wire,
        &server,
        home.path(),
        ws.path(),
        "json",
        &["--resume", &session, "anything else?"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{what}: {:?}", texts(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{what}");
    check_history(&requests[0], &format!("{what} resumed"));
    let closing = requests[0]
        .body
        .to_string()
        .matches("All twenty reads are done.")
        .count();
    assert_eq!(closing, 1, "{what} resumed");
}

#[test]
fn connection_dropped_mid_stream_is_retried_anthropic() {
    fault_mid_stream(Wire::Anthropic, Fault::close_after(4));
}

#[test]
fn connection_dropped_mid_stream_is_retried_openai() {
    fault_mid_stream(Wire::OpenAi, Fault::close_after(4));
}

#[test]
fn invalid_json_data_line_is_retried_anthropic() {
    fault_mid_stream(Wire::Anthropic, Fault::malformed_delta());
}

#[test]
fn invalid_json_data_line_is_retried_openai() {
    fault_mid_stream(Wire::OpenAi, Fault::malformed_delta());
}

#[test]
fn error_event_in_stream_is_retried_anthropic() {
    fault_mid_stream(Wire::Anthropic, Fault::stream_error());
}

#[test]
fn error_chunk_in_stream_is_retried_openai() {
    fault_mid_stream(Wire::OpenAi, Fault::stream_error());
}

/// The last non-empty line of a run's stderr.
fn last_line(out: &std::process::Output) -> String {
    let (_, stderr) = texts(out);
    stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn request_timeout_is_in_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let out = tascer(dir.path(), dir.path())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let (stdout, _) = texts(&out);
    assert!(stdout.contains("--request-timeout <SECONDS>"), "{stdout}");
    assert!(stdout.contains("TASCER_REQUEST_TIMEOUT"), "{stdout}");

    let out = tascer(dir.path(), dir.path())
        .args(["run", "--request-timeout", "0", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(texts(&out).1.contains("out of range"), "{:?}", texts(&out));
}

/// A server that accepts connections and never answers: with
/// `--request-timeout 0.5` and one retry, the run ends after about a
/// second with the timeout as its last stderr line.
#[test]
fn a_server_that_never_answers_times_out() {
    let home = tempfile::tempdir().unwrap();
    // Bound and listening, never accepting: the kernel completes the
    // handshake and takes the request, nobody answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let started = Instant::now();
    let out = tascer(home.path(), home.path())
        .env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", &url)
        .env("TASCER_MAX_RETRIES", "1")
        .args(["run", "--request-timeout", "0.5", "hello"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{:?}", texts(&out));
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    let last = last_line(&out);
    assert!(
        last.starts_with(
            "error: gave up after 2 attempts: anthropic request timed out: no response for 0.5s; "
        ),
        "{last}"
    );
    assert!(last.contains("--request-timeout"), "{last}");
    drop(listener);
}

/// Headers and a few events, then silence, over both wires, timeout from
/// the environment: the stall is retried and the retry's answer is used;
/// when every attempt stalls the run stops with the timeout.
#[test]
fn a_stream_that_stalls_is_retried_then_times_out() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let home = tempfile::tempdir().unwrap();
        let scenario =
            Scenario::new().turn(Turn::text("after the stall").with_fault(Fault::stall_after(3)));
        let server = MockServer::start_blocking(scenario).unwrap();
        let out = run(wire, &server, home.path(), home.path(), "json", &["hello"])
            .env("TASCER_REQUEST_TIMEOUT", "0.5")
            .output()
            .unwrap();
        assert!(out.status.success(), "{wire:?}: {:?}", texts(&out));
        let result = &json_lines(&out.stdout)[0];
        assert_eq!(result["result"], "after the stall", "{wire:?}");
        assert_eq!(server.requests().len(), 2, "{wire:?}");

        let scenario =
            Scenario::new().turn(Turn::text("never").with_fault(Fault::stall_after(3).times(99)));
        let server = MockServer::start_blocking(scenario).unwrap();
        let out = run(wire, &server, home.path(), home.path(), "json", &["hello"])
            .env("TASCER_REQUEST_TIMEOUT", "0.5")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{wire:?}: {:?}", texts(&out));
        let last = last_line(&out);
        assert!(
            last.contains("request timed out: no stream event after 3 events for 0.5s"),
            "{wire:?}: {last}"
        );
        assert_eq!(server.requests().len(), 3, "{wire:?}: 1 + 2 retries");
    }
}

/// Retries run out: in every output format the run exits 1 and its last
/// stderr line is the one sentence naming the provider, the status, what
/// was wrong and what to try; json formats keep the error in the result.
#[test]
fn persistent_failure_ends_with_one_sentence_on_stderr_in_every_format() {
    let expected = "error: gave up after 3 attempts: anthropic API error (HTTP 529, \
                    overloaded_error): mock: overloaded; the provider is failing or \
                    overloaded: try again later, or name a --fallback-model";
    for format in ["text", "json", "stream-json"] {
        let home = tempfile::tempdir().unwrap();
        let scenario =
            Scenario::new().turn(Turn::text("never").with_fault(Fault::overloaded().times(99)));
        let server = MockServer::start_blocking(scenario).unwrap();
        let out = run(
            Wire::Anthropic,
            &server,
            home.path(),
            home.path(),
            format,
            &["hello"],
        )
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {:?}", texts(&out));
        assert_eq!(last_line(&out), expected, "{format}");
        let (stdout, stderr) = texts(&out);
        assert_eq!(stderr.matches(expected).count(), 1, "{format}: {stderr}");
        if format != "text" {
            let frames = json_lines(&out.stdout);
            let result = frames.last().unwrap();
            assert_eq!(result["type"], "result", "{format}");
            assert_eq!(result["is_error"], true);
            assert_eq!(result["api_error_status"], 529);
            assert!(
                result["result"]
                    .as_str()
                    .unwrap()
                    .starts_with("API Error: anthropic API error (HTTP 529"),
                "{format}: {stdout}"
            );
        }
    }
}
