//! Slash commands: custom commands from real `.claude/commands/` files are
//! expanded before the prompt reaches the mock model, with their model and
//! allowed tools for that turn only; built-ins run in the session; an
//! unknown command is a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use tascer::guard::permissions::PermissionMode;
use tascer::guard::settings::SettingsSource;
use tascer::{Client, Message, Options};
use tascer_testkit::{MockServer, Scenario, Turn};

fn options(server: &MockServer, env: &Env) -> Options {
    std::fs::create_dir_all(env.ws().join(".git")).unwrap();
    anthropic_options(server, env)
        .claude_config_dir(env.root.path().join("user"))
        .setting_sources([SettingsSource::User, SettingsSource::Project])
}

async fn turn(client: &mut Client, prompt: &str) -> Vec<Message> {
    client.query(prompt).await.unwrap();
    let stream = client.receive_response();
    tokio::time::timeout(std::time::Duration::from_secs(60), stream.collect())
        .await
        .unwrap()
}

fn last_user_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    last["content"].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_command_is_expanded_with_its_model_for_that_turn_only() {
    let env = Env::new();
    write_file(
        env.ws().join(".claude/commands/git/fix.md"),
        "---\ndescription: Fix an issue\nargument-hint: [issue] [priority]\nmodel: command-model\n---\n\
         Fix issue #$1 (priority $2). All: $ARGUMENTS\n",
    );
    write_file(
        env.root.path().join("user/commands/hello.md"),
        "Say hello to the user.",
    );
    let server = MockServer::start(Scenario::new().turn(Turn::text("done")))
        .await
        .unwrap();
    let mut client = Client::connect(options(&server, &env)).await.unwrap();

    let messages = turn(&mut client, "/git:fix 42 high").await;
    assert!(!result_of(&messages).is_error, "{:?}", result_of(&messages));
    let requests = server.requests();
    let sent = last_user_text(&requests[0].body);
    assert!(
        sent.contains("Fix issue #42 (priority high). All: 42 high"),
        "{sent}"
    );
    assert_eq!(requests[0].body["model"], "command-model");
    let names: Vec<String> = init_of(&messages)["slash_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for name in ["clear", "compact", "context", "cost", "git:fix", "hello"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }

    // The next turn uses the session's model again; a user command with no
    // placeholder gets its arguments appended.
    let messages = turn(&mut client, "/hello Ada").await;
    assert!(!result_of(&messages).is_error);
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.body["model"], "mock-model");
    let sent = last_user_text(&last.body);
    assert!(sent.contains("Say hello to the user."), "{sent}");
    assert!(sent.contains("ARGUMENTS: Ada"), "{sent}");
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn allowed_tools_of_a_command_hold_for_its_turn_only() {
    let env = Env::new();
    write_file(
        env.ws().join(".claude/commands/greet.md"),
        "---\nallowed-tools: Bash(echo:*)\n---\nGreet with echo.",
    );
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
        .turn(Turn::text("greeted"))
        .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
        .turn(Turn::text("not greeted"));
    let server = MockServer::start(scenario).await.unwrap();
    let opts = options(&server, &env).permission_mode(PermissionMode::Default);
    let mut client = Client::connect(opts).await.unwrap();

    // Through the command: the call is allowed and runs.
    let messages = turn(&mut client, "/greet").await;
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(!results[0].2, "allowed by the command: {results:?}");
    assert!(results[0].1.contains("hi"), "{results:?}");

    // The next turn of the same session: the same call is not allowed
    // (nobody to ask).
    let messages = turn(&mut client, "Greet with echo again.").await;
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(results[0].2, "denied without the command: {results:?}");
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_command_lists_the_known_ones_and_calls_no_model() {
    let env = Env::new();
    write_file(env.ws().join(".claude/commands/review.md"), "Review.");
    let server = MockServer::start(Scenario::new().turn(Turn::text("x")))
        .await
        .unwrap();
    let messages = collect("/revew now", options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(result.is_error);
    let text = result.result.clone().unwrap();
    assert!(text.contains("Unknown slash command: /revew"), "{text}");
    assert!(
        text.contains("/review") && text.contains("/compact"),
        "{text}"
    );
    assert!(server.requests().is_empty());

    // A path is not a command: it goes to the model as written.
    let messages = collect("/usr/bin/env fails", options(&server, &env)).await;
    assert!(!result_of(&messages).is_error);
    assert!(last_user_text(&server.requests()[0].body).contains("/usr/bin/env fails"));
}

#[tokio::test(flavor = "multi_thread")]
async fn builtins_cost_context_compact_and_clear_run_in_the_session() {
    let env = Env::new();
    write_file(env.ws().join("CLAUDE.md"), "Be precise.");
    let scenario = Scenario::new()
        .turn(Turn::text("first answer"))
        .turn(Turn::text("SUMMARY-OF-IT"))
        .turn(Turn::text("after compact"));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(options(&server, &env)).await.unwrap();
    turn(&mut client, "REMEMBER-THIS first prompt").await;
    assert_eq!(server.requests().len(), 1);

    let messages = turn(&mut client, "/cost").await;
    let text = result_of(&messages).result.clone().unwrap();
    assert!(text.contains("Total cost: $"), "{text}");
    assert!(text.contains("mock-model:"), "{text}");
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, Message::System(s) if s.subtype == "local_command_output"))
    );

    let messages = turn(&mut client, "/context").await;
    let text = result_of(&messages).result.clone().unwrap();
    assert!(text.contains("Memory files:"), "{text}");
    assert!(text.contains("CLAUDE.md"), "{text}");
    assert!(text.contains("Messages: 2"), "{text}");
    assert_eq!(
        server.requests().len(),
        1,
        "no model call for /cost, /context"
    );

    let messages = turn(&mut client, "/compact keep the names").await;
    assert!(!result_of(&messages).is_error, "{:?}", result_of(&messages));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(last_user_text(&requests[1].body).contains("keep the names"));
    turn(&mut client, "next").await;
    let requests = server.requests();
    let body = requests[2].body["messages"].to_string();
    assert!(body.contains("SUMMARY-OF-IT"), "{body}");
    assert!(!body.contains("REMEMBER-THIS"), "{body}");

    let messages = turn(&mut client, "/clear").await;
    assert!(!result_of(&messages).is_error);
    client.query("fresh").await.unwrap();
    let _: Vec<Message> = client.receive_response().collect().await;
    let requests = server.requests();
    let body = requests.last().unwrap().body["messages"].to_string();
    assert!(!body.contains("SUMMARY-OF-IT"), "{body}");
    assert!(body.contains("cleared with /clear"), "{body}");
    client.disconnect().await;
}
