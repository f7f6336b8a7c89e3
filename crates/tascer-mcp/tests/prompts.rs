//! Prompts, resource templates and resource subscriptions against the
//! reference `server-everything` (stdio), through [`McpManager`].
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tascer_core::Tool;
use tascer_mcp::{McpManager, ResourceUpdate};

use common::{ctx, node, reference_server};

fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools.iter().find(|t| t.name() == name).cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn everything_prompts_templates_and_resource_updates() {
    let Some(script) = reference_server(
        "server-everything",
        "everything_prompts_templates_and_resource_updates",
    ) else {
        return;
    };
    let configs = BTreeMap::from([("ev".to_owned(), node(&script, &["stdio"]))]);
    let mgr = McpManager::connect_all(configs, Duration::from_secs(20)).await;

    // Prompts: listed on connect, arguments mapped in order.
    let prompts = mgr.prompts_snapshot();
    let args = prompts
        .iter()
        .find(|p| p.command == "mcp__ev__args-prompt")
        .unwrap_or_else(|| panic!("{prompts:?}"));
    assert_eq!(args.argument_list(), "city, state?");
    let text = mgr
        .run_prompt_command("mcp__ev__args-prompt", r#""New York" NY"#)
        .await
        .unwrap();
    assert_eq!(text, "What's weather in New York, NY?");
    let err = mgr
        .run_prompt_command("mcp__ev__args-prompt", "")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing required argument 'city'"), "{err}");

    // Resource templates are listed with their server.
    let tools = mgr.tools().await;
    let out = find(&tools, "ListMcpResourcesTool")
        .call(json!({"server": "ev"}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    let listed = out.raw.unwrap();
    let template = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(template["server"], "ev");

    // Reading a resource subscribes to it; the server's updates queue up.
    let uri = "demo://resource/dynamic/text/7";
    let out = find(&tools, "ReadMcpResourceTool")
        .call(json!({"server": "ev", "uri": uri}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.raw.unwrap()["contents"][0]["text"].is_string());
    assert!(mgr.take_resource_updates().is_empty());
    let toggle = find(&tools, "mcp__ev__toggle-subscriber-updates");
    assert!(!toggle.call(json!({}), &ctx()).await.is_error);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut updates: Vec<ResourceUpdate> = Vec::new();
    while updates.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        updates = mgr.take_resource_updates();
    }
    assert_eq!(
        updates,
        vec![ResourceUpdate {
            server: "ev".into(),
            uri: uri.into()
        }]
    );
    assert!(updates[0].reminder().contains(uri));
    // A second toggle stops them.
    assert!(!toggle.call(json!({}), &ctx()).await.is_error);
}
