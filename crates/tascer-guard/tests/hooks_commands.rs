//! Command hooks: the exit-code contract per event, JSON and plain
//! stdout, garbage, timeouts, fail-open vs fail-closed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tascer_guard::hooks::*;

fn common(dir: &Path) -> HookCommon {
    HookCommon {
        session_id: "sess-1".into(),
        transcript_path: dir.join("t.jsonl").display().to_string(),
        cwd: dir.display().to_string(),
        permission_mode: None,
    }
}

fn runner(dir: &Path, hooks: Value) -> HookRunner {
    HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap())
}

/// Settings with one command hook (plus extra entry fields) on `event`.
fn one(event: &str, command: &str, extra: Value) -> Value {
    let mut hook = json!({"type": "command", "command": command});
    for (k, v) in extra.as_object().unwrap() {
        hook[k] = v.clone();
    }
    json!({ event: [{"matcher": "*", "hooks": [hook]}] })
}

fn bash(dir: &Path, command: &str) -> PreToolUseInput {
    PreToolUseInput {
        common: common(dir),
        tool_name: "Bash".into(),
        tool_input: json!({"command": command}),
        tool_use_id: "toolu_01".into(),
        ..Default::default()
    }
}

fn post(dir: &Path) -> PostToolUseInput {
    PostToolUseInput {
        common: common(dir),
        tool_name: "Bash".into(),
        tool_input: json!({"command": "ls"}),
        tool_response: json!({"stdout": "a\n"}),
        tool_use_id: "toolu_01".into(),
        ..Default::default()
    }
}

const EXIT2: &str = "echo 'not allowed here' >&2; echo '{\"decision\":\"approve\"}'; exit 2";

#[tokio::test]
async fn exit_2_pre_tool_use_denies_with_stderr_and_ignores_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(tmp.path(), one("PreToolUse", EXIT2, json!({})));
    let (out, runs) = r.pre_tool_use(bash(tmp.path(), "ls")).await;
    assert_eq!(out.denied(), Some("not allowed here"));
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);
    assert_eq!(runs[0].exit_code, Some(2));
    assert_eq!(runs[0].stderr.as_deref(), Some("not allowed here\n"));
    assert!(runs[0].output.is_none());
}

#[tokio::test]
async fn exit_2_per_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = common(dir);
    let reason = Some("not allowed here".to_string());

    let (o, _) = runner(dir, one("PostToolUse", EXIT2, json!({})))
        .post_tool_use(post(dir))
        .await;
    assert_eq!(o.block_reason, reason);

    let (o, _) = runner(dir, one("PostToolUseFailure", EXIT2, json!({})))
        .post_tool_use_failure(PostToolUseFailureInput {
            common: c.clone(),
            error: "boom".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.block_reason, reason);

    let (o, _) = runner(dir, one("UserPromptSubmit", EXIT2, json!({})))
        .user_prompt_submit(UserPromptSubmitInput {
            common: c.clone(),
            prompt: "hi".into(),
            source: None,
        })
        .await;
    assert_eq!(o.block, reason);

    let (o, _) = runner(dir, one("Stop", EXIT2, json!({})))
        .stop(StopInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.block, reason, "Stop: stderr becomes the continuation");
    assert_eq!(o.common.stop, None);

    let (o, _) = runner(dir, one("SubagentStop", EXIT2, json!({})))
        .subagent_stop(SubagentStopInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.block, reason);

    let (o, _) = runner(dir, one("PreCompact", EXIT2, json!({})))
        .pre_compact(PreCompactInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.block, reason);

    let (o, _) = runner(dir, one("PermissionRequest", EXIT2, json!({})))
        .permission_request(PermissionRequestInput {
            common: c.clone(),
            tool_name: "Bash".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        o.decision,
        Some(PermissionRequestDecision::Deny {
            message: reason.clone(),
            interrupt: None
        })
    );

    // Events that cannot block: stderr is for the user only.
    let (o, runs) = runner(dir, one("SessionStart", EXIT2, json!({})))
        .session_start(SessionStartInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.common.errors, vec!["not allowed here".to_string()]);
    assert!(o.additional_context.is_empty());
    assert_eq!(o.common.stop, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);

    let (o, _) = runner(dir, one("SessionEnd", EXIT2, json!({})))
        .session_end(SessionEndInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.common.errors, vec!["not allowed here".to_string()]);

    let (o, _) = runner(dir, one("Notification", EXIT2, json!({})))
        .notification(NotificationInput {
            common: c,
            message: "m".into(),
            title: None,
            notification_type: "idle_prompt".into(),
        })
        .await;
    assert_eq!(o.common.errors, vec!["not allowed here".to_string()]);
}

#[tokio::test]
async fn exit_2_with_empty_stderr_still_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let r = runner(tmp.path(), one("PreToolUse", "exit 2", json!({})));
    let (out, _) = r.pre_tool_use(bash(tmp.path(), "ls")).await;
    assert!(out.denied().unwrap().contains("Blocked by hook"));
}

#[tokio::test]
async fn other_exit_codes_are_non_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo 'first line' >&2; echo second >&2; exit 1"},
        {"type": "command", "command": "definitely-not-a-command-xyz"},
        {"type": "command", "command": "touch ran.txt"}
    ]}]});
    let (out, runs) = runner(dir, hooks).pre_tool_use(bash(dir, "ls")).await;
    assert_eq!(out.decision, None);
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].exit_code, Some(1));
    assert_eq!(runs[0].outcome, HookRunOutcome::Error);
    assert_eq!(runs[1].exit_code, Some(127));
    assert_eq!(runs[1].outcome, HookRunOutcome::Error);
    assert_eq!(runs[2].outcome, HookRunOutcome::Success);
    assert!(dir.join("ran.txt").exists(), "the session went on");
    assert_eq!(out.common.errors.len(), 2);
    assert!(
        out.common.errors[0].contains("Failed with non-blocking status code 1: first line"),
        "{:?}",
        out.common.errors
    );
    assert!(
        !out.common.errors[0].contains('\n'),
        "first stderr line only"
    );
}

#[tokio::test]
async fn json_stdout_is_parsed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cmd = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check this","updatedInput":{"command":"ls -a"},"additionalContext":"ctx"},"systemMessage":"hello user","unknownField":[1,2]}'"#;
    let (out, runs) = runner(dir, one("PreToolUse", cmd, json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Ask {
            reason: Some("check this".into())
        })
    );
    assert_eq!(out.updated_input, Some(json!({"command": "ls -a"})));
    assert_eq!(out.additional_context, vec!["ctx".to_string()]);
    assert_eq!(out.common.system_messages, vec!["hello user".to_string()]);
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);
    let parsed = runs[0].output.as_ref().unwrap();
    assert_eq!(parsed.system_message.as_deref(), Some("hello user"));
}

#[tokio::test]
async fn deprecated_top_level_decision_for_pre_tool_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cmd = r#"echo '{"decision":"block","reason":"old style"}'"#;
    let (out, runs) = runner(dir, one("PreToolUse", cmd, json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(out.denied(), Some("old style"));
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);
}

#[tokio::test]
async fn json_block_decisions_per_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = common(dir);
    let cmd = r#"echo '{"decision":"block","reason":"keep going: tests fail"}'"#;
    let reason = Some("keep going: tests fail".to_string());
    let (o, _) = runner(dir, one("Stop", cmd, json!({})))
        .stop(StopInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.block, reason);
    let (o, _) = runner(dir, one("PostToolUse", cmd, json!({})))
        .post_tool_use(post(dir))
        .await;
    assert_eq!(o.block_reason, reason);
    let (o, _) = runner(dir, one("UserPromptSubmit", cmd, json!({})))
        .user_prompt_submit(UserPromptSubmitInput {
            common: c,
            prompt: "x".into(),
            source: None,
        })
        .await;
    assert_eq!(o.block, reason);
}

#[tokio::test]
async fn permission_request_json_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cmd = r#"echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls -l"}}}}'"#;
    let (o, _) = runner(dir, one("PermissionRequest", cmd, json!({})))
        .permission_request(PermissionRequestInput {
            common: common(dir),
            tool_name: "Bash".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        o.decision,
        Some(PermissionRequestDecision::Allow {
            updated_input: Some(json!({"command": "ls -l"})),
            updated_permissions: None
        })
    );
}

#[tokio::test]
async fn continue_false_stops_and_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cmd = r#"echo '{"continue":false,"stopReason":"budget exhausted","hookSpecificOutput":{"permissionDecision":"allow"}}'"#;
    let (out, runs) = runner(dir, one("PreToolUse", cmd, json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(out.common.stop.as_deref(), Some("budget exhausted"));
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);
}

#[tokio::test]
async fn mismatched_hook_event_name_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cmd = r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'"#;
    let (out, _) = runner(dir, one("PreToolUse", cmd, json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(out.decision, None);
}

#[tokio::test]
async fn plain_stdout_is_context_only_for_prompt_and_session_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = common(dir);
    let (o, _) = runner(
        dir,
        one("UserPromptSubmit", "echo 'Current branch: main'", json!({})),
    )
    .user_prompt_submit(UserPromptSubmitInput {
        common: c.clone(),
        prompt: "x".into(),
        source: None,
    })
    .await;
    assert_eq!(
        o.additional_context,
        vec!["Current branch: main".to_string()]
    );
    assert_eq!(o.block, None);
    let (o, _) = runner(
        dir,
        one("SessionStart", "echo 'Project uses cargo'", json!({})),
    )
    .session_start(SessionStartInput {
        common: c,
        ..Default::default()
    })
    .await;
    assert_eq!(
        join_context(&o.additional_context).as_deref(),
        Some("Project uses cargo")
    );
    let (o, runs) = runner(dir, one("PreToolUse", "echo just logging", json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(o, PreToolUseOutcome::default());
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);
    assert_eq!(runs[0].stdout.as_deref(), Some("just logging\n"));
}

#[tokio::test]
async fn garbage_stdout_is_isolated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo '{\"permissionDecision\": deny oops'"},
        {"type": "command", "command": "head -c 3000000 /dev/urandom"},
        {"type": "command", "command": "echo '{\"hookSpecificOutput\": 42, \"decision\": [1], \"continue\": \"no\"}'"}
    ]}]});
    let (out, runs) = runner(dir, hooks).pre_tool_use(bash(dir, "ls")).await;
    assert_eq!(out.decision, None);
    assert_eq!(out.common.stop, None);
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].outcome, HookRunOutcome::Error);
    assert!(runs[0].error.as_deref().unwrap().contains("not valid JSON"));
    assert!(runs[0].stdout.as_deref().unwrap().contains("deny oops"));
    assert_ne!(runs[1].outcome, HookRunOutcome::Timeout);
    assert!(runs[1].stdout.as_ref().unwrap().len() <= 4 * 1024 * 1024);
    assert_eq!(
        runs[2].outcome,
        HookRunOutcome::Success,
        "wrong field types are ignored"
    );
}

#[tokio::test]
async fn garbage_stdout_fail_closed_denies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let r = runner(
        dir,
        one("PreToolUse", "echo '{oops'", json!({"failClosed": true})),
    );
    let (out, runs) = r.pre_tool_use(bash(dir, "ls")).await;
    assert!(out.denied().unwrap().contains("fail-closed"), "{out:?}");
    assert!(runs[0].fail_closed);
}

#[tokio::test]
async fn timeout_kills_the_process_group_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "sleep 30 & echo $! > child.pid; wait", "timeout": 1},
        {"type": "command", "command": "touch after.txt"}
    ]}]});
    let started = Instant::now();
    let (out, runs) = runner(dir, hooks).pre_tool_use(bash(dir, "ls")).await;
    assert!(
        started.elapsed() < Duration::from_secs(29),
        "returned before the sleep ended"
    );
    assert_eq!(out.decision, None, "fail-open: no decision");
    assert_eq!(runs[0].outcome, HookRunOutcome::Timeout);
    assert_eq!(runs[0].exit_code, None);
    assert_eq!(runs[1].outcome, HookRunOutcome::Success);
    assert!(dir.join("after.txt").exists());
    assert_eq!(out.common.errors.len(), 1);
    // The backgrounded grandchild was killed with the group.
    let pid = std::fs::read_to_string(dir.join("child.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let mut alive = true;
    for _ in 0..50 {
        match std::fs::read_to_string(&stat) {
            Err(_) => alive = false,
            Ok(s) if s.contains(") Z ") => alive = false,
            Ok(_) => {}
        }
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive, "sleep child still running");
}

#[tokio::test]
async fn timeout_fail_closed_denies_pre_tool_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let r = runner(
        dir,
        one(
            "PreToolUse",
            "sleep 30",
            json!({"timeout": 1, "failClosed": true}),
        ),
    );
    let (out, runs) = r.pre_tool_use(bash(dir, "ls")).await;
    assert!(out.denied().unwrap().contains("timed out"), "{out:?}");
    assert_eq!(runs[0].outcome, HookRunOutcome::Timeout);
}

#[tokio::test]
async fn fail_closed_per_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = common(dir);
    let closed = json!({"failClosed": true});
    let (o, _) = runner(dir, one("PermissionRequest", "exit 1", closed.clone()))
        .permission_request(PermissionRequestInput {
            common: c.clone(),
            tool_name: "Bash".into(),
            ..Default::default()
        })
        .await;
    assert!(matches!(
        o.decision,
        Some(PermissionRequestDecision::Deny { .. })
    ));
    let (o, _) = runner(dir, one("UserPromptSubmit", "exit 1", closed.clone()))
        .user_prompt_submit(UserPromptSubmitInput {
            common: c.clone(),
            prompt: "x".into(),
            source: None,
        })
        .await;
    assert!(o.block.is_some());
    let (o, _) = runner(dir, one("PostToolUse", "exit 1", closed.clone()))
        .post_tool_use(post(dir))
        .await;
    assert!(o.block_reason.is_some());
    let (o, _) = runner(dir, one("Stop", "exit 1", closed.clone()))
        .stop(StopInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        o.block, None,
        "a failing Stop hook never forces a continuation"
    );
    assert!(o.common.stop.is_some());
    let (o, _) = runner(dir, one("SessionStart", "exit 1", closed.clone()))
        .session_start(SessionStartInput {
            common: c.clone(),
            ..Default::default()
        })
        .await;
    assert!(o.common.stop.is_some());
    let (o, _) = runner(dir, one("Notification", "exit 1", closed.clone()))
        .notification(NotificationInput {
            common: c.clone(),
            notification_type: "idle_prompt".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(o.common.stop, None);
    assert_eq!(o.common.errors.len(), 1);
    // Claude Code's `onFailure: "block"` is the same as `failClosed`.
    let (o, _) = runner(
        dir,
        one("PreToolUse", "exit 1", json!({"onFailure": "block"})),
    )
    .pre_tool_use(bash(dir, "ls"))
    .await;
    assert!(o.denied().is_some());
    // Fail-open (default): same failure, no decision.
    let (o, _) = runner(dir, one("PreToolUse", "exit 1", json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(o.decision, None);
}

#[tokio::test]
async fn killed_by_signal_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (o, runs) = runner(dir, one("PreToolUse", "kill -9 $$", json!({})))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    assert_eq!(o.decision, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Error);
    assert_eq!(runs[0].exit_code, None);
    assert!(runs[0].error.as_deref().unwrap().contains("signal 9"));
}

#[tokio::test]
async fn hook_that_ignores_large_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let big = "x".repeat(2 * 1024 * 1024);
    let (o, runs) = runner(dir, one("PreToolUse", "exit 0", json!({})))
        .pre_tool_use(bash(dir, &big))
        .await;
    assert_eq!(o.decision, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);
}

#[tokio::test]
async fn background_child_holding_stdout_does_not_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let r = runner(
        dir,
        one(
            "PreToolUse",
            "sleep 3 & echo started",
            json!({"timeout": 1}),
        ),
    );
    let (o, runs) = r.pre_tool_use(bash(dir, "ls")).await;
    assert_eq!(o.decision, None);
    assert_eq!(runs[0].exit_code, Some(0));
    assert_eq!(runs[0].stdout.as_deref(), Some("started\n"));
}

#[tokio::test]
async fn run_record_serializes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = runner(dir, json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]}))
        .pre_tool_use(bash(dir, "ls"))
        .await;
    let v = serde_json::to_value(&runs[0]).unwrap();
    assert_eq!(v["hook_name"], "exit 2");
    assert_eq!(v["event"], "PreToolUse");
    assert_eq!(v["matcher"], "Bash");
    assert_eq!(v["kind"], "command");
    assert_eq!(v["outcome"], "blocked");
    assert_eq!(v["exit_code"], 2);
    assert_eq!(v["input"]["tool_name"], "Bash");
    assert!(v["duration_ms"].is_u64());
}
