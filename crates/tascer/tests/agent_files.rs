//! Custom subagents from `.claude/agents/*.md`: the Task tool offers them,
//! and a subagent runs with the file's prompt, tools and model; the
//! options' `agents` win over a file of the same name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer::AgentDefinition;
use tascer::guard::settings::SettingsSource;
use tascer_testkit::{MockServer, Scenario, Turn};

fn scenario(kind: &str) -> Scenario {
    Scenario::new()
        .turn(Turn::tool(
            "Task",
            json!({"description": "review", "prompt": "SUBTASK: review", "subagent_type": kind}),
        ))
        .turn(Turn::text("reviewed"))
        .conversation("SUBTASK", vec![Turn::text("looks fine")])
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_file_defines_a_subagent_with_its_prompt_tools_and_model() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws().join(".git")).unwrap();
    write_file(env.ws().join("CLAUDE.md"), "MEMORY-FOR-ALL");
    write_file(
        env.ws().join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\nmodel: review-model\n---\n\
         REVIEWER-PROMPT: look for bugs.\n",
    );
    let server = MockServer::start(scenario("reviewer")).await.unwrap();
    let options = anthropic_options(&server, &env).setting_sources([SettingsSource::Project]);
    let messages = collect("review it", options).await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.result.as_deref(), Some("reviewed"));

    let requests = server.requests();
    let task_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Task")
        .unwrap()
        .clone();
    assert!(
        task_tool["description"]
            .as_str()
            .unwrap()
            .contains("- reviewer: Reviews code for bugs")
    );
    let sub = requests
        .iter()
        .find(|r| r.body["messages"].to_string().contains("SUBTASK"))
        .expect("the subagent's request");
    assert_eq!(sub.body["model"], "review-model");
    let system = sub.body["system"].to_string();
    assert!(system.contains("REVIEWER-PROMPT"), "{system}");
    assert!(
        system.contains("MEMORY-FOR-ALL"),
        "subagents get memory: {system}"
    );
    let mut tools: Vec<String> = sub.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    tools.sort();
    assert_eq!(tools, vec!["Grep", "Read"]);

    let init = init_of(&messages);
    assert_eq!(init["agents"], json!(["general-purpose", "reviewer"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_options_agents_win_over_a_file_of_the_same_name() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws().join(".git")).unwrap();
    write_file(
        env.ws().join(".claude/agents/reviewer.md"),
        "---\ndescription: from the file\n---\nFILE-PROMPT",
    );
    let server = MockServer::start(scenario("reviewer")).await.unwrap();
    let options = anthropic_options(&server, &env)
        .setting_sources([SettingsSource::Project])
        .agent(
            "reviewer",
            AgentDefinition {
                description: "from the options".into(),
                prompt: "OPTIONS-PROMPT".into(),
                ..AgentDefinition::default()
            },
        );
    let messages = collect("review it", options).await;
    assert!(!result_of(&messages).is_error);
    let requests = server.requests();
    let sub = requests
        .iter()
        .find(|r| r.body["messages"].to_string().contains("SUBTASK"))
        .unwrap();
    let system = sub.body["system"].to_string();
    assert!(system.contains("OPTIONS-PROMPT"), "{system}");
    assert!(!system.contains("FILE-PROMPT"), "{system}");
}
