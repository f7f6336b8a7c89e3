//! Structured output: the final answer is validated against a JSON Schema,
//! an invalid one is sent back to the model a bounded number of times, and
//! the result carries `structured_output` or says why it has none.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use tascer::{OutputFormat, ResultSubtype};
use tascer_testkit::{MockServer, Scenario, Turn};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "files": {"type": "integer", "minimum": 0},
            "names": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["files", "names"],
        "additionalProperties": false
    })
}

/// Text of the last user message of a recorded request.
fn last_user_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    text_of(&last["content"])
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_answer_is_sent_back_and_the_fixed_one_is_the_structured_output() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text(r#"{"files": "two", "names": ["a.txt"]}"#))
        .turn(Turn::text(
            "```json\n{\"files\": 2, \"names\": [\"a.txt\", \"b.txt\"]}\n```",
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env).json_schema(schema());
    let messages = collect("count the files", options).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.subtype, ResultSubtype::Success);
    assert_eq!(
        result.structured_output,
        Some(json!({"files": 2, "names": ["a.txt", "b.txt"]}))
    );
    assert_eq!(result.num_turns, 2);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let system = requests[0].body["system"].to_string();
    assert!(system.contains("additionalProperties"), "{system}");
    let fix = last_user_text(&requests[1].body);
    assert!(fix.contains("not valid structured output"), "{fix}");
    assert!(fix.contains("/files"), "the error says where: {fix}");

    // The wire form carries the field.
    let wire = serde_json::to_value(result).unwrap();
    assert_eq!(wire["structured_output"]["files"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_never_becomes_valid_ends_with_error_max_structured_output_retries() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("two files"))
        .turn(Turn::text(r#"{"files": 2}"#))
        .turn(Turn::text(r#"{"files": 2}"#))
        .turn(Turn::text(r#"{"files": 2}"#))
        .turn(Turn::text(r#"{"files": 2, "names": []}"#));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env).json_schema(schema());
    let messages = collect("count the files", options).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    assert_eq!(
        result.subtype,
        ResultSubtype::ErrorMaxStructuredOutputRetries
    );
    assert_eq!(result.terminal_reason, "structured_output_retry_exhausted");
    assert_eq!(result.structured_output, None);
    // The first answer plus three fix requests (the default), no more.
    assert_eq!(server.requests().len(), 4);
    let error = &result.errors[0];
    assert!(error.contains("after 3 fix requests"), "{error}");
    assert!(error.contains("names"), "says what is missing: {error}");
    let wire = serde_json::to_value(result).unwrap();
    assert_eq!(wire["subtype"], "error_max_structured_output_retries");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_number_of_fix_requests_is_settable() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("no"))
        .turn(Turn::text("still no"))
        .turn(Turn::text(r#"{"files": 0, "names": []}"#));
    let server = MockServer::start(scenario).await.unwrap();
    let mut options = anthropic_options(&server, &env);
    options.output_format = Some(OutputFormat::JsonSchema { schema: schema() });
    options.max_structured_output_retries = Some(1);
    let messages = collect("count", options).await;
    let result = result_of(&messages);
    assert_eq!(
        result.subtype,
        ResultSubtype::ErrorMaxStructuredOutputRetries
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_schema_stops_the_session_before_any_model_call() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("{}")))
        .await
        .unwrap();
    let options = anthropic_options(&server, &env).json_schema(json!({"type": 12}));
    let messages = collect("count", options).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    assert!(
        result.errors[0].contains("JSON Schema is invalid"),
        "{:?}",
        result.errors
    );
    assert!(server.requests().is_empty());
}
