//! Sessions: resume, continue and fork through the store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use tascer::{Message, SessionStore};
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::test(flavor = "multi_thread")]
async fn resume_sends_the_full_history_and_keeps_the_id() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("remembered: 42"))
        .turn(Turn::text("you said 42"));
    let server = MockServer::start(scenario).await.unwrap();
    let first = collect("remember 42", anthropic_options(&server, &env)).await;
    let id = result_of(&first).session_id.clone();

    let second = collect(
        "what did I say?",
        anthropic_options(&server, &env).resume(&id),
    )
    .await;
    assert_eq!(result_of(&second).session_id, id);
    assert_eq!(result_of(&second).result.as_deref(), Some("you said 42"));
    let body = server.requests()[1].body["messages"].to_string();
    assert!(
        body.contains("remember 42") && body.contains("remembered: 42"),
        "{body}"
    );

    let store = SessionStore::open_in_home(env.home()).unwrap();
    let info = store.session(&id).unwrap().unwrap();
    assert_eq!(info.num_turns, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_picks_the_latest_session_of_the_directory_and_fork_copies_it() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("a"))
        .turn(Turn::text("b"))
        .turn(Turn::text("c"));
    let server = MockServer::start(scenario).await.unwrap();
    let first = collect("p1", anthropic_options(&server, &env)).await;
    let id = result_of(&first).session_id.clone();

    let cont = collect(
        "p2",
        anthropic_options(&server, &env).continue_conversation(true),
    )
    .await;
    assert_eq!(result_of(&cont).session_id, id);

    let fork = collect(
        "p3",
        anthropic_options(&server, &env)
            .resume(&id)
            .fork_session(true),
    )
    .await;
    let fork_id = result_of(&fork).session_id.clone();
    assert_ne!(fork_id, id);
    let body = server.requests()[2].body["messages"].to_string();
    assert!(body.contains("p1") && body.contains("p2") && body.contains("p3"));
    let store = SessionStore::open_in_home(env.home()).unwrap();
    let original = store.messages(&id).unwrap();
    assert!(!original.iter().any(|m| matches!(m, Message::User(u) if u.message.content == tascer::UserContent::Text("p3".into()))));
}

#[tokio::test(flavor = "multi_thread")]
async fn resuming_an_unknown_session_fails_clearly() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("x")))
        .await
        .unwrap();
    let messages = collect(
        "x",
        anthropic_options(&server, &env).resume("00000000-0000-4000-8000-000000000000"),
    )
    .await;
    let result = result_of(&messages);
    assert!(result.is_error);
    assert_eq!(
        result.errors,
        vec!["No conversation found with session ID: 00000000-0000-4000-8000-000000000000"]
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn session_ids_are_fresh_uuids() {
    let env = Env::new();
    let server = MockServer::start(Scenario::new().turn(Turn::text("x")).loop_last_turn(true))
        .await
        .unwrap();
    let a = result_of(&collect("x", anthropic_options(&server, &env)).await)
        .session_id
        .clone();
    let b = result_of(&collect("x", anthropic_options(&server, &env)).await)
        .session_id
        .clone();
    assert_ne!(a, b);
    assert_eq!(a.len(), 36);
    assert_eq!(a.chars().filter(|c| *c == '-').count(), 4);
}
