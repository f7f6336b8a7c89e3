//! MCP prompts, resource templates and resource subscriptions in a
//! `tascer run` session, against `tascer mcp serve --conformance` (stdio)
//! and the scripted mock model: what the model is sent is asserted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

/// A finished `tascer run` session: its stream-json frames.
struct Run {
    frames: Vec<Value>,
    stderr: String,
}

impl Run {
    fn init(&self) -> &Value {
        self.frames.iter().find(|f| f["subtype"] == "init").unwrap()
    }

    fn result(&self) -> &Value {
        self.frames.iter().find(|f| f["type"] == "result").unwrap()
    }
}

/// Runs `prompt` in a session whose MCP server `conf` is the conformance
/// fixture server.
async fn run(server: &MockServer, prompt: &str) -> Run {
    let config = json!({"mcpServers": {"conf": {
        "command": env!("CARGO_BIN_EXE_tascer"), "args": ["mcp", "serve", "--conformance"]
    }}})
    .to_string();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = common::run_cmd(
        home.path(),
        ws.path(),
        &server.url(),
        prompt,
        &["--verbose", "--mcp-config", &config, "--"],
    );
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    Run {
        frames: common::json_lines(&out.stdout),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The whole request body the model got, as text.
fn sent(server: &MockServer, index: usize) -> String {
    server.requests()[index].body.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_prompt_runs_as_a_slash_command_with_its_arguments() {
    let server = MockServer::start(Scenario::new().turn(Turn::text("ok")).loop_last_turn(true))
        .await
        .unwrap();
    let run1 = run(
        &server,
        r#"/mcp__conf__test_prompt_with_arguments "first value" second"#,
    )
    .await;
    assert_eq!(run1.result()["is_error"], false, "{}", run1.stderr);
    let commands = run1.init()["slash_commands"].as_array().unwrap().clone();
    for name in [
        "mcp__conf__test_prompt_with_arguments",
        "mcp__conf__test_simple_prompt",
    ] {
        assert!(commands.contains(&json!(name)), "{commands:?}");
    }
    let body = sent(&server, 0);
    assert!(
        body.contains("Prompt with arguments: arg1='first value', arg2='second'"),
        "{body}"
    );

    // An embedded resource's text comes with its URI, an image is named.
    server.clear_requests();
    let run2 = run(
        &server,
        "/mcp__conf__test_prompt_with_embedded_resource test://doc",
    )
    .await;
    assert_eq!(run2.result()["is_error"], false, "{}", run2.stderr);
    let body = sent(&server, 0);
    assert!(
        body.contains(
            "[resource: test://doc]\\nEmbedded resource content for testing.\\n\\n\
             Please process the embedded resource above."
        ),
        "{body}"
    );
    server.clear_requests();
    run(&server, "/mcp__conf__test_prompt_with_image").await;
    let body = sent(&server, 0);
    assert!(
        body.contains("[image: image/png]\\n\\nPlease analyze the image above."),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_argument_or_unknown_prompt_fails_the_turn_without_a_model_call() {
    let server = MockServer::start(Scenario::new().turn(Turn::text("ok")))
        .await
        .unwrap();
    let missing = run(&server, "/mcp__conf__test_prompt_with_arguments only").await;
    let result = missing.result();
    assert_eq!(result["is_error"], true);
    let error = result["result"].as_str().unwrap();
    assert!(
        error.contains("missing required argument 'arg2'") && error.contains("arg1, arg2"),
        "{error}"
    );

    let unknown = run(&server, "/mcp__conf__no_such_prompt").await;
    let error = unknown.result()["result"].as_str().unwrap().to_owned();
    assert!(
        error.contains("unknown MCP prompt /mcp__conf__no_such_prompt")
            && error.contains("/mcp__conf__test_simple_prompt (none)")
            && error.contains("/mcp__conf__test_prompt_with_arguments (arg1, arg2)"),
        "{error}"
    );
    assert!(server.requests().is_empty(), "the model is not called");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_sees_resource_templates_and_reads_a_templated_uri() {
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("ListMcpResourcesTool", json!({})))
            .turn(Turn::tool(
                "ReadMcpResourceTool",
                json!({"server": "conf", "uri": "test://template/42/data"}),
            ))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let done = run(&server, "look at the resources").await;
    assert_eq!(done.result()["is_error"], false, "{}", done.stderr);
    let listed = sent(&server, 1);
    assert!(
        listed.contains(r#"\"uriTemplate\": \"test://template/{id}/data\""#),
        "{listed}"
    );
    assert!(listed.contains(r#"\"server\": \"conf\""#), "{listed}");
    assert!(listed.contains("test://static-text"), "{listed}");
    let read = sent(&server, 2);
    assert!(read.contains("Data for ID: 42"), "{read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_subscribed_resource_is_reported_to_the_model_once() {
    let reminder = "The MCP resource test://watched-resource of server conf changed since \
                    it was read; read it again if you need the current content.";
    let server = MockServer::start(
        Scenario::new()
            // Not subscribed yet: the server has no one to notify.
            .turn(Turn::tool(
                "mcp__conf__test_update_watched_resource",
                json!({}),
            ))
            .turn(Turn::tool(
                "ReadMcpResourceTool",
                json!({"server": "conf", "uri": "test://watched-resource"}),
            ))
            .turn(Turn::tool(
                "mcp__conf__test_update_watched_resource",
                json!({}),
            ))
            .turn(Turn::tool("ListMcpResourcesTool", json!({})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let done = run(&server, "watch the resource").await;
    assert_eq!(done.result()["is_error"], false, "{}", done.stderr);
    let count = |i: usize| sent(&server, i).matches(reminder).count();
    let first = sent(&server, 1);
    assert!(
        first.contains("No subscription to the watched resource"),
        "{first}"
    );
    assert_eq!(count(1), 0);
    let read = sent(&server, 2);
    assert!(read.contains("Watched resource content"), "{read}");
    assert_eq!(count(2), 0, "reading it changes nothing");
    let notified = sent(&server, 3);
    assert!(
        notified.contains("Subscribers of the watched resource notified"),
        "{notified}"
    );
    assert_eq!(count(3), 1, "{notified}");
    assert!(
        notified.contains(&format!(
            "<system-reminder>\\n{reminder}\\n</system-reminder>"
        )),
        "{notified}"
    );
    // Told once: the next request carries the same history, no new one.
    assert_eq!(count(4), 1);
}
