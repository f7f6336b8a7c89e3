//! Automatic compaction: once a model call's input reaches the limit, the
//! model summarizes the conversation (asked to answer in text), the summary
//! replaces the history, PreCompact hooks run first and can refuse, and a
//! resumed session starts from the summary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use tascer::guard::hooks::{HookEvent, HookInput, HookOutput, HookRegistry};
use tascer::{Message, Usage};
use tascer_testkit::{MockServer, Scenario, Turn};

const SUMMARY: &str = "SUMMARY: the user asked to greet; `echo hi` ran and printed hi.";

fn big_usage() -> Usage {
    Usage {
        input_tokens: 4000,
        output_tokens: 10,
        cache_creation_input_tokens: 500,
        cache_read_input_tokens: 600,
    }
}

/// A tool call whose request was large, then (when compacting) the
/// summary. The mock plays a conversation by its first user message, so
/// the compacted conversation (which starts with the summary) gets its own
/// script: the final answer.
fn scenario() -> Scenario {
    Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "echo hi"})).with_usage(big_usage()))
        .turn(Turn::text(SUMMARY))
        .conversation(tascer::COMPACTED_HISTORY_PREFIX, vec![Turn::text("done")])
}

/// PreCompact (refusing when `refuse`) and PostCompact hooks that record
/// their inputs in `seen`.
fn pre_compact_hook(seen: Arc<Mutex<Vec<Value>>>, refuse: bool) -> HookRegistry {
    let post = Arc::clone(&seen);
    HookRegistry::builder()
        .on(HookEvent::PreCompact, "*", move |input: HookInput| {
            let seen = Arc::clone(&seen);
            async move {
                seen.lock()
                    .unwrap()
                    .push(serde_json::to_value(&input).unwrap());
                Ok(if refuse {
                    HookOutput::block("not now")
                } else {
                    HookOutput::default()
                })
            }
        })
        .on(HookEvent::PostCompact, "*", move |input: HookInput| {
            let seen = Arc::clone(&post);
            async move {
                seen.lock()
                    .unwrap()
                    .push(serde_json::to_value(&input).unwrap());
                Ok(HookOutput::default())
            }
        })
        .build()
        .unwrap()
}

fn boundary(messages: &[Message]) -> Option<&tascer::SystemMessage> {
    messages.iter().find_map(|m| match m {
        Message::System(s) if s.subtype == "compact_boundary" => Some(s),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_context_is_summarized_and_the_summary_replaces_it() {
    let env = Env::new();
    let server = MockServer::start(scenario()).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = anthropic_options(&server, &env)
        .auto_compact_tokens(5000)
        .hooks(pre_compact_hook(Arc::clone(&seen), false));
    let messages = collect("say hi", options).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.result.as_deref(), Some("done"));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The summary request: the whole conversation and an instruction to
    // answer in text. The tools stay defined: the Anthropic API refuses a
    // history with tool calls and no tool definitions.
    let summary_request = &requests[1].body;
    assert!(
        summary_request["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{summary_request}"
    );
    let asked = summary_request["messages"].to_string();
    assert!(
        asked.contains("say hi")
            && asked.contains("echo hi")
            && asked.contains("Do not call any tool"),
        "{asked}"
    );
    // The next call sees only the summary.
    let after = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["role"], "user");
    assert!(after[0].to_string().contains(SUMMARY));
    assert!(!after[0].to_string().contains("echo hi\""));

    let boundary = boundary(&messages).expect("a compact_boundary message");
    assert_eq!(boundary.data["compact_metadata"]["trigger"], "auto");
    assert_eq!(boundary.data["compact_metadata"]["pre_tokens"], 5100);
    let hook_inputs = seen.lock().unwrap().clone();
    assert_eq!(hook_inputs.len(), 2);
    assert_eq!(hook_inputs[0]["hook_event_name"], "PreCompact");
    assert_eq!(hook_inputs[0]["trigger"], "auto");
    assert_eq!(hook_inputs[1]["hook_event_name"], "PostCompact");
    assert_eq!(hook_inputs[1]["compact_summary"], SUMMARY);

    // A resumed session starts from the summary; the ledger records the
    // compaction with the summary as evidence and verifies.
    let store = tascer::SessionStore::open_in_home(env.home()).unwrap();
    let history = store.history(&result.session_id).unwrap();
    assert!(history[0].content[0].as_text().unwrap().contains(SUMMARY));
    assert!(!format!("{history:?}").contains("say hi"), "{history:?}");
    let ledger = tascer::ledger::Ledger::open_in_home(env.home(), None).unwrap();
    let entries = ledger.store().entries(&result.session_id).unwrap();
    let compaction = entries
        .iter()
        .find(|e| e.payload["event"] == "compaction")
        .expect("a compaction entry");
    let digest = compaction.payload["summary_digest"].as_str().unwrap();
    assert_eq!(
        ledger.get_evidence(&result.session_id, digest).unwrap(),
        SUMMARY.as_bytes()
    );
    assert!(ledger.verify(&result.session_id, None).unwrap().ok);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_compact_hook_can_refuse() {
    let env = Env::new();
    // Without compaction the second scripted answer ends the run.
    let server = MockServer::start(scenario()).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = anthropic_options(&server, &env)
        .auto_compact_tokens(5000)
        .hooks(pre_compact_hook(Arc::clone(&seen), true));
    let messages = collect("say hi", options).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.result.as_deref(), Some(SUMMARY));
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(boundary(&messages).is_none());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body["messages"].to_string().contains("echo hi"));
}

#[tokio::test(flavor = "multi_thread")]
async fn below_the_limit_nothing_is_compacted() {
    let env = Env::new();
    let server = MockServer::start(scenario()).await.unwrap();
    let messages = collect(
        "say hi",
        anthropic_options(&server, &env).auto_compact_tokens(5101),
    )
    .await;
    assert!(boundary(&messages).is_none());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn client_compact_summarizes_on_request_with_instructions() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
            .turn(Turn::text("first answer"))
            .turn(Turn::text(SUMMARY))
            .conversation(
                tascer::COMPACTED_HISTORY_PREFIX,
                vec![Turn::text("second answer")],
            ),
    )
    .await
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options =
        anthropic_options(&server, &env).hooks(pre_compact_hook(Arc::clone(&seen), false));
    let mut client = tascer::Client::connect(options).await.unwrap();
    client.query("say hi").await.unwrap();
    let first: Vec<Message> = client.receive_response().collect().await;
    assert_eq!(result_of(&first).result.as_deref(), Some("first answer"));

    let summary = client.compact(Some("keep it short")).await.unwrap();
    assert_eq!(summary, SUMMARY);
    let hook = seen.lock().unwrap()[0].clone();
    assert_eq!(
        (
            hook["trigger"].as_str(),
            hook["custom_instructions"].as_str()
        ),
        (Some("manual"), Some("keep it short"))
    );
    let requests = server.requests();
    assert!(
        requests[2].body["messages"]
            .to_string()
            .contains("keep it short")
    );

    client.query("and now?").await.unwrap();
    let second: Vec<Message> = client.receive_response().collect().await;
    assert_eq!(result_of(&second).result.as_deref(), Some("second answer"));
    let last = server.requests().last().unwrap().body["messages"].clone();
    let last = last.as_array().unwrap();
    assert_eq!(
        last.len(),
        1,
        "summary and prompt in one user message: {last:?}"
    );
    let text = last[0].to_string();
    assert!(
        text.contains(SUMMARY) && text.contains("and now?"),
        "{text}"
    );
    client.disconnect().await;
}
