//! Matcher forms, priority order, de-duplication and configuration errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use tascer_guard::hooks::*;

fn common(dir: &Path) -> HookCommon {
    HookCommon {
        session_id: "s".into(),
        transcript_path: "/t.jsonl".into(),
        cwd: dir.display().to_string(),
        permission_mode: None,
    }
}

fn tool(dir: &Path, name: &str) -> PreToolUseInput {
    PreToolUseInput {
        common: common(dir),
        tool_name: name.into(),
        tool_input: json!({}),
        tool_use_id: "toolu_01".into(),
        ..Default::default()
    }
}

/// Names of the hooks that ran.
fn names(runs: &[HookRun]) -> Vec<String> {
    runs.iter().map(|r| r.hook_name.clone()).collect()
}

/// A group per matcher, each with an `echo <label>` hook.
fn groups(event: &str, matchers: &[(Option<&str>, &str)]) -> Value {
    let groups: Vec<Value> = matchers
        .iter()
        .map(|(m, label)| {
            let mut g = json!({"hooks": [{"type": "command", "command": format!("echo {label}")}]});
            if let Some(m) = m {
                g["matcher"] = json!(m);
            }
            g
        })
        .collect();
    json!({ event: groups })
}

#[tokio::test]
async fn tool_matcher_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = groups(
        "PreToolUse",
        &[
            (Some("Bash"), "exact"),
            (Some("Edit|Write"), "list"),
            (Some("mcp__memory__.*"), "regex"),
            (Some("*"), "star"),
            (Some(""), "empty"),
            (None, "omitted"),
            (Some("Bas"), "prefix"),
        ],
    );
    let runner = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());
    let ran = |name: &'static str| {
        let runner = runner.clone();
        async move { names(&runner.pre_tool_use(tool(dir, name)).await.1) }
    };
    let all = ["echo star", "echo empty", "echo omitted"];
    let with = |first: &str| {
        let mut v = vec![first.to_string()];
        v.extend(all.iter().map(|s| s.to_string()));
        v
    };
    assert_eq!(ran("Bash").await, with("echo exact"));
    assert_eq!(ran("Edit").await, with("echo list"));
    assert_eq!(ran("Write").await, with("echo list"));
    assert_eq!(ran("mcp__memory__save").await, with("echo regex"));
    assert_eq!(ran("Read").await, all.to_vec());
    assert_eq!(
        ran("BashOutput").await,
        all.to_vec(),
        "anchored: Bash != BashOutput"
    );
    assert_eq!(
        ran("MultiEdit").await,
        all.to_vec(),
        "anchored: Edit != MultiEdit"
    );
}

#[tokio::test]
async fn matchers_apply_to_source_reason_trigger_and_type() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = common(dir);
    let mut hooks = groups(
        "SessionStart",
        &[
            (Some("startup"), "startup"),
            (Some("resume|clear"), "resume"),
        ],
    );
    hooks["PreCompact"] = groups("PreCompact", &[(Some("auto"), "auto")])["PreCompact"].clone();
    hooks["SessionEnd"] = groups("SessionEnd", &[(Some("logout"), "logout")])["SessionEnd"].clone();
    hooks["Notification"] =
        groups("Notification", &[(Some("idle_prompt"), "idle")])["Notification"].clone();
    hooks["SubagentStop"] =
        groups("SubagentStop", &[(Some("Explore"), "explore")])["SubagentStop"].clone();
    let r = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());

    let start = |source| SessionStartInput {
        common: c.clone(),
        source,
        model: None,
    };
    assert_eq!(
        names(&r.session_start(start(SessionStartSource::Startup)).await.1),
        ["echo startup"]
    );
    assert_eq!(
        names(&r.session_start(start(SessionStartSource::Clear)).await.1),
        ["echo resume"]
    );
    assert!(
        r.session_start(start(SessionStartSource::Compact))
            .await
            .1
            .is_empty()
    );

    let compact = |trigger| PreCompactInput {
        common: c.clone(),
        trigger,
        custom_instructions: None,
    };
    assert_eq!(
        r.pre_compact(compact(CompactTrigger::Auto)).await.1.len(),
        1
    );
    assert!(
        r.pre_compact(compact(CompactTrigger::Manual))
            .await
            .1
            .is_empty()
    );

    let end = |reason| SessionEndInput {
        common: c.clone(),
        reason,
    };
    assert_eq!(
        r.session_end(end(SessionEndReason::Logout)).await.1.len(),
        1
    );
    assert!(
        r.session_end(end(SessionEndReason::Other))
            .await
            .1
            .is_empty()
    );

    let note = |t: &str| NotificationInput {
        common: c.clone(),
        message: "m".into(),
        title: None,
        notification_type: t.into(),
    };
    assert_eq!(r.notification(note("idle_prompt")).await.1.len(), 1);
    assert!(r.notification(note("permission_prompt")).await.1.is_empty());

    let sub = |t: &str| SubagentStopInput {
        common: c.clone(),
        agent_type: t.into(),
        ..Default::default()
    };
    assert_eq!(r.subagent_stop(sub("Explore")).await.1.len(), 1);
    assert!(r.subagent_stop(sub("Plan")).await.1.is_empty());
}

#[tokio::test]
async fn prompt_and_stop_ignore_matchers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut hooks = groups("Stop", &[(Some("Bash"), "stop")]);
    hooks["UserPromptSubmit"] =
        groups("UserPromptSubmit", &[(Some("Nope"), "ups")])["UserPromptSubmit"].clone();
    let r = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());
    let (_, runs) = r
        .stop(StopInput {
            common: common(dir),
            ..Default::default()
        })
        .await;
    assert_eq!(names(&runs), ["echo stop"]);
    let (_, runs) = r
        .user_prompt_submit(UserPromptSubmitInput {
            common: common(dir),
            prompt: "p".into(),
            source: None,
        })
        .await;
    assert_eq!(names(&runs), ["echo ups"]);
}

#[tokio::test]
async fn priority_order_is_ascending_and_stable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo A >> order.txt", "priority": 5},
            {"type": "command", "command": "echo B >> order.txt"},
        ]},
        {"matcher": "*", "hooks": [
            {"type": "command", "command": "echo C >> order.txt", "priority": -1},
            {"type": "command", "command": "echo D >> order.txt", "priority": 0},
            {"type": "command", "command": "echo E >> order.txt", "priority": 5},
        ]}
    ]});
    let r = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());
    let (_, runs) = r.pre_tool_use(tool(dir, "Bash")).await;
    let order = std::fs::read_to_string(dir.join("order.txt")).unwrap();
    assert_eq!(
        order.split_whitespace().collect::<Vec<_>>(),
        ["C", "B", "D", "A", "E"]
    );
    let prios: Vec<i32> = runs.iter().map(|r| r.priority).collect();
    assert_eq!(prios, [-1, 0, 0, 5, 5]);
}

#[tokio::test]
async fn in_process_and_command_hooks_share_priorities() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let settings = json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "echo cmd", "priority": 1}]}]});
    let registry = HookRegistry::builder()
        .settings(&settings, dir)
        .on_with(
            HookEvent::PreToolUse,
            "*",
            HookOptions::default().name("late").priority(2),
            |_| async { Ok(HookOutput::default()) },
        )
        .on_with(
            HookEvent::PreToolUse,
            "*",
            HookOptions::default().name("early").priority(0),
            |_| async { Ok(HookOutput::default()) },
        )
        .build()
        .unwrap();
    let (_, runs) = HookRunner::new(registry)
        .pre_tool_use(tool(dir, "Bash"))
        .await;
    assert_eq!(names(&runs), ["early", "echo cmd", "late"]);
}

#[tokio::test]
async fn identical_commands_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo x >> n.txt"}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": "echo x >> n.txt"}]}
    ]});
    let r = HookRunner::new(HookRegistry::from_settings(&hooks, dir).unwrap());
    let (_, runs) = r.pre_tool_use(tool(dir, "Bash")).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(std::fs::read_to_string(dir.join("n.txt")).unwrap(), "x\n");
}

#[test]
fn config_defaults_and_extensions() {
    let dir = Path::new("/proj");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "a"},
        {"type": "command", "command": "b", "timeout": 30, "priority": -3, "failClosed": true},
        {"type": "command", "command": "c", "timeout": 0.5}
    ]}]});
    let reg = HookRegistry::from_settings(&hooks, dir).unwrap();
    let h = reg.hooks();
    assert_eq!(h.len(), 3);
    assert_eq!(h[0].options, HookOptions::default());
    assert_eq!(h[0].options.timeout, std::time::Duration::from_secs(60));
    assert_eq!(h[1].options.timeout, std::time::Duration::from_secs(30));
    assert_eq!(h[1].options.priority, -3);
    assert!(h[1].options.fail_closed);
    assert_eq!(h[2].options.timeout, std::time::Duration::from_millis(500));
    assert_eq!(h[0].matcher.pattern(), Some("Bash"));
    match &h[0].handler {
        HookHandler::Command(c) => assert_eq!(c.project_dir, dir),
        other => panic!("{other:?}"),
    }
    assert!(
        HookRegistry::from_settings(&Value::Null, dir)
            .unwrap()
            .is_empty()
    );
    assert!(
        HookRegistry::from_settings(&json!({}), dir)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn config_errors_are_clear() {
    let dir = Path::new("/proj");
    let err = |v: Value| {
        HookRegistry::from_settings(&v, dir)
            .unwrap_err()
            .to_string()
    };

    let e = err(json!({"PreToolUze": []}));
    assert!(e.contains("unknown hook event `PreToolUze`"), "{e}");
    let e = err(json!({"PreToolUse": [{"matcher": "Bash(", "hooks": []}]}));
    assert!(
        e.contains("invalid matcher `Bash(`") && e.contains("PreToolUse"),
        "{e}"
    );
    let e = err(json!([]));
    assert!(e.contains("must be an object"), "{e}");
    let e = err(json!({"Stop": {}}));
    assert!(e.contains("hooks.Stop") && e.contains("array"), "{e}");
    let e = err(json!({"Stop": [{"hooks": [{"type": "command"}]}]}));
    assert!(
        e.contains("hooks.Stop[0].hooks[0]") && e.contains("command"),
        "{e}"
    );
    let e =
        err(json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "10"}]}]}));
    assert!(e.contains("hooks.Stop[0].hooks[0].timeout"), "{e}");
    let e =
        err(json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "priority": 1.5}]}]}));
    assert!(e.contains("priority"), "{e}");
    let e = err(
        json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "failClosed": "yes"}]}]}),
    );
    assert!(e.contains("failClosed"), "{e}");
    let e = err(json!({"Stop": [{"hooks": [{"type": "webhook", "url": "x"}]}]}));
    assert!(e.contains("unknown hook type `webhook`"), "{e}");
    let e = err(json!({"Stop": [{"matcher": 3, "hooks": []}]}));
    assert!(e.contains("matcher"), "{e}");

    let bad = HookRegistry::builder()
        .on(HookEvent::PreToolUse, "[", |_| async {
            Ok(HookOutput::default())
        })
        .build()
        .unwrap_err();
    assert!(bad.to_string().contains("invalid matcher `[`"));
}

#[test]
fn claude_only_features_are_skipped_with_warnings() {
    let hooks = json!({
        "SubagentStart": [{"hooks": [{"type": "command", "command": "x"}]}],
        "Stop": [{"hooks": [
            {"type": "prompt", "prompt": "Is the work done? $ARGUMENTS"},
            {"type": "command", "command": "y"}
        ]}]
    });
    let reg = HookRegistry::from_settings(&hooks, "/p").unwrap();
    assert_eq!(reg.len(), 1);
    assert!(reg.has(HookEvent::Stop));
    assert_eq!(reg.warnings().len(), 2, "{:?}", reg.warnings());
}
