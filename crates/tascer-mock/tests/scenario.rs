//! Scenario parsing, validation and builders.

use serde_json::json;
use tascer_mock::{Fault, FaultKind, Scenario, ScenarioError, Turn};

#[test]
fn parses_the_documented_format() {
    let s = Scenario::from_json(
        r#"{
          "model": "mock-model",
          "loop_last_turn": true,
          "turns": [
            {
              "text": "I'll read the file.",
              "thinking": "let me think",
              "tool_calls": [{"id": "toolu_01", "name": "Read", "input": {"file_path": "a.txt"}}],
              "stop_reason": "end_turn",
              "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
              "latency_ms": 5,
              "faults": [
                {"kind": "rate_limit", "retry_after_s": 1},
                {"kind": "server_error", "status": 502},
                {"kind": "overloaded", "times": 3, "model": "primary-model"},
                {"kind": "truncated_stream"},
                {"kind": "malformed_delta"},
                {"kind": "close_after", "events": 6},
                {"kind": "stream_error"},
                {"kind": "hang"},
                {"kind": "stall_after", "events": 2}
              ]
            },
            {"tool_calls": [{"name": "Bash", "input": {"command": "ls"}}]}
          ]
        }"#,
    )
    .unwrap();
    assert_eq!(s.model.as_deref(), Some("mock-model"));
    assert!(s.loop_last_turn);
    let t = &s.turns[0];
    assert_eq!(t.tool_calls[0].id.as_deref(), Some("toolu_01"));
    assert_eq!(t.usage.unwrap().input_tokens, 100);
    assert_eq!(t.latency_ms, 5);
    assert_eq!(t.faults[0].kind, FaultKind::RateLimit { retry_after_s: 1 });
    assert_eq!(t.faults[1].kind, FaultKind::ServerError { status: 502 });
    assert_eq!(
        t.faults[2],
        Fault::overloaded().times(3).for_model("primary-model")
    );
    assert_eq!(t.faults[3], Fault::truncated_stream());
    assert_eq!(t.faults[4], Fault::malformed_delta());
    assert_eq!(t.faults[5], Fault::close_after(6));
    assert_eq!(t.faults[6], Fault::stream_error());
    assert_eq!(t.faults[7], Fault::hang());
    assert_eq!(t.faults[8], Fault::stall_after(2));
    assert_eq!(s.turns[1].effective_stop_reason(), "tool_use");
    assert_eq!(t.effective_stop_reason(), "end_turn");
}

#[test]
fn builders_round_trip_through_json() {
    let s = Scenario::new()
        .with_model("m")
        .turn(
            Turn::text("hi")
                .with_thinking("hmm")
                .with_tool("Read", json!({"file_path": "x"}))
                .with_fault(Fault::rate_limit(3))
                .with_fault(Fault::server_error(503).times(2))
                .with_fault(Fault::close_after(4))
                .with_fault(Fault::stall_after(1).times(2))
                .with_fault(Fault::stream_error())
                .with_fault(Fault::hang())
                .with_latency_ms(10),
        )
        .turn(Turn::tool("Bash", json!({"command": "ls"})))
        .loop_last_turn(true);
    let text = serde_json::to_string(&s).unwrap();
    assert_eq!(Scenario::from_json(&text).unwrap(), s);
}

#[test]
fn errors_name_the_problem() {
    let err = Scenario::from_json(r#"{"turns": [{"txt": "typo"}]}"#).unwrap_err();
    assert!(matches!(err, ScenarioError::Parse { .. }));
    assert!(err.to_string().contains("txt"), "{err}");

    let err = Scenario::from_json(r#"{"turns": [{"faults": [{"kind": "boom"}]}]}"#).unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");

    let err = Scenario::from_json(
        r#"{"turns": [{"faults": [{"kind": "server_error", "status": 404}]}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("5xx"), "{err}");

    let err =
        Scenario::from_json(r#"{"turns": [{"faults": [{"kind": "stream_error", "events": 2}]}]}"#)
            .unwrap_err();
    assert!(err.to_string().contains("`events`"), "{err}");

    let err = Scenario::from_json(r#"{"turns": [{"tool_calls": [{"name": ""}]}]}"#).unwrap_err();
    assert!(err.to_string().contains("name"), "{err}");

    let err = Scenario::from_file("/definitely/not/here.json").unwrap_err();
    assert!(
        err.to_string().contains("/definitely/not/here.json"),
        "{err}"
    );
}

#[test]
fn example_scenario_loads() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/hello.json");
    let s = Scenario::from_file(path).unwrap();
    assert_eq!(s.turns.len(), 2);
}
