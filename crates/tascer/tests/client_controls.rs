//! What a host (the `tascer` control-protocol mode) asks a running
//! `Client`: switch the model between turns, list the slash commands, the
//! subagents and the MCP servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use tascer::mcp::{McpStatus, SdkServer};
use tascer::{AgentDefinition, Client, Message, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::test(flavor = "multi_thread")]
async fn set_model_applies_from_the_next_turn_and_none_restores_the_first() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("one"))
        .turn(Turn::text("two"))
        .turn(Turn::text("three"));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env).model("model-a"))
        .await
        .unwrap();
    let turn = async |client: &mut Client, prompt: &str| {
        client.query(prompt).await.unwrap();
        let messages: Vec<Message> = client.receive_response().collect().await;
        assert!(!result_of(&messages).is_error);
    };
    assert_eq!(client.model(), "model-a");
    turn(&mut client, "a").await;
    client.set_model(Some("model-b"));
    assert_eq!(client.model(), "model-b");
    turn(&mut client, "b").await;
    client.set_model(None);
    assert_eq!(client.model(), "model-a");
    turn(&mut client, "c").await;
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["model-a", "model-b", "model-a"]);
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_agents_and_mcp_servers_are_listed() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new()).await.unwrap();
    let calc = SdkServer::new("calc").tool(
        "add",
        "Adds",
        serde_json::json!({"a": "number"}),
        |_| async { ToolOutput::text("0") },
    );
    let reviewer = AgentDefinition {
        description: "Reviews code".into(),
        prompt: "Review it.".into(),
        model: Some("model-r".into()),
        ..AgentDefinition::default()
    };
    let options = anthropic_options(&server, &env)
        .sdk_server(calc)
        .agent("reviewer", reviewer);
    let client = Client::connect(options).await.unwrap();

    let commands: Vec<String> = client
        .slash_commands()
        .await
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(commands.contains(&"compact".to_string()), "{commands:?}");
    let agents = client.agents().await;
    assert_eq!(agents[0].name, "general-purpose");
    assert!(
        agents
            .iter()
            .any(|a| a.name == "reviewer" && a.model.as_deref() == Some("model-r")),
        "{agents:?}"
    );
    let status = client.mcp_status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].name, "calc");
    assert_eq!(status[0].status, McpStatus::Connected);
    assert_eq!(status[0].tools, ["add"]);
    client.disconnect().await;
}
