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

/// A cost budget over a model whose cost would be unknown (no price, and
/// a provider that reports none) is refused before anything is sent: it
/// could never trigger.
#[tokio::test(flavor = "multi_thread")]
async fn a_budget_over_an_unknown_cost_is_refused_at_start() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("hi")))
        .await
        .unwrap();
    let messages = collect("spend", openai_options(&server, &env).max_budget_usd(1.0)).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    let text = result.result.clone().unwrap_or_default();
    assert!(
        text.contains("cannot be enforced") && text.contains("mock-model"),
        "{text}"
    );
    assert!(server.requests().is_empty(), "nothing is sent");
    // With a price it runs.
    let mut options = openai_options(&server, &env).max_budget_usd(1.0);
    if let Some(provider) = options.provider.as_mut() {
        provider
            .prices
            .set("mock-model", Price::new(1.0, 1.0, 1.0, 1.0));
    }
    let messages = collect("spend", options).await;
    assert!(!result_of(&messages).is_error);
}

/// An unknown cost is reported as unknown (the model named in
/// `unpriced_models`), never as a silent zero; a cost the provider reports
/// (OpenRouter's usage accounting) is used as it is, and makes the budget
/// enforceable.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_costs_are_named_and_reported_costs_are_used() {
    let env = Env::new();
    let unpriced = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "true"})))
        .turn(Turn::text("done"));
    let server = MockServer::start(unpriced).await.unwrap();
    let messages = collect("go", openai_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(!result.is_error);
    assert_eq!(result.unpriced_models, ["mock-model"]);
    assert_eq!(result.total_cost_usd, 0.0);
    let frame = serde_json::to_value(result).unwrap();
    assert_eq!(frame["unpriced_models"], json!(["mock-model"]));

    let reported = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "true"})).with_cost_usd(0.25))
        .turn(Turn::text("done").with_cost_usd(0.5));
    let server = MockServer::start(reported).await.unwrap();
    let mut options = openai_options(&server, &env)
        .model("sonnet")
        .max_budget_usd(10.0);
    if let Some(provider) = options.provider.as_mut() {
        provider.openrouter = true;
    }
    let messages = collect("go", options).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{:?}", result.result);
    assert!(result.unpriced_models.is_empty());
    assert!(
        (result.total_cost_usd - 0.75).abs() < 1e-9,
        "{}",
        result.total_cost_usd
    );
    // The alias went out as OpenRouter's id.
    let last = server.requests().pop().unwrap();
    assert_eq!(last.body["model"], "anthropic/claude-sonnet-4.5");
    assert_eq!(last.body["usage"], json!({"include": true}));
}

/// `sonnet` names the provider's current Sonnet: the init frame and every
/// request carry the resolved id.
#[tokio::test(flavor = "multi_thread")]
async fn model_aliases_resolve_for_the_provider() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("hi")))
        .await
        .unwrap();
    let messages = collect("hi", anthropic_options(&server, &env).model("haiku")).await;
    let init = messages
        .iter()
        .find_map(|m| match m {
            Message::System(s) if s.subtype == "init" => Some(s.data["model"].clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(init, "claude-haiku-4-5");
    assert_eq!(server.requests()[0].body["model"], "claude-haiku-4-5");
    let result = result_of(&messages);
    assert!(result.unpriced_models.is_empty());
    assert!(result.total_cost_usd > 0.0);
}
