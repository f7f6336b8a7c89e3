//! The Task tool: subagents run nested loops whose messages carry the
//! parent's tool_use id, and their final answer returns to the parent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer::{AgentDefinition, ContentBlock, Message, SessionStore};
use tascer_testkit::{MockServer, Scenario, Turn};

fn task(prompt: &str, kind: &str) -> Turn {
    Turn::tool(
        "Task",
        json!({"description": "delegate", "prompt": prompt, "subagent_type": kind}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_runs_tools_and_its_answer_returns_to_the_parent() {
    let env = Env::new();
    std::fs::write(env.ws().join("one.txt"), "1").unwrap();
    std::fs::write(env.ws().join("two.txt"), "2").unwrap();
    let scenario = Scenario::new()
        .turn(task("SUBTASK: count the files", "general-purpose"))
        .turn(Turn::text("The subagent found 2 files."))
        .conversation(
            "SUBTASK",
            vec![
                Turn::tool("Bash", json!({"command": "ls | wc -l"})),
                Turn::text("There are 2 files."),
            ],
        );
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("how many files?", anthropic_options(&server, &env)).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.result.as_deref(),
        Some("The subagent found 2 files.")
    );

    let task_id = messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(a) if a.parent_tool_use_id.is_none() => {
                a.message.content.iter().find_map(|b| match b {
                    ContentBlock::ToolUse { id, name, .. } if name == "Task" => Some(id.clone()),
                    _ => None,
                })
            }
            _ => None,
        })
        .unwrap();
    let sub_assistant = messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(a) if a.parent_tool_use_id.as_deref() == Some(&task_id)))
        .count();
    assert_eq!(
        sub_assistant, 2,
        "the subagent's two model responses carry parent_tool_use_id"
    );
    let sub_results: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u)
                if u.parent_tool_use_id.as_deref() == Some(&task_id)
                    && u.tool_use_result.is_some() =>
            {
                Some(u.tool_use_result.as_ref().unwrap()["stdout"].to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(sub_results.len(), 1);
    assert!(sub_results[0].contains('2'), "{sub_results:?}");

    // The parent's second request carries the subagent's report as the Task result.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let parent_second = requests
        .iter()
        .find(|r| {
            r.body["messages"].as_array().unwrap().len() == 3
                && r.body["messages"][0]["content"]
                    .to_string()
                    .contains("how many")
        })
        .unwrap();
    assert!(
        parent_second.body["messages"][2]
            .to_string()
            .contains("There are 2 files.")
    );
    // The subagent's own requests do not see the parent's conversation.
    let sub_first = requests
        .iter()
        .find(|r| r.body["messages"][0].to_string().contains("SUBTASK"))
        .unwrap();
    assert!(!sub_first.body.to_string().contains("how many files"));
    assert!(
        !sub_first.body["tools"].to_string().contains("\"Task\""),
        "subagents cannot start subagents"
    );
    assert_pairing(&server);

    // The stored history the parent resumes with excludes subagent messages.
    let store = SessionStore::open_in_home(env.home()).unwrap();
    assert_eq!(store.history(&result.session_id).unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_defined_agent_gets_only_its_tools_and_unknown_types_are_errors() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(
            Turn::new()
                .with_tool(
                    "Task",
                    json!({"description": "a", "prompt": "READER: go", "subagent_type": "reader"}),
                )
                .with_tool(
                    "Task",
                    json!({"description": "b", "prompt": "x", "subagent_type": "nope"}),
                ),
        )
        .turn(Turn::text("ok"))
        .conversation(
            "READER",
            vec![
                Turn::tool("Bash", json!({"command": "echo hi"})),
                Turn::text("could not run bash"),
            ],
        );
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env).agent(
        "reader",
        AgentDefinition {
            description: "reads files".into(),
            prompt: "You only read.".into(),
            tools: Some(vec!["Read".into()]),
            model: None,
            max_turns: Some(5),
        },
    );
    let messages = collect("go", options).await;
    assert!(!result_of(&messages).is_error);
    let requests = server.requests();
    let reader_first = requests
        .iter()
        .find(|r| r.body["messages"][0].to_string().contains("READER"))
        .unwrap();
    let tools: Vec<String> = reader_first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tools, vec!["Read"]);
    assert!(
        reader_first.body["system"]
            .as_str()
            .unwrap()
            .starts_with("You only read.")
    );
    let parent_last = requests.last().unwrap().body.to_string();
    assert!(
        parent_last
            .contains("Agent type 'nope' not found. Available agents: general-purpose, reader"),
        "{parent_last}"
    );
    assert!(parent_last.contains("could not run bash"));
    assert_pairing(&server);
}
