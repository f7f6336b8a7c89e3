//! MCP servers in the loop: their tools reach the model as
//! `mcp__<server>__<tool>`, go through permissions like built-in tools,
//! tool-list changes are picked up, a crashed server gives a tool error and
//! is restarted, and a server that never starts is reported in
//! `system/init`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::*;
use serde_json::json;
use tascer::guard::permissions::PermissionMode;
use tascer::mcp::{McpServerConfig, SdkServer};
use tascer::{Message, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

fn mini_server() -> Option<McpServerConfig> {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        tascer_testkit::skip("the python mini MCP server", "python3 not found");
        return None;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tascer-mcp/tests/fixtures/mini_server.py");
    Some(McpServerConfig::Stdio {
        command: "python3".into(),
        args: vec![script.display().to_string()],
        env: BTreeMap::new(),
        permissions: Default::default(),
    })
}

fn init_data(messages: &[Message]) -> serde_json::Value {
    messages
        .iter()
        .find_map(|m| match m {
            Message::System(s) if s.subtype == "init" => Some(json!(s.data)),
            _ => None,
        })
        .unwrap()
}

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn in_process_tools_are_governed_like_built_in_ones() {
    let env = Env::new();
    let calc = SdkServer::new("calc").tool(
        "add",
        "Adds two numbers",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
        |input: serde_json::Value| async move {
            let sum = input["a"].as_f64().unwrap_or(0.0) + input["b"].as_f64().unwrap_or(0.0);
            ToolOutput::text(format!("{sum}"))
        },
    );
    let scenario = || {
        Scenario::new()
            .turn(Turn::new().with_tool("mcp__calc__add", json!({"a": 2, "b": 3})))
            .turn(Turn::text("done"))
    };

    // Allowed by a rule: it runs.
    let server = MockServer::start(scenario()).await.unwrap();
    let options = anthropic_options(&server, &env)
        .permission_mode(PermissionMode::Default)
        .allowed_tools(["mcp__calc__add"])
        .sdk_server(calc.clone());
    let messages = collect("add", options).await;
    let results = tool_results(&messages);
    assert_eq!(results[0].1, "5", "{results:?}");
    assert!(tool_names(&server.requests()[0].body).contains(&"mcp__calc__add".to_string()));
    assert_eq!(init_data(&messages)["mcp_servers"][0]["name"], "calc");
    assert_eq!(
        init_data(&messages)["mcp_servers"][0]["status"],
        "connected"
    );

    // No rule in default mode: denied, with the rule that would allow it.
    let server = MockServer::start(scenario()).await.unwrap();
    let options = anthropic_options(&server, &env)
        .permission_mode(PermissionMode::Default)
        .sdk_server(calc);
    let messages = collect("add", options).await;
    let results = tool_results(&messages);
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.contains("mcp__calc__add"), "{}", results[0].1);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changes_crashes_and_dead_servers_are_handled() {
    let Some(mini) = mini_server() else { return };
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("mcp__mini__grow", json!({})))
            // The server sends list_changed right after its result; give
            // the notification time to arrive before the next model call.
            .turn(Turn::new().with_tool("Bash", json!({"command": "sleep 0.5"})))
            .turn(Turn::new().with_tool("mcp__mini__extra", json!({})))
            .turn(Turn::new().with_tool("mcp__mini__die", json!({})))
            .turn(Turn::new().with_tool("mcp__mini__hello", json!({})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let options = anthropic_options(&server, &env)
        .mcp_server("mini", mini)
        .mcp_server(
            "ghost",
            McpServerConfig::Stdio {
                command: "/nonexistent/mcp-server".into(),
                args: vec![],
                env: BTreeMap::new(),
                permissions: Default::default(),
            },
        );
    let messages = collect("go", options).await;

    let servers = init_data(&messages)["mcp_servers"].clone();
    let ghost = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "ghost")
        .unwrap();
    assert_eq!(ghost["status"], "failed");
    assert!(
        ghost["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/mcp-server"),
        "{ghost}"
    );

    let requests = server.requests();
    assert!(!tool_names(&requests[0].body).contains(&"mcp__mini__extra".to_string()));
    assert!(
        tool_names(&requests[2].body).contains(&"mcp__mini__extra".to_string()),
        "tools/list_changed is picked up before the next model call"
    );
    let results = tool_results(&messages);
    assert!(!results[2].2, "the new tool runs: {results:?}");
    assert!(
        results[3].2,
        "a crashed server gives a tool error: {results:?}"
    );
    assert!(!results[4].2, "and is restarted on next use: {results:?}");
    assert!(results[4].1.contains("hello"), "{results:?}");
    assert!(!result_of(&messages).is_error);
    assert_pairing(&server);
}
