//! Session-level hooks and permission hooks in the loop: SessionStart adds
//! context, SessionEnd fires at disconnect, PermissionRequest answers an
//! ask, Notification precedes a human prompt, and ExitPlanMode ends plan
//! mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::json;
use tascer::Client;
use tascer::guard::hooks::{HookEvent, HookInput, HookOutput, HookRegistry};
use tascer::guard::permissions::{
    AskAnswer, Asker, CanUseToolRequest, CanUseToolResult, PermissionMode,
};
use tascer_testkit::{MockServer, Scenario, Turn};

/// Records the event name of every hook input it sees.
fn recorder(seen: Arc<Mutex<Vec<String>>>) -> HookRegistry {
    let mut builder = HookRegistry::builder();
    for event in [
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
    ] {
        let seen = Arc::clone(&seen);
        builder = builder.on(event, "", move |input: HookInput| {
            let seen = Arc::clone(&seen);
            async move {
                let v = serde_json::to_value(&input).unwrap();
                seen.lock()
                    .unwrap()
                    .push(v["hook_event_name"].as_str().unwrap().to_string());
                Ok(if v["hook_event_name"] == "SessionStart" {
                    HookOutput::context("The build command is `make ci`.")
                } else {
                    HookOutput::default()
                })
            }
        });
    }
    builder = builder.on(
        HookEvent::PermissionRequest,
        "Write",
        |_input: HookInput| async {
            Ok(HookOutput::from_value(&json!({"hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"}
            }})))
        },
    );
    builder.build().unwrap()
}

struct AllowOnce;
impl Asker for AllowOnce {
    fn ask<'a>(&'a self, _request: &'a CanUseToolRequest) -> BoxFuture<'a, AskAnswer> {
        Box::pin(async { AskAnswer::AllowOnce })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_and_permission_hooks_fire_in_a_session() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Write", json!({"file_path": "by-hook.txt", "content": "1"}))
                    .with_tool("Bash", json!({"command": "touch by-user.txt"})),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = anthropic_options(&server, &env)
        .permission_mode(PermissionMode::Default)
        .hooks(recorder(Arc::clone(&seen)))
        .asker(Arc::new(AllowOnce));
    let mut client = Client::connect(options).await.unwrap();
    client.query("go").await.unwrap();
    let messages: Vec<_> = client.receive_response().collect().await;
    client.disconnect().await;

    let first = server.requests()[0].body["messages"][0].to_string();
    assert!(
        first.contains("make ci"),
        "SessionStart context reaches the model: {first}"
    );
    assert!(
        env.ws().join("by-hook.txt").exists(),
        "PermissionRequest hook allowed it"
    );
    assert!(
        env.ws().join("by-user.txt").exists(),
        "the asker allowed it"
    );
    assert!(result_of(&messages).permission_denials.is_empty());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        ["SessionStart", "Notification", "SessionEnd"],
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_plan_mode_leaves_plan_mode() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("Write", json!({"file_path": "p.txt", "content": "x"})))
            .turn(Turn::new().with_tool("ExitPlanMode", json!({"plan": "1. write p.txt"})))
            .turn(Turn::text("ready")),
    )
    .await
    .unwrap();
    let approve: tascer::guard::permissions::CanUseTool = Arc::new(|_req| {
        Box::pin(async {
            CanUseToolResult::Allow {
                updated_input: None,
                updated_permissions: Vec::new(),
            }
        })
    });
    let options = anthropic_options(&server, &env)
        .permission_mode(PermissionMode::Plan)
        .can_use_tool(approve);
    let mut client = Client::connect(options).await.unwrap();
    client.query("plan it").await.unwrap();
    let messages: Vec<_> = client.receive_response().collect().await;
    let results = tool_results(&messages);
    assert!(results[0].2, "plan mode refuses edits: {results:?}");
    assert!(!results[1].2, "{results:?}");
    assert_eq!(client.permission_mode(), PermissionMode::Default);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_request_hook_s_always_allow_holds_and_is_persisted() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "touch one.txt"})))
            .turn(Turn::tool("Bash", json!({"command": "touch two.txt"})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let calls = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&calls);
    let hooks = HookRegistry::builder()
        .on(HookEvent::PermissionRequest, "Bash", move |_input: HookInput| {
            *counted.lock().unwrap() += 1;
            async {
                Ok(HookOutput::from_value(&json!({"hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow", "updatedPermissions": [
                        {"type": "addRules", "behavior": "allow", "destination": "localSettings",
                         "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}]},
                    ]}
                }})))
            }
        })
        .build()
        .unwrap();
    let options = anthropic_options(&server, &env)
        .permission_mode(PermissionMode::Default)
        .hooks(hooks);
    let mut client = Client::connect(options).await.unwrap();
    client.query("go").await.unwrap();
    let messages: Vec<_> = client.receive_response().collect().await;
    client.disconnect().await;

    assert!(result_of(&messages).permission_denials.is_empty());
    assert!(env.ws().join("one.txt").exists() && env.ws().join("two.txt").exists());
    assert_eq!(
        *calls.lock().unwrap(),
        1,
        "the rule answered the second call"
    );
    let local = std::fs::read_to_string(env.ws().join(".claude/settings.local.json")).unwrap();
    assert!(local.contains("Bash(touch:*)"), "{local}");
}
