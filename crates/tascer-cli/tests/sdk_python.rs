//! The official Python Agent SDK (`claude-agent-sdk`) drives `tascer`
//! through `cli_path`, against the mock model: `query()` with tools, a hook
//! callback that denies a call, `can_use_tool` rewriting an input, an
//! in-process SDK MCP tool, `interrupt`, a multi-turn `ClaudeSDKClient`
//! session and resume in a second process. Every session verifies.
//! The cases are `tests/sdk/python_sdk.py`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::sdk::{Workspace, of_class, python_sdk, script, the_result};
use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

fn run(python: &Path, ws: &Workspace, case: &str, config: &Value) -> Value {
    let case_script: PathBuf = script("python_sdk.py");
    ws.run_case(python, &[&case_script], case, config)
}

fn session_of(messages: &Value) -> String {
    the_result(messages)["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn query_runs_tools_that_change_real_files() {
    let Some(python) = python_sdk("query_runs_tools_that_change_real_files") else {
        return;
    };
    let ws = Workspace::new(|dir| {
        let file = dir.join("notes.txt").display().to_string();
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({"file_path": file, "content": "written through the SDK\n"}),
            ))
            .turn(Turn::tool("Read", json!({"file_path": file})))
            .turn(Turn::text("The file is written."))
    });
    let out = run(&python, &ws, "query_tools", &ws.config("write the notes"));
    let messages = &out["messages"];

    assert_eq!(
        std::fs::read_to_string(ws.dir().join("notes.txt")).unwrap(),
        "written through the SDK\n"
    );
    let init = &of_class(messages, "SystemMessage")[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["data"]["claude_code_version"], "2.1.332");
    let tool_uses: Vec<&str> = of_class(messages, "AssistantMessage")
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap().iter())
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(tool_uses, ["Write", "Read"]);
    let results: Vec<&Value> = of_class(messages, "UserMessage")
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap().iter())
        .collect();
    assert_eq!(results.len(), 2, "{messages:#}");
    assert!(results.iter().all(|r| r["is_error"] == false), "{results:#?}");
    assert!(
        results[1]["content"]
            .to_string()
            .contains("written through the SDK")
    );
    let result = the_result(messages);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "The file is written.");
    assert_eq!(result["num_turns"], 3);

    let session = session_of(messages);
    let tools: Vec<Value> = ws
        .ledger(&session, "tool_record")
        .iter()
        .map(|r| r["tool"].clone())
        .collect();
    assert_eq!(tools, [json!("Write"), json!("Read")]);
    ws.verify(&session);
}

#[test]
fn a_hook_callback_denies_a_call_and_the_reason_reaches_the_model() {
    let Some(python) = python_sdk("a_hook_callback_denies_a_call_and_the_reason_reaches_the_model")
    else {
        return;
    };
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::new().with_tool_id("toolu_shell", "Bash", json!({"command": "touch hooked.txt"})))
            .turn(Turn::text("I will not use the shell."))
    });
    let out = run(&python, &ws, "hook_deny", &ws.config("touch a file"));
    let messages = &out["messages"];

    assert!(
        !ws.dir().join("hooked.txt").exists(),
        "the denied command must not run"
    );
    let calls = out["hook_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["tool_use_id"], "toolu_shell");
    assert_eq!(calls[0]["input"]["hook_event_name"], "PreToolUse");
    assert_eq!(calls[0]["input"]["tool_name"], "Bash");
    assert_eq!(calls[0]["input"]["tool_input"]["command"], "touch hooked.txt");

    let sent = ws.tool_results_sent();
    assert!(
        sent.iter()
            .any(|(text, error)| *error && text.contains("no shell today (SDK hook)")),
        "the model must get the denial reason: {sent:?}"
    );
    let result = the_result(messages);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");

    let session = session_of(messages);
    let hooks = ws.ledger(&session, "hook_execution");
    let run = hooks
        .iter()
        .find(|h| h["hook_name"] == "sdk hook_callback hook_0")
        .unwrap_or_else(|| panic!("the SDK hook is in the ledger: {hooks:#?}"));
    assert_eq!(run["outcome"], "blocked");
    assert_eq!(run["event"], "PreToolUse");
    assert_eq!(
        run["output"]["hookSpecificOutput"]["permissionDecisionReason"],
        "no shell today (SDK hook)"
    );
    ws.verify(&session);
}

#[test]
fn can_use_tool_rewrites_the_input_that_runs() {
    let Some(python) = python_sdk("can_use_tool_rewrites_the_input_that_runs") else {
        return;
    };
    let ws = Workspace::new(|dir| {
        let file = dir.join("perm.txt").display().to_string();
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({"file_path": file, "content": "original\n"}),
            ))
            .turn(Turn::text("Written."))
    });
    let out = run(&python, &ws, "can_use_tool", &ws.config("write perm.txt"));

    assert_eq!(
        std::fs::read_to_string(ws.dir().join("perm.txt")).unwrap(),
        "rewritten by can_use_tool\n",
        "the rewritten input is what ran"
    );
    let asked = out["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["tool_name"], "Write");
    assert_eq!(asked[0]["input"]["content"], "original\n");
    let messages = &out["messages"];
    assert_eq!(the_result(messages)["subtype"], "success");

    let session = session_of(messages);
    let decisions = ws.ledger(&session, "permission_decision");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["decided_by"]["type"], "callback");
    assert_eq!(decisions[0]["behavior"], "allow");
    assert_eq!(
        decisions[0]["updated_input"]["content"],
        "rewritten by can_use_tool\n",
        "the ledger records the rewritten input"
    );
    ws.verify(&session);
}

#[test]
fn an_in_process_sdk_mcp_tool_is_called_through_the_sdk() {
    let Some(python) = python_sdk("an_in_process_sdk_mcp_tool_is_called_through_the_sdk") else {
        return;
    };
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("mcp__calc__add", json!({"a": 2, "b": 3})))
            .turn(Turn::text("2 + 3 = 5"))
    });
    let out = run(&python, &ws, "sdk_mcp", &ws.config("add two numbers"));

    assert_eq!(out["calls"], json!([{"a": 2, "b": 3}]));
    let sent = ws.tool_results_sent();
    assert!(
        sent.contains(&("sum=5".to_string(), false)),
        "the tool's answer reaches the model: {sent:?}"
    );
    let status = &out["mcp_status"]["mcpServers"][0];
    assert_eq!(status["name"], "calc");
    assert_eq!(status["status"], "connected");
    assert_eq!(status["tools"][0]["name"], "add");
    assert_eq!(status["serverInfo"]["version"], "2.0.0");

    let messages = &out["messages"];
    let session = session_of(messages);
    let tools: Vec<Value> = ws
        .ledger(&session, "tool_record")
        .iter()
        .map(|r| r["tool"].clone())
        .collect();
    assert_eq!(tools, [json!("mcp__calc__add")]);
    ws.verify(&session);
}

#[test]
fn interrupt_ends_the_turn_and_the_session_goes_on() {
    let Some(python) = python_sdk("interrupt_ends_the_turn_and_the_session_goes_on") else {
        return;
    };
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "sleep 30"})))
            .turn(Turn::text("Answered after the interrupt."))
    });
    let started = std::time::Instant::now();
    let out = run(&python, &ws, "interrupt", &ws.config("sleep a while"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the interrupt stopped the 30 s command"
    );

    let interrupted = the_result(&out["messages"]);
    assert_eq!(interrupted["subtype"], "error_during_execution");
    assert_eq!(interrupted["is_error"], true);
    assert_eq!(interrupted["result"], "Interrupted by user");
    let after = the_result(&out["after"]);
    assert_eq!(after["subtype"], "success");
    assert_eq!(after["result"], "Answered after the interrupt.");
    assert_eq!(after["session_id"], interrupted["session_id"]);
    ws.verify(after["session_id"].as_str().unwrap());
}

#[test]
fn a_client_session_keeps_its_history_across_prompts() {
    let Some(python) = python_sdk("a_client_session_keeps_its_history_across_prompts") else {
        return;
    };
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("first answer"))
            .turn(Turn::text("second answer"))
            .turn(Turn::text("third answer"))
            .turn(Turn::text("fourth answer"))
    });
    let out = run(&python, &ws, "multi_turn", &ws.config("first question"));
    let turns = out["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 4);
    let answers: Vec<&Value> = turns.iter().map(|t| &the_result(t)["result"]).collect();
    assert_eq!(
        answers,
        [
            "first answer",
            "second answer",
            "third answer",
            "fourth answer"
        ]
    );
    let session = session_of(&turns[0]);
    for turn in turns {
        assert_eq!(session_of(turn), session, "one session");
        let first = &turn[0];
        let init = if first["subtype"] == "status" {
            &turn[1]
        } else {
            first
        };
        assert_eq!(init["subtype"], "init", "each turn starts with system/init");
    }
    // The fourth turn runs in acceptEdits with the other model.
    let status = of_class(&turns[3], "SystemMessage");
    assert!(
        status
            .iter()
            .any(|m| m["subtype"] == "status" && m["data"]["permissionMode"] == "acceptEdits"),
        "{status:#?}"
    );
    let requests = ws.mock.requests();
    assert_eq!(requests.len(), 4);
    let history = requests[1].body["messages"].to_string();
    assert!(
        history.contains("first question") && history.contains("first answer"),
        "the second call carries the first exchange: {history}"
    );
    assert_eq!(requests[3].body["model"], "mock-model-b");
    assert_eq!(requests[2].body["model"], requests[0].body["model"]);

    let info = &out["server_info"];
    assert!(info["pid"].as_u64().is_some());
    assert_eq!(info["claude_code_version"], "2.1.332");
    assert!(
        info["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "compact")
    );
    ws.verify(&session);
}

#[test]
fn resume_continues_the_session_in_a_second_process() {
    let Some(python) = python_sdk("resume_continues_the_session_in_a_second_process") else {
        return;
    };
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("the password is swordfish"))
            .turn(Turn::text("you told me: swordfish"))
    });
    let first = run(&python, &ws, "query_tools", &ws.config("remember this"));
    let session = session_of(&first["messages"]);

    let mut config = ws.config("what was the password?");
    config["resume"] = json!(session);
    let second = run(&python, &ws, "query_tools", &config);
    let result = the_result(&second["messages"]);
    assert_eq!(result["session_id"], session.as_str(), "same session");
    assert_eq!(result["result"], "you told me: swordfish");
    let requests = ws.mock.requests();
    let history = requests.last().unwrap().body["messages"].to_string();
    assert!(
        history.contains("remember this") && history.contains("swordfish"),
        "the resumed call carries the first process's exchange: {history}"
    );
    ws.verify(&session);
}
