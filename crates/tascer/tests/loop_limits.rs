//! Limits, faults and interrupts of the loop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use serde_json::json;
use tascer::{Client, Message, Price, ResultSubtype};
use tascer_testkit::{Fault, MockServer, Scenario, Turn, Usage};

#[tokio::test(flavor = "multi_thread")]
async fn max_turns_stops_the_loop_with_error_max_turns() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "echo again"})))
        .loop_last_turn(true);
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("loop", anthropic_options(&server, &env).max_turns(3)).await;
    let result = result_of(&messages);
    assert_eq!(result.subtype, ResultSubtype::ErrorMaxTurns);
    assert!(result.is_error);
    assert_eq!(result.num_turns, 3);
    assert_eq!(server.requests().len(), 3);
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_budget_stops_once_the_cost_reaches_it() {
    let env = Env::new();
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
    };
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "true"})).with_usage(usage))
        .loop_last_turn(true);
    let server = MockServer::start(scenario).await.unwrap();
    let mut options = anthropic_options(&server, &env).max_budget_usd(2.5);
    if let Some(provider) = options.provider.as_mut() {
        provider.prices.set(
            "mock-model",
            Price {
                input_per_mtok: 1.0,
                output_per_mtok: 0.0,
                cache_write_per_mtok: 0.0,
                cache_read_per_mtok: 0.0,
            },
        );
    }
    let messages = collect("spend", options).await;
    let result = result_of(&messages);
    assert_eq!(result.subtype, ResultSubtype::ErrorMaxBudgetUsd);
    assert_eq!(
        result.num_turns, 3,
        "$1 per call, stops at the first check ≥ $2.5"
    );
    assert!(
        (result.total_cost_usd - 3.0).abs() < 1e-9,
        "{}",
        result.total_cost_usd
    );
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupt_cancels_running_tools_and_says_so() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool(
            "Bash",
            json!({"command": "sleep 30; echo finished"}),
        ))
        .turn(Turn::text("never reached"));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env))
        .await
        .unwrap();
    client.query("run the slow thing").await.unwrap();
    let interrupter = client.interrupter();
    let mut stream = client.receive_response();
    let mut messages = Vec::new();
    let read = async {
        while let Some(message) = stream.next().await {
            if matches!(message, Message::Assistant(_)) {
                // The tool starts right after the assistant message.
                let interrupter = interrupter.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    interrupter.interrupt();
                });
            }
            messages.push(message);
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("interrupt did not end the turn");
    let result = result_of(&messages);
    assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
    assert!(result.is_error);
    assert_eq!(result.terminal_reason, "aborted_tools");
    assert_eq!(result.result.as_deref(), Some("Interrupted by user"));
    // The interrupted call still got exactly one result.
    let results = messages
        .iter()
        .filter(|m| matches!(m, Message::User(u) if u.tool_use_result.is_some()))
        .count();
    assert_eq!(results, 1);
    assert_eq!(
        server.requests().len(),
        1,
        "no model call after the interrupt"
    );
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_prompt_in_the_same_client_carries_the_history() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("first answer"))
        .turn(Turn::text("second answer"));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env))
        .await
        .unwrap();
    client.query("one").await.unwrap();
    let first: Vec<Message> = client.receive_response().collect().await;
    assert_eq!(result_of(&first).result.as_deref(), Some("first answer"));
    client.query("two").await.unwrap();
    let second: Vec<Message> = client.receive_response().collect().await;
    assert_eq!(result_of(&second).result.as_deref(), Some("second answer"));
    let body = &server.requests()[1].body;
    let texts = body["messages"].to_string();
    assert!(texts.contains("one") && texts.contains("first answer") && texts.contains("two"));
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_truncated_on_every_attempt_ends_with_a_clear_api_error() {
    let env = Env::new();
    let scenario =
        Scenario::new().turn(Turn::text("cut").with_fault(Fault::truncated_stream().times(10)));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("x", anthropic_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    let text = result.result.clone().unwrap_or_default();
    assert!(text.starts_with("API Error:"), "{text}");
    assert!(text.contains("anthropic"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_deltas_over_openai_end_with_a_clear_api_error() {
    let env = Env::new();
    let scenario =
        Scenario::new().turn(Turn::text("bad").with_fault(Fault::malformed_delta().times(10)));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("x", openai_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    let text = result.result.clone().unwrap_or_default();
    assert!(text.contains("openai"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_is_retried_and_reported_as_api_retry() {
    let env = Env::new();
    let scenario = Scenario::new().turn(Turn::text("after retry").with_fault(Fault::rate_limit(1)));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("x", anthropic_options(&server, &env)).await;
    assert_eq!(result_of(&messages).result.as_deref(), Some("after retry"));
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, Message::System(s) if s.subtype == "api_retry"))
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn overload_switches_to_the_fallback_model() {
    let env = Env::new();
    let scenario = Scenario::new().turn(
        Turn::text("from fallback")
            .with_fault(Fault::overloaded().times(10).for_model("mock-model")),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect(
        "x",
        anthropic_options(&server, &env).fallback_model("backup-model"),
    )
    .await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    let last = server.requests().last().unwrap().body["model"].clone();
    assert_eq!(last, "backup-model");
    assert!(result.model_usage.contains_key("backup-model"));
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupt_while_the_model_is_answering_aborts_the_stream() {
    let env = Env::new();
    let scenario = Scenario::new().turn(Turn::text("slow answer").with_latency_ms(20_000));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env))
        .await
        .unwrap();
    client.query("wait for it").await.unwrap();
    let interrupter = client.interrupter();
    let mut stream = client.receive_response();
    let read = async {
        let mut messages = Vec::new();
        while let Some(message) = stream.next().await {
            if matches!(&message, Message::User(_)) {
                let interrupter = interrupter.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    interrupter.interrupt();
                });
            }
            messages.push(message);
        }
        messages
    };
    let messages = tokio::time::timeout(Duration::from_secs(15), read)
        .await
        .expect("interrupt did not end the turn");
    let result = result_of(&messages);
    assert_eq!(result.subtype, ResultSubtype::ErrorDuringExecution);
    assert_eq!(result.terminal_reason, "aborted_streaming");
    assert!(!messages.iter().any(|m| matches!(m, Message::Assistant(_))));
    client.disconnect().await;
}
