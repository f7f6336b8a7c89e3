//! The agent loop over loopback HTTP against the scripted mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer::{ContentBlock, Message, ResultSubtype, UserContent};
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::test(flavor = "multi_thread")]
async fn text_turn_yields_init_assistant_result_and_describes_the_environment() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("Hello there.")))
        .await
        .unwrap();
    let messages = collect("hi", anthropic_options(&server, &env)).await;

    match &messages[0] {
        Message::System(s) => {
            assert_eq!(s.subtype, "init");
            assert_eq!(s.data["cwd"], json!(env.ws().display().to_string()));
            assert!(
                s.data["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t == "Bash")
            );
        }
        other => panic!("first message should be system/init, got {other:?}"),
    }
    let result = result_of(&messages);
    assert_eq!(result.subtype, ResultSubtype::Success);
    assert!(!result.is_error);
    assert_eq!(result.result.as_deref(), Some("Hello there."));
    assert_eq!(result.num_turns, 1);
    assert!(messages.iter().any(|m| matches!(m, Message::Assistant(_))));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let system = requests[0].body["system"].as_str().unwrap().to_string();
    assert!(
        system.contains(&format!("Working directory: {}", env.ws().display())),
        "system prompt: {system}"
    );
    assert!(system.contains("Is directory a git repo: No"));
    assert_eq!(
        requests[0].headers.get("x-api-key").map(String::as_str),
        Some("test-key")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_run_against_real_files_and_results_reach_the_model() {
    let env = Env::new();
    std::fs::write(env.ws().join("a.txt"), "alpha\nbeta\n").unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": "a.txt"})))
        .turn(Turn::tool(
            "Write",
            json!({"file_path": "out/b.txt", "content": "written"}),
        ))
        .turn(Turn::tool(
            "Bash",
            json!({"command": "cat out/b.txt; echo; pwd"}),
        ))
        .turn(Turn::text("All done."));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("do it", anthropic_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.num_turns, 4);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("out/b.txt")).unwrap(),
        "written"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let read_result = last_tool_result_text(&requests[1].body);
    assert!(read_result.contains("alpha"), "{read_result}");
    let bash_result = last_tool_result_text(&requests[3].body);
    assert!(bash_result.contains("written"), "{bash_result}");
    assert!(
        bash_result.contains(&env.ws().display().to_string()),
        "{bash_result}"
    );
    assert_pairing(&server);
}

/// The text of the tool_result blocks in the last message of a request body.
fn last_tool_result_text(body: &serde_json::Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    let mut text = String::new();
    for block in last["content"].as_array().unwrap() {
        if block["type"] == "tool_result" {
            match &block["content"] {
                serde_json::Value::String(s) => text.push_str(s),
                other => text.push_str(&other.to_string()),
            }
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_tool_calls_run_concurrently_and_keep_their_order() {
    let env = Env::new();
    // Each call announces itself, then waits for the other one's marker. Run
    // one after the other, the first would give up waiting and say "alone".
    let rendezvous = |me: &str, other: &str| {
        format!(
            "touch {me}.start; for i in $(seq 100); do [ -f {other}.start ] && break; sleep 0.05; done; \
             if [ -f {other}.start ]; then echo {me}-together; else echo {me}-alone; fi"
        )
    };
    let scenario = Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Bash", json!({"command": rendezvous("a", "b")}))
                .with_tool("Bash", json!({"command": rendezvous("b", "a")})),
        )
        .turn(Turn::text("ok"));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("go", anthropic_options(&server, &env)).await;
    assert!(!result_of(&messages).is_error);

    let tool_uses: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.message.content.clone()),
            _ => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    let results: Vec<(String, String)> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => match &u.message.content {
                UserContent::Blocks(b) => Some(b.clone()),
                UserContent::Text(_) => None,
            },
            _ => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id, content.to_text())),
            _ => None,
        })
        .collect();
    assert_eq!(tool_uses.len(), 2);
    assert_eq!(
        results.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        tool_uses
    );
    assert!(results[0].1.contains("a-together"), "{:?}", results);
    assert!(results[1].1.contains("b-together"), "{:?}", results);
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_wire_format_runs_tools_too() {
    let env = Env::new();
    std::fs::write(env.ws().join("n.txt"), "numbers\n").unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": "n.txt"})).with_text("Reading."))
        .turn(Turn::text("It says numbers."));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("read n.txt", openai_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.result.as_deref(), Some("It says numbers."));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].path.ends_with("/chat/completions"));
    let second = requests[1].body.to_string();
    assert!(second.contains("numbers"), "{second}");
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tool_and_invalid_input_become_tool_errors_not_crashes() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(
            Turn::new()
                .with_tool("NoSuchTool", json!({}))
                .with_tool("Read", json!({"wrong": 1})),
        )
        .turn(Turn::text("recovered"));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("x", anthropic_options(&server, &env)).await;
    assert!(!result_of(&messages).is_error);
    let body = server.requests()[1].body.to_string();
    assert!(
        body.contains("No such tool available: NoSuchTool"),
        "{body}"
    );
    assert!(body.contains("\"is_error\":true"), "{body}");
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn partial_messages_are_streamed_when_asked() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("streamed words here")))
        .await
        .unwrap();
    let messages = collect(
        "x",
        anthropic_options(&server, &env).include_partial_messages(true),
    )
    .await;
    let deltas: String = messages
        .iter()
        .filter_map(|m| match m {
            Message::StreamEvent(e) => e.event["delta"]["text"].as_str().map(String::from),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "streamed words here");
}
