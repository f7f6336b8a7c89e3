//! Hooks in the loop: command and in-process hooks around real tool calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use serde_json::json;
use tascer::guard::hooks::{HookEvent, HookInput, HookOptions, HookOutput, HookRegistry};
use tascer::{Message, ResultSubtype};
use tascer_testkit::{MockServer, Scenario, Turn};

fn fixture(name: &str) -> String {
    format!(
        "{}/../tascer-guard/tests/fixtures/hooks/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_command_hook_blocks_a_dangerous_command_and_the_session_goes_on() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws().join("keep")).unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "rm -rf /"})))
        .turn(Turn::tool("Bash", json!({"command": "echo still-here"})))
        .turn(Turn::text("ok"));
    let server = MockServer::start(scenario).await.unwrap();
    let hooks = HookRegistry::builder()
        .command(
            HookEvent::PreToolUse,
            "Bash",
            format!("sh {}", fixture("block-dangerous-bash.sh")),
            env.ws(),
            HookOptions::default(),
        )
        .build()
        .unwrap();
    let messages = collect("clean up", anthropic_options(&server, &env).hooks(hooks)).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    let requests = server.requests();
    let after_block = requests[1].body["messages"].to_string();
    assert!(
        after_block.contains("Blocked dangerous command: rm -rf /"),
        "{after_block}"
    );
    assert!(after_block.contains("\"is_error\":true"));
    let after_echo = requests[2].body["messages"].to_string();
    assert!(after_echo.contains("still-here"));
    let hook_runs = messages
        .iter()
        .filter(|m| matches!(m, Message::System(s) if s.subtype == "hook_response"))
        .count();
    assert_eq!(hook_runs, 2, "one PreToolUse run per Bash call is recorded");
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_hook_denies_via_json_permission_decision() {
    let env = Env::new();
    std::fs::write(env.ws().join(".env"), "SECRET=1").unwrap();
    let scenario = Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": ".env"})))
        .turn(Turn::text("ok"));
    let server = MockServer::start(scenario).await.unwrap();
    let hooks = HookRegistry::builder()
        .command(
            HookEvent::PreToolUse,
            "Read|Edit|Write",
            format!("python3 {}", fixture("protect_secrets.py")),
            env.ws(),
            HookOptions::default(),
        )
        .build()
        .unwrap();
    let messages = collect("read env", anthropic_options(&server, &env).hooks(hooks)).await;
    assert!(!result_of(&messages).is_error);
    let body = server.requests()[1].body["messages"].to_string();
    assert!(
        body.contains("PreToolUse hook denied this Read call"),
        "{body}"
    );
    assert!(!body.contains("SECRET=1"), "the file was not read: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_in_process_hook_rewrites_the_input_and_post_hooks_give_feedback() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "echo original"})))
        .turn(Turn::text("ok"));
    let server = MockServer::start(scenario).await.unwrap();
    let hooks = HookRegistry::builder()
        .on(HookEvent::PreToolUse, "Bash", |_input: HookInput| async {
            Ok(HookOutput::allow().with_updated_input(json!({"command": "echo rewritten"})))
        })
        .on(HookEvent::PostToolUse, "*", |_input: HookInput| async {
            Ok(HookOutput::block("remember to run the tests"))
        })
        .build()
        .unwrap();
    let messages = collect("x", anthropic_options(&server, &env).hooks(hooks)).await;
    assert!(!result_of(&messages).is_error);
    let body = server.requests()[1].body["messages"].to_string();
    assert!(
        body.contains("rewritten") && !body.contains("original\\n"),
        "{body}"
    );
    assert!(
        body.contains("PostToolUse hook feedback: remember to run the tests"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_can_make_the_agent_go_on_once() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("first stop"))
        .turn(Turn::text("second stop"));
    let server = MockServer::start(scenario).await.unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let hooks = HookRegistry::builder()
        .on(HookEvent::Stop, "", move |input: HookInput| {
            let seen = Arc::clone(&seen);
            async move {
                seen.fetch_add(1, Ordering::SeqCst);
                let active =
                    serde_json::to_value(&input).unwrap()["stop_hook_active"] == json!(true);
                Ok(if active {
                    HookOutput::default()
                } else {
                    HookOutput::block("also write a summary")
                })
            }
        })
        .build()
        .unwrap();
    let messages = collect("x", anthropic_options(&server, &env).hooks(hooks)).await;
    let result = result_of(&messages);
    assert_eq!(result.result.as_deref(), Some("second stop"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let body = server.requests()[1].body["messages"].to_string();
    assert!(body.contains("also write a summary"), "{body}");
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_prompt_submit_hook_can_block_the_prompt_or_add_context() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::text("fine"))
            .loop_last_turn(true),
    )
    .await
    .unwrap();
    let hooks = HookRegistry::builder()
        .on(
            HookEvent::UserPromptSubmit,
            "",
            |input: HookInput| async move {
                let prompt = serde_json::to_value(&input).unwrap()["prompt"]
                    .as_str()
                    .unwrap()
                    .to_string();
                Ok(if prompt.contains("password") {
                    HookOutput::block("prompts must not contain passwords")
                } else {
                    HookOutput::context("The team uses tabs.")
                })
            },
        )
        .build()
        .unwrap();
    let blocked = collect(
        "my password is hunter2",
        anthropic_options(&server, &env).hooks(hooks.clone()),
    )
    .await;
    let result = result_of(&blocked);
    assert!(result.is_error);
    assert!(
        result
            .result
            .as_deref()
            .unwrap()
            .contains("prompts must not contain passwords")
    );
    assert!(
        server.requests().is_empty(),
        "a blocked prompt never reaches the model"
    );

    let ok = collect("format this", anthropic_options(&server, &env).hooks(hooks)).await;
    assert_eq!(result_of(&ok).subtype, ResultSubtype::Success);
    let body = server.requests()[0].body["messages"].to_string();
    assert!(body.contains("The team uses tabs."), "{body}");
}
