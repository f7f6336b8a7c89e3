//! The control-protocol mode's edge cases, driven line by line over real
//! pipes (no SDK): the version probe, unknown flags, unparsable input,
//! control requests before / after `initialize`, unknown subtypes, end of
//! input with a request pending, startup failures, the session flags
//! (`--resume`, `--fork-session`, `--session-id`), and the audit rows of
//! the `can_use_tool` callback's and hook callbacks' decisions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::protocol::{Session, request};
use common::sdk::Workspace;
use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

fn text_scenario(answer: &'static str) -> impl FnOnce(&std::path::Path) -> Scenario {
    move |_| Scenario::new().turn(Turn::text(answer))
}

#[test]
fn the_version_probe_answers_like_claude_code() {
    for flag in ["-v", "--version"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tascer"))
            .arg(flag)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success());
        assert!(
            text.starts_with("2.1.332 (Claude Code compatible; tascer "),
            "{text}"
        );
    }
}

#[test]
fn unknown_flags_warn_on_stderr_and_stdout_stays_json() {
    let ws = Workspace::new(text_scenario("hello"));
    let mut cli = Session::start(
        &ws,
        &["--frobnicate", "3", "--shiny=yes", "--effort", "high"],
    );
    let init = cli.initialize(json!({}));
    assert_eq!(init["subtype"], "success");
    cli.prompt("say hello");
    let (status, frames, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
    let results: Vec<&Value> = frames.iter().filter(|f| f["type"] == "result").collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["result"], "hello");
    assert!(
        stderr.contains("warning: ignoring unknown option --frobnicate 3")
            && stderr.contains("warning: ignoring unknown option --shiny")
            && stderr.contains("warning: ignoring --effort"),
        "{stderr}"
    );
}

#[test]
fn an_unparsable_line_ends_the_session_with_exit_1() {
    let ws = Workspace::new(text_scenario("unused"));
    let mut cli = Session::start(&ws, &[]);
    cli.initialize(json!({}));
    cli.send_raw("{oops");
    let (status, _, stderr) = cli.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("Error parsing streaming input line: {oops"),
        "{stderr}"
    );

    let mut cli = Session::start(&ws, &[]);
    cli.initialize(json!({}));
    cli.send(json!({"type": "user", "message": {"role": "assistant", "content": "x"}}));
    let (status, _, stderr) = cli.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("Error: Expected message role 'user', got 'assistant'"),
        "{stderr}"
    );
}

#[test]
fn control_requests_get_an_answer_or_the_reference_error() {
    let ws = Workspace::new(text_scenario("unused"));
    let mut cli = Session::start(&ws, &[]);
    cli.send(request("early", json!({"subtype": "mcp_status"})));
    let early = cli.reply_to("early");
    assert_eq!(early["subtype"], "error");
    assert!(
        early["error"].as_str().unwrap().contains("Not initialized"),
        "{early}"
    );

    let init = cli.initialize(json!({}));
    assert_eq!(init["subtype"], "success");
    let body = &init["response"];
    assert_eq!(body["hook_on_failure_supported"], true);
    assert!(body["pid"].as_u64().is_some());

    cli.send(request(
        "again",
        json!({"subtype": "initialize", "hooks": null}),
    ));
    assert_eq!(cli.reply_to("again")["error"], "Already initialized");
    cli.send(request("odd", json!({"subtype": "telepathy"})));
    assert_eq!(
        cli.reply_to("odd")["error"],
        "Unsupported control request subtype: telepathy"
    );
    cli.send(request(
        "rewind",
        json!({"subtype": "rewind_files", "user_message_id": "u"}),
    ));
    // Without CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING, Claude Code's words.
    assert_eq!(
        cli.reply_to("rewind")["error"],
        "File rewinding is not enabled."
    );
    cli.send(request(
        "mode",
        json!({"subtype": "set_permission_mode", "mode": "sideways"}),
    ));
    let mode = cli.reply_to("mode");
    assert_eq!(mode["subtype"], "error");
    assert!(
        mode["error"].as_str().unwrap().contains("acceptEdits"),
        "{mode}"
    );
    cli.send(request(
        "plan",
        json!({"subtype": "set_permission_mode", "mode": "plan"}),
    ));
    assert_eq!(cli.reply_to("plan")["response"], json!({"mode": "plan"}));
    cli.send(request("status", json!({"subtype": "mcp_status"})));
    assert_eq!(
        cli.reply_to("status")["response"],
        json!({"mcpServers": []})
    );
    cli.send(request("stop", json!({"subtype": "interrupt"})));
    assert_eq!(cli.reply_to("stop")["subtype"], "success");
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "no prompt, no error: {stderr}");
}

#[test]
fn mcp_toggle_and_mcp_reconnect_turn_a_server_off_on_and_reconnect_it() {
    let ws = Workspace::new(text_scenario("unused"));
    let config = json!({"mcpServers": {"fixture": {
        "command": env!("CARGO_BIN_EXE_tascer"), "args": ["mcp", "serve", "--conformance"]
    }}})
    .to_string();
    let mut cli = Session::start(&ws, &["--mcp-config", &config]);
    let init = cli.initialize(json!({}));
    assert_eq!(init["subtype"], "success");
    // The server's prompts are among the session's commands.
    let commands = init["response"]["commands"].as_array().unwrap();
    let prompt = commands
        .iter()
        .find(|c| c["name"] == "mcp__fixture__test_prompt_with_arguments")
        .unwrap_or_else(|| panic!("{commands:?}"));
    assert_eq!(prompt["argumentHint"], "<arg1> <arg2>");
    assert_eq!(
        prompt["description"],
        "A prompt with two required arguments (MCP)"
    );
    let status = |cli: &mut Session, id: &str| {
        cli.send(request(id, json!({"subtype": "mcp_status"})));
        cli.reply_to(id)["response"]["mcpServers"][0].clone()
    };
    let before = status(&mut cli, "s1");
    assert_eq!(before["status"], "connected", "{before}");
    assert!(before["tools"].as_array().unwrap().len() > 3, "{before}");

    cli.send(request(
        "off",
        json!({"subtype": "mcp_toggle", "serverName": "fixture", "enabled": false}),
    ));
    assert_eq!(cli.reply_to("off")["subtype"], "success");
    let off = status(&mut cli, "s2");
    assert_eq!(off["status"], "disabled", "{off}");
    assert_eq!(off["tools"], json!([]));
    cli.send(request(
        "again",
        json!({"subtype": "mcp_reconnect", "serverName": "fixture"}),
    ));
    let refused = cli.reply_to("again");
    assert!(
        refused["error"].as_str().unwrap().contains("disabled"),
        "a disabled server is not reconnected: {refused}"
    );

    cli.send(request(
        "on",
        json!({"subtype": "mcp_toggle", "serverName": "fixture", "enabled": true}),
    ));
    assert_eq!(cli.reply_to("on")["subtype"], "success");
    assert_eq!(status(&mut cli, "s3")["status"], "connected");
    cli.send(request(
        "reconnect",
        json!({"subtype": "mcp_reconnect", "serverName": "fixture"}),
    ));
    assert_eq!(cli.reply_to("reconnect")["subtype"], "success");
    assert_eq!(status(&mut cli, "s4")["status"], "connected");

    cli.send(request(
        "ghost",
        json!({"subtype": "mcp_reconnect", "serverName": "ghost"}),
    ));
    let ghost = cli.reply_to("ghost");
    assert!(
        ghost["error"]
            .as_str()
            .unwrap()
            .contains("no MCP server named 'ghost'"),
        "{ghost}"
    );
    cli.send(request(
        "half",
        json!({"subtype": "mcp_toggle", "serverName": "fixture"}),
    ));
    assert!(
        cli.reply_to("half")["error"]
            .as_str()
            .unwrap()
            .contains("enabled"),
    );
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn end_of_input_rejects_a_pending_request_and_the_turn_still_ends() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo ran > ran.txt"})))
            .turn(Turn::text("could not run it"))
    });
    let mut cli = Session::start(&ws, &["--permission-prompt-tool", "stdio"]);
    cli.initialize(json!({}));
    cli.prompt("run a command");
    let asked = cli.until(|f| f["type"] == "control_request");
    assert_eq!(asked["request"]["subtype"], "can_use_tool");
    assert_eq!(asked["request"]["tool_name"], "Bash");
    assert_eq!(asked["request"]["input"]["command"], "echo ran > ran.txt");
    // The SDK goes away without answering.
    let (status, frames, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
    assert!(!ws.dir().join("ran.txt").exists());
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["result"], "could not run it");
    let sent = ws.tool_results_sent();
    assert!(
        sent.iter().any(|(text, error)| *error
            && text.contains("Tool permission stream closed before response received")),
        "{sent:?}"
    );
}

#[test]
fn a_hook_that_blocks_on_failure_denies_when_its_callback_fails() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo ran > ran.txt"})))
            .turn(Turn::text("blocked"))
    });
    let mut cli = Session::start(&ws, &["--permission-mode", "bypassPermissions"]);
    let init = cli.initialize(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hookCallbackIds": ["hook_0"], "onFailure": "block"}
    ]}}));
    assert_eq!(init["subtype"], "success");
    cli.prompt("run a command");
    let call = cli.until(|f| f["type"] == "control_request");
    assert_eq!(call["request"]["subtype"], "hook_callback");
    assert_eq!(call["request"]["callback_id"], "hook_0");
    assert_eq!(call["request"]["input"]["hook_event_name"], "PreToolUse");
    let id = call["request_id"].as_str().unwrap().to_string();
    cli.send(json!({"type": "control_response",
                    "response": {"subtype": "error", "request_id": id, "error": "callback crashed"}}));
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["result"], "blocked");
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        !ws.dir().join("ran.txt").exists(),
        "a failed fail-closed hook denies the call"
    );
    let sent = ws.tool_results_sent();
    assert!(
        sent.iter()
            .any(|(text, error)| *error && text.contains("callback crashed")),
        "{sent:?}"
    );
}

#[test]
fn a_refused_resume_is_a_startup_failure_result() {
    let ws = Workspace::new(text_scenario("unused"));
    let missing = "3f0b7a52-9a3c-4c39-8a43-3c4f0d0c2f11";
    let mut cli = Session::start(&ws, &[&format!("--resume={missing}")]);
    cli.send(request(
        "req_1",
        json!({"subtype": "initialize", "hooks": null}),
    ));
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["errors"][0],
        format!("No conversation found with session ID: {missing}")
    );
    let (status, rest, _) = cli.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        rest.iter().all(|f| f["type"] != "control_response"),
        "initialize stays unanswered, as with Claude Code"
    );
}

#[test]
fn a_bad_initialize_is_an_error_response() {
    let ws = Workspace::new(text_scenario("unused"));
    let mut cli = Session::start(&ws, &[]);
    let init = cli.initialize(json!({"hooks": {"PreToolUse": [
        {"matcher": "(", "hookCallbackIds": ["hook_0"]}
    ]}}));
    assert_eq!(init["subtype"], "error");
    assert!(
        init["error"].as_str().unwrap().contains("invalid matcher"),
        "{init}"
    );
    let (status, _, _) = cli.finish();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn a_prompt_before_initialize_runs_with_the_command_line_options() {
    let ws = Workspace::new(text_scenario("no handshake needed"));
    let mut cli = Session::start(&ws, &[]);
    cli.prompt("hello");
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["result"], "no handshake needed");
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn resume_fork_session_and_session_id_work_through_the_store() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("first"))
            .turn(Turn::text("second"))
            .turn(Turn::text("third"))
    });
    let first_id = "0d4c9ba1-0a3e-4d3c-9d47-6e1e8e0a7a01";
    let mut cli = Session::start(&ws, &[&format!("--session-id={first_id}")]);
    cli.initialize(json!({}));
    cli.prompt("remember the word kumquat");
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["session_id"], first_id);
    assert!(cli.finish().0.success());

    // Fork into a named new session: the history comes along.
    let fork_id = "7c2e2d8e-5b7a-4a8e-b2f1-1e9a4f7d2b02";
    let mut cli = Session::start(
        &ws,
        &[
            &format!("--resume={first_id}"),
            "--fork-session",
            &format!("--session-id={fork_id}"),
        ],
    );
    cli.initialize(json!({}));
    cli.prompt("which word?");
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["session_id"], fork_id);
    assert_eq!(result["result"], "second");
    assert!(cli.finish().0.success());
    let history = ws.mock.requests()[1].body["messages"].to_string();
    assert!(history.contains("kumquat"), "{history}");

    // --continue takes the latest session of the directory: the fork.
    let mut cli = Session::start(&ws, &["--continue"]);
    cli.initialize(json!({}));
    cli.prompt("and now?");
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["session_id"], fork_id);
    assert_eq!(result["result"], "third");
    assert!(cli.finish().0.success());

    // --session-id with --resume but without --fork-session is refused.
    let mut cli = Session::start(
        &ws,
        &[
            &format!("--resume={first_id}"),
            &format!("--session-id={fork_id}"),
        ],
    );
    cli.send(request(
        "req_1",
        json!({"subtype": "initialize", "hooks": null}),
    ));
    let refused = cli.until(|f| f["type"] == "result");
    assert!(
        refused["errors"][0]
            .as_str()
            .unwrap()
            .contains("requires --fork-session"),
        "{refused}"
    );
    assert_eq!(cli.finish().0.code(), Some(1));
}

#[test]
fn hook_callbacks_fire_for_session_prompt_tool_and_stop_events() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
            .turn(Turn::text("done"))
    });
    let mut cli = Session::start(&ws, &["--permission-mode", "bypassPermissions"]);
    let hooks = json!({
        "SessionStart": [{"hookCallbackIds": ["start"]}],
        "UserPromptSubmit": [{"hookCallbackIds": ["prompt"]}],
        "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["pre"]}],
        "PostToolUse": [{"matcher": "Bash", "hookCallbackIds": ["post"]}],
        "Stop": [{"hookCallbackIds": ["stop"]}],
        "TeammateIdle": [{"hookCallbackIds": ["never"]}]
    });
    cli.send(request(
        "req_1_init",
        json!({"subtype": "initialize", "hooks": hooks}),
    ));
    // Answers every hook callback (UserPromptSubmit adds context) until
    // `until` accepts a frame; returns the callback ids in order.
    let mut seen = Vec::new();
    let mut answer_until = |cli: &mut Session, until: &dyn Fn(&Value) -> bool| loop {
        let frame = cli.next();
        if frame["type"] == "control_request" {
            let body = &frame["request"];
            assert_eq!(body["subtype"], "hook_callback");
            seen.push((
                body["callback_id"].as_str().unwrap().to_string(),
                body["input"]["hook_event_name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ));
            let output = if body["callback_id"] == "prompt" {
                json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": "context from the SDK hook"}})
            } else {
                json!({})
            };
            let id = frame["request_id"].as_str().unwrap();
            cli.send(json!({"type": "control_response",
                            "response": {"subtype": "success", "request_id": id, "response": output}}));
        } else if until(&frame) {
            return frame;
        }
    };
    // SessionStart runs while the session opens, before initialize is answered.
    let init = answer_until(&mut cli, &|f| f["type"] == "control_response");
    assert_eq!(init["response"]["subtype"], "success");
    cli.prompt("greet");
    let result = answer_until(&mut cli, &|f| f["type"] == "result");
    assert_eq!(result["result"], "done");
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("Tascer does not fire TeammateIdle"),
        "{stderr}"
    );
    let seen: Vec<(&str, &str)> = seen
        .iter()
        .map(|(id, event)| (id.as_str(), event.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("start", "SessionStart"),
            ("prompt", "UserPromptSubmit"),
            ("pre", "PreToolUse"),
            ("post", "PostToolUse"),
            ("stop", "Stop"),
        ]
    );
    let first_call = ws.mock.requests()[0].body["messages"].to_string();
    assert!(
        first_call.contains("context from the SDK hook"),
        "the hook's additionalContext reaches the model: {first_call}"
    );
}

#[test]
fn the_callback_and_hook_callbacks_decisions_are_audit_rows_naming_them() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo one > one.txt"})))
            .turn(Turn::tool("Bash", json!({"command": "echo two > two.txt"})))
            .turn(Turn::tool(
                "Bash",
                json!({"command": "echo three > three.txt"}),
            ))
            .turn(Turn::text("done"))
    });
    let mut cli = Session::start(&ws, &["--permission-prompt-tool", "stdio"]);
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["gatekeeper"]}]});
    cli.send(request(
        "req_1_init",
        json!({"subtype": "initialize", "hooks": hooks}),
    ));
    cli.reply_to("req_1_init");
    cli.prompt("write three files");
    // The hook has no opinion on the first two calls, which the callback
    // allows and denies; it denies the third itself.
    let result = loop {
        let frame = cli.next();
        if frame["type"] == "result" {
            break frame;
        }
        if frame["type"] != "control_request" {
            continue;
        }
        let body = &frame["request"];
        let command = body["input"]["tool_input"]["command"]
            .as_str()
            .or(body["input"]["command"].as_str())
            .unwrap_or_default()
            .to_string();
        let answer = match body["subtype"].as_str() {
            Some("hook_callback") if command.contains("three") => {
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                       "permissionDecision": "deny",
                       "permissionDecisionReason": "the gatekeeper says no"}})
            }
            Some("hook_callback") => json!({}),
            Some("can_use_tool") if command.contains("one") => json!({"behavior": "allow"}),
            Some("can_use_tool") => json!({"behavior": "deny", "message": "not today"}),
            other => panic!("unexpected request {other:?}: {frame}"),
        };
        let id = frame["request_id"].as_str().unwrap();
        cli.send(json!({"type": "control_response",
                        "response": {"subtype": "success", "request_id": id, "response": answer}}));
    };
    assert_eq!(result["result"], "done");
    let session = result["session_id"].as_str().unwrap().to_string();
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
    assert!(ws.dir().join("one.txt").exists());
    assert!(!ws.dir().join("two.txt").exists() && !ws.dir().join("three.txt").exists());

    let out = common::tascer(ws.home.path(), &ws.dir())
        .args(["audit", "query", "--json", "--session", &session])
        .output()
        .unwrap();
    let (stdout, stderr) = common::texts(&out);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    let who: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["decision"].as_str().unwrap(),
                r["decider_kind"].as_str().unwrap(),
                r["decider"].as_str().unwrap_or("-"),
                r["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            (
                "allow",
                "callback",
                "-",
                "allowed by the can_use_tool callback"
            ),
            ("deny", "callback", "-", "not today"),
            (
                "deny",
                "hook",
                "sdk hook_callback gatekeeper",
                "the gatekeeper says no"
            ),
        ],
        "one decision per call, naming who made it"
    );
    // The hook callback ran for every call, and each run is on record.
    let out = common::tascer(ws.home.path(), &ws.dir())
        .args(["report", &session])
        .output()
        .unwrap();
    let (report, _) = common::texts(&out);
    assert_eq!(
        report
            .matches("PreToolUse sdk hook_callback gatekeeper ")
            .count(),
        3,
        "{report}"
    );
}

#[test]
fn betas_reach_anthropic_and_sandbox_settings_tascer_cannot_honour_are_warnings() {
    let ws = Workspace::new(text_scenario("with betas"));
    // What the Python SDK sends for `betas` and `sandbox` (merged into
    // --settings in Claude Code's shape).
    let settings = json!({"sandbox": {
        "enabled": true,
        "autoAllowBashIfSandboxed": true,
        "network": {"allowLocalBinding": true},
    }});
    let mut cli = Session::start(
        &ws,
        &[
            "--betas",
            "context-1m-2025-08-07,interleaved-thinking-2025-05-14",
            "--settings",
            &settings.to_string(),
            "--plugin-dir",
            "/tmp/a-plugin",
        ],
    );
    cli.initialize(json!({}));
    cli.prompt("hello");
    let result = cli.until(|f| f["type"] == "result");
    assert_eq!(result["result"], "with betas");
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");

    let requests = ws.mock.requests();
    assert_eq!(
        requests[0]
            .headers
            .get("anthropic-beta")
            .map(String::as_str),
        Some("context-1m-2025-08-07,interleaved-thinking-2025-05-14")
    );
    for warning in [
        "--settings: sandbox.autoAllowBashIfSandboxed is not honoured by Tascer",
        "--settings: sandbox.network's settings are not honoured by Tascer",
        "plugin inline[0]: the plugin directory /tmp/a-plugin does not exist",
    ] {
        assert!(stderr.contains(warning), "{warning:?} missing:\n{stderr}");
    }
    assert!(!stderr.contains("ignoring --betas"), "{stderr}");
}
