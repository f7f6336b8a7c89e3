//! Every event fires its command hooks with exactly Claude Code's input
//! JSON on stdin, in the project dir, with the project env vars.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use tascer_guard::hooks::*;

fn common(dir: &Path) -> HookCommon {
    HookCommon {
        session_id: "sess-1".into(),
        transcript_path: dir.join("t.jsonl").display().to_string(),
        cwd: dir.display().to_string(),
        permission_mode: Some("default".into()),
    }
}

/// A runner whose only hook for `event` copies stdin to `in.json`.
fn capturing(dir: &Path, event: &str) -> HookRunner {
    let hooks = json!({ event: [{ "hooks": [
        { "type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/in.json\"" }
    ]}]});
    HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap())
}

fn captured(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("in.json")).unwrap()).unwrap()
}

fn base(dir: &Path, event: &str) -> Value {
    json!({
        "session_id": "sess-1",
        "transcript_path": dir.join("t.jsonl").display().to_string(),
        "cwd": dir.display().to_string(),
        "permission_mode": "default",
        "hook_event_name": event,
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn assert_one_success(runs: &[HookRun]) {
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].outcome, HookRunOutcome::Success, "{runs:?}");
    assert_eq!(runs[0].kind, HookKind::Command);
    assert_eq!(runs[0].exit_code, Some(0));
}

#[tokio::test]
async fn pre_tool_use_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (out, runs) = capturing(dir, "PreToolUse")
        .pre_tool_use(PreToolUseInput {
            common: common(dir),
            tool_name: "Bash".into(),
            tool_input: json!({"command": "ls -la", "description": "List"}),
            tool_use_id: "toolu_01".into(),
            ..Default::default()
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(out, PreToolUseOutcome::default());
    let expected = with(
        base(dir, "PreToolUse"),
        json!({"tool_name": "Bash", "tool_input": {"command": "ls -la", "description": "List"}, "tool_use_id": "toolu_01"}),
    );
    assert_eq!(captured(dir), expected);
    assert_eq!(runs[0].input, expected);
}

#[tokio::test]
async fn post_tool_use_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "PostToolUse")
        .post_tool_use(PostToolUseInput {
            common: common(dir),
            tool_name: "Write".into(),
            tool_input: json!({"file_path": "/a", "content": "x"}),
            tool_response: json!({"type": "create", "filePath": "/a"}),
            tool_use_id: "toolu_02".into(),
            duration_ms: Some(12),
            ..Default::default()
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "PostToolUse"),
            json!({"tool_name": "Write", "tool_input": {"file_path": "/a", "content": "x"},
                   "tool_response": {"type": "create", "filePath": "/a"}, "tool_use_id": "toolu_02",
                   "duration_ms": 12})
        )
    );
}

#[tokio::test]
async fn post_tool_use_failure_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "PostToolUseFailure")
        .post_tool_use_failure(PostToolUseFailureInput {
            common: common(dir),
            tool_name: "Bash".into(),
            tool_input: json!({"command": "false"}),
            tool_use_id: "toolu_03".into(),
            error: "Exit code 1".into(),
            is_interrupt: Some(false),
            ..Default::default()
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "PostToolUseFailure"),
            json!({"tool_name": "Bash", "tool_input": {"command": "false"}, "tool_use_id": "toolu_03",
                   "error": "Exit code 1", "is_interrupt": false})
        )
    );
}

#[tokio::test]
async fn user_prompt_submit_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "UserPromptSubmit")
        .user_prompt_submit(UserPromptSubmitInput {
            common: common(dir),
            prompt: "fix the \"bug\"\nplease".into(),
            source: None,
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "UserPromptSubmit"),
            json!({"prompt": "fix the \"bug\"\nplease"})
        )
    );
}

#[tokio::test]
async fn stop_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (out, runs) = capturing(dir, "Stop")
        .stop(StopInput {
            common: common(dir),
            stop_hook_active: true,
            last_assistant_message: None,
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(out.block, None);
    assert_eq!(
        captured(dir),
        with(base(dir, "Stop"), json!({"stop_hook_active": true}))
    );
}

#[tokio::test]
async fn subagent_stop_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "SubagentStop")
        .subagent_stop(SubagentStopInput {
            common: common(dir),
            stop_hook_active: false,
            agent_id: "agent-7".into(),
            agent_transcript_path: "/tmp/agent-7.jsonl".into(),
            agent_type: "Explore".into(),
            last_assistant_message: Some("done".into()),
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "SubagentStop"),
            json!({"stop_hook_active": false, "agent_id": "agent-7",
                   "agent_transcript_path": "/tmp/agent-7.jsonl", "agent_type": "Explore",
                   "last_assistant_message": "done"})
        )
    );
}

#[tokio::test]
async fn pre_compact_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "PreCompact")
        .pre_compact(PreCompactInput {
            common: common(dir),
            trigger: CompactTrigger::Auto,
            custom_instructions: None,
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "PreCompact"),
            json!({"trigger": "auto", "custom_instructions": null})
        )
    );
}

#[tokio::test]
async fn session_start_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "SessionStart")
        .session_start(SessionStartInput {
            common: common(dir),
            source: SessionStartSource::Resume,
            model: Some("claude-sonnet-4-5".into()),
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "SessionStart"),
            json!({"source": "resume", "model": "claude-sonnet-4-5"})
        )
    );
}

#[tokio::test]
async fn session_end_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "SessionEnd")
        .session_end(SessionEndInput {
            common: common(dir),
            reason: SessionEndReason::PromptInputExit,
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "SessionEnd"),
            json!({"reason": "prompt_input_exit"})
        )
    );
}

#[tokio::test]
async fn notification_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (_, runs) = capturing(dir, "Notification")
        .notification(NotificationInput {
            common: common(dir),
            message: "Claude needs your permission to use Bash".into(),
            title: None,
            notification_type: "permission_prompt".into(),
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "Notification"),
            json!({"message": "Claude needs your permission to use Bash",
                   "notification_type": "permission_prompt"})
        )
    );
}

#[tokio::test]
async fn permission_request_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let suggestion = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}],
                            "behavior": "allow", "destination": "localSettings"});
    let (out, runs) = capturing(dir, "PermissionRequest")
        .permission_request(PermissionRequestInput {
            common: common(dir),
            tool_name: "Bash".into(),
            tool_input: json!({"command": "ls"}),
            permission_suggestions: Some(vec![suggestion.clone()]),
        })
        .await;
    assert_one_success(&runs);
    assert_eq!(out.decision, None);
    assert_eq!(
        captured(dir),
        with(
            base(dir, "PermissionRequest"),
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"},
                   "permission_suggestions": [suggestion]})
        )
    );
}

#[tokio::test]
async fn environment_and_working_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"SessionStart": [{"hooks": [{"type": "command",
        "command": "printf '%s|%s|%s' \"$CLAUDE_PROJECT_DIR\" \"$TASCER_PROJECT_DIR\" \"$(pwd -P)\" > env.txt"}]}]});
    let runner = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());
    let (_, runs) = runner
        .session_start(SessionStartInput {
            common: common(dir),
            ..Default::default()
        })
        .await;
    assert_one_success(&runs);
    let env = std::fs::read_to_string(dir.join("env.txt")).unwrap();
    let d = dir.display().to_string();
    let real = dir.canonicalize().unwrap().display().to_string();
    assert_eq!(env, format!("{d}|{d}|{real}"));
}

#[test]
fn hook_input_round_trips() {
    let input: HookInput = serde_json::from_value(json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/w",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_use_id": "toolu_01"
    }))
    .unwrap();
    assert_eq!(input.event(), HookEvent::PreToolUse);
    assert_eq!(input.matcher_subject().as_deref(), Some("Bash"));
    assert_eq!(input.common().permission_mode, None);
    let back = input.to_value();
    assert_eq!(back["hook_event_name"], "PreToolUse");
    assert!(back.get("permission_mode").is_none());
    for e in HookEvent::ALL {
        assert_eq!(e.as_str().parse::<HookEvent>().unwrap(), e);
        assert_eq!(serde_json::to_value(e).unwrap(), json!(e.as_str()));
    }
    assert!("Nope".parse::<HookEvent>().is_err());
}
