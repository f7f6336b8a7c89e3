//! The cases both official SDKs run against `tascer` (tests/sdk_python.rs
//! and tests/sdk_typescript.rs call them with their SDK): the scenario the
//! mock model plays, the case script's run, and what must hold afterwards
//! — in the files, in what the model was sent, in the frames the SDK
//! yielded and in the ledger, which must verify.

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use super::sdk::{Sdk, Workspace, blocks, of_type, session_of, the_result};

/// Runs `case` with the SDK `find` finds for `test` (a SKIPPED line when it
/// is not installed).
pub fn with(find: fn(&str) -> Option<Sdk>, test: &str, case: fn(&Sdk)) {
    if let Some(sdk) = find(test) {
        case(&sdk);
    }
}

/// `query()` with tools: Write then Read act on a real file.
pub fn query_runs_tools(sdk: &Sdk) {
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
    let out = sdk.run(&ws, "query_tools", &ws.config("write the notes"));
    let messages = &out["messages"];

    assert_eq!(
        std::fs::read_to_string(ws.dir().join("notes.txt")).unwrap(),
        "written through the SDK\n"
    );
    let init = of_type(messages, "system")[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["claude_code_version"], "2.1.332");
    let tool_uses: Vec<&str> = blocks(messages, "assistant")
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(tool_uses, ["Write", "Read"]);
    let results = blocks(messages, "user");
    assert_eq!(results.len(), 2, "{messages:#}");
    assert!(
        results
            .iter()
            .all(|r| r["type"] == "tool_result" && r["is_error"] != true),
        "{results:#?}"
    );
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

/// A PreToolUse hook callback denies a Bash call: it does not run, the
/// model gets the reason, the ledger records the hook run.
pub fn hook_callback_denies(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::new().with_tool_id(
                "toolu_shell",
                "Bash",
                json!({"command": "touch hooked.txt"}),
            ))
            .turn(Turn::text("I will not use the shell."))
    });
    let out = sdk.run(&ws, "hook_deny", &ws.config("touch a file"));
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
    assert_eq!(
        calls[0]["input"]["tool_input"]["command"],
        "touch hooked.txt"
    );

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

/// `can_use_tool` allows a Write with a rewritten input: the rewritten
/// input is what ran, and what the ledger records.
pub fn can_use_tool_rewrites(sdk: &Sdk) {
    let ws = Workspace::new(|dir| {
        let file = dir.join("perm.txt").display().to_string();
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({"file_path": file, "content": "original\n"}),
            ))
            .turn(Turn::text("Written."))
    });
    let out = sdk.run(&ws, "can_use_tool", &ws.config("write perm.txt"));

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
        decisions[0]["updated_input"]["content"], "rewritten by can_use_tool\n",
        "the ledger records the rewritten input"
    );
    ws.verify(&session);
}

/// An in-process SDK MCP tool (`create_sdk_mcp_server` /
/// `createSdkMcpServer`) is listed and called through `mcp_message`.
pub fn sdk_mcp_tool(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("mcp__calc__add", json!({"a": 2, "b": 3})))
            .turn(Turn::text("2 + 3 = 5"))
    });
    let out = sdk.run(&ws, "sdk_mcp", &ws.config("add two numbers"));

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

    let session = session_of(&out["messages"]);
    let tools: Vec<Value> = ws
        .ledger(&session, "tool_record")
        .iter()
        .map(|r| r["tool"].clone())
        .collect();
    assert_eq!(tools, [json!("mcp__calc__add")]);
    ws.verify(&session);
}

/// `interrupt` during a 30 s command ends the turn; the next prompt runs
/// in the same session.
pub fn interrupt(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "sleep 30"})))
            .turn(Turn::text("Answered after the interrupt."))
    });
    let started = std::time::Instant::now();
    let out = sdk.run(&ws, "interrupt", &ws.config("sleep a while"));
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

/// Four prompts in one session (`ClaudeSDKClient` / streaming input): each
/// turn starts with `system/init` and ends with one result, the history
/// carries over, `set_permission_mode` / `set_model` before the fourth
/// take effect, and the `initialize` agents are the session's.
pub fn multi_turn(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("first answer"))
            .turn(Turn::text("second answer"))
            .turn(Turn::text("third answer"))
            .turn(Turn::text("fourth answer"))
    });
    let out = sdk.run(&ws, "multi_turn", &ws.config("first question"));
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
        let inits = of_type(turn, "system")
            .into_iter()
            .filter(|m| m["subtype"] == "init")
            .count();
        assert_eq!(inits, 1, "each turn has one system/init: {turn:#}");
    }
    let status: Vec<&Value> = turns
        .iter()
        .flat_map(|t| of_type(t, "system"))
        .filter(|m| m["subtype"] == "status")
        .collect();
    assert!(
        status.iter().any(|m| m["permissionMode"] == "acceptEdits"),
        "set_permission_mode is reported: {status:#?}"
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
    assert!(info["pid"].as_u64().is_some(), "{info:#}");
    assert!(
        info["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "reviewer" && a["description"] == "Reviews code"),
        "the initialize agents are the session's: {info:#}"
    );
    let init = of_type(&turns[0], "system")
        .into_iter()
        .find(|m| m["subtype"] == "init")
        .unwrap();
    assert!(
        init["agents"]
            .as_array()
            .unwrap()
            .contains(&json!("reviewer")),
        "{init:#}"
    );
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

/// A second process resumes the first one's session (`resume`): same
/// session id, and the model gets the first exchange.
pub fn resume(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("the password is swordfish"))
            .turn(Turn::text("you told me: swordfish"))
    });
    let first = sdk.run(&ws, "query_tools", &ws.config("remember this"));
    let session = session_of(&first["messages"]);

    let mut config = ws.config("what was the password?");
    config["resume"] = json!(session);
    let second = sdk.run(&ws, "query_tools", &config);
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

/// An MCP server (`tascer mcp serve --conformance`, over HTTP) asks the
/// user for input mid-call; the SDK host's Elicitation hook callback
/// answers, and the answer reaches the server and, in its tool result, the
/// model.
pub fn elicitation_answered_by_a_hook_callback(sdk: &Sdk) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(tascer::mcp::HttpServer::bind(
            tascer::mcp::conformance_spec("0.0.0-test"),
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ))
        .unwrap();
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool(
                "mcp__conf__test_elicitation",
                json!({"message": "Who are you?"}),
            ))
            .turn(Turn::text("Thanks."))
    });
    let mut config = ws.config("ask me");
    config["mcp_url"] = json!(server.url());
    let out = sdk.run(&ws, "elicitation", &config);

    let seen = out["elicitations"].as_array().unwrap();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(seen[0]["hook_event_name"], "Elicitation");
    assert_eq!(seen[0]["mcp_server_name"], "conf");
    assert_eq!(seen[0]["message"], "Who are you?");
    assert_eq!(seen[0]["mode"], "form");
    assert_eq!(
        seen[0]["requested_schema"]["required"],
        json!(["username", "email"])
    );
    let sent = ws.tool_results_sent();
    assert!(
        sent.iter().any(|(text, error)| !*error
            && text.contains("action=accept")
            && text.contains("sdk-user")
            && text.contains("sdk@example.com")),
        "the answer reaches the server and the model: {sent:?}"
    );
    let session = session_of(&out["messages"]);
    let hooks = ws.ledger(&session, "hook_execution");
    assert!(
        hooks.iter().any(|h| h["event"] == "Elicitation"),
        "the hook run is in the ledger: {hooks:#?}"
    );
    ws.verify(&session);
    server.shutdown();
}

/// An MCP server asks (`tascer mcp serve --conformance`'s
/// `test_elicitation`); an Elicitation hook callback that does not answer
/// sees the question first, then the SDK host's `onElicitation` (an
/// `elicitation` control request) answers `answer` (accept or decline),
/// and the outcome reaches the server and, in its tool result, the model.
/// With `override_answer`, an ElicitationResult hook callback sees the
/// host's answer and replaces it.
pub fn elicitation_answered_by_the_host(sdk: &Sdk, answer: &str, override_answer: bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(tascer::mcp::HttpServer::bind(
            tascer::mcp::conformance_spec("0.0.0-test"),
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ))
        .unwrap();
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool(
                "mcp__conf__test_elicitation",
                json!({"message": "Who are you?"}),
            ))
            .turn(Turn::text("Thanks."))
    });
    let mut config = ws.config("ask me");
    config["mcp_url"] = json!(server.url());
    config["answer"] = json!(answer);
    config["override"] = json!(override_answer);
    let out = sdk.run(&ws, "on_elicitation", &config);

    let events = out["events"].as_array().unwrap();
    assert_eq!(
        events.len(),
        2 + usize::from(override_answer),
        "{events:#?}"
    );
    assert_eq!(events[0]["by"], "hook", "hooks are asked first");
    assert_eq!(events[0]["hook_event_name"], "Elicitation");
    assert_eq!(events[1]["by"], "onElicitation");
    assert_eq!(events[1]["serverName"], "conf");
    assert_eq!(events[1]["message"], "Who are you?");
    assert_eq!(events[1]["mode"], "form");
    assert_eq!(
        events[1]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    if override_answer {
        assert_eq!(events[2]["by"], "result hook");
        assert_eq!(events[2]["hook_event_name"], "ElicitationResult");
        assert_eq!(events[2]["mcp_server_name"], "conf");
        assert_eq!(
            events[2]["action"], answer,
            "the hook sees the host's answer"
        );
    }
    let sent = ws.tool_results_sent();
    let expected: &[&str] = if override_answer {
        &["action=accept", "hook-user", "hook@example.com"]
    } else if answer == "accept" {
        &["action=accept", "ts-user", "ts@example.com"]
    } else {
        &["action=decline"]
    };
    assert!(
        sent.iter()
            .any(|(text, error)| !*error && expected.iter().all(|e| text.contains(e))),
        "the host's answer reaches the server and the model: {sent:?}"
    );
    let session = session_of(&out["messages"]);
    let hooks = ws.ledger(&session, "hook_execution");
    for event in ["Elicitation", "ElicitationResult"]
        .iter()
        .take(1 + usize::from(override_answer))
    {
        assert!(
            hooks.iter().any(|h| h["event"] == *event),
            "the {event} hook run is in the ledger: {hooks:#?}"
        );
    }
    ws.verify(&session);
    server.shutdown();
}

/// A background shell through the SDK: announced with a typed
/// `TaskStartedMessage`, stopped with the SDK's `stop_task`, and its end
/// reported with a typed `TaskNotificationMessage` saying `stopped`.
pub fn background_task(sdk: &Sdk) {
    let command = "printf 'tick\\n'; sleep 120";
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::new().with_tool_id(
                "toolu_bg",
                "Bash",
                json!({"command": command, "run_in_background": true}),
            ))
            .turn(Turn::text("started in the background"))
    });
    let out = sdk.run(&ws, "background_task", &ws.config("start it"));
    let seen = out["seen"].as_array().unwrap();
    let of = |class: &str| {
        seen.iter()
            .find(|s| s["class"] == class)
            .map(|s| &s["message"])
            .unwrap_or_else(|| panic!("no {class} in {seen:?}"))
    };
    let started = of("TaskStartedMessage");
    assert_eq!(started["tool_use_id"], "toolu_bg");
    assert_eq!(started["description"], command);
    assert_eq!(started["task_type"], "local_bash");
    let ended = of("TaskNotificationMessage");
    assert_eq!(ended["task_id"], started["task_id"]);
    assert_eq!(ended["status"], "stopped");
    assert_eq!(
        ended["summary"],
        format!("Background command \"{command}\" was stopped")
    );
}
