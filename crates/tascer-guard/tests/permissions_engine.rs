#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The engine: can_use_tool, cache, workaround detection, non-interactive
//! and interactive resolution.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::json;
use tascer_guard::permissions::{
    AskAnswer, Asker, Behavior, CanUseTool, CanUseToolRequest, CanUseToolResult, DecisionSource,
    Escalation, PermissionEngine, PermissionMode, PermissionRules, ToolCall, WorkaroundConfig,
};

fn counting(
    result: CanUseToolResult,
) -> (
    CanUseTool,
    Arc<AtomicUsize>,
    Arc<std::sync::Mutex<Vec<CanUseToolRequest>>>,
) {
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (c, s) = (count.clone(), seen.clone());
    let cb: CanUseTool = Arc::new(move |req: CanUseToolRequest| {
        c.fetch_add(1, Ordering::SeqCst);
        s.lock().unwrap().push(req);
        let r = result.clone();
        async move { r }.boxed()
    });
    (cb, count, seen)
}

fn bash(cmd: &str) -> ToolCall {
    ToolCall::new("Bash", json!({"command": cmd}), std::env::temp_dir())
}

#[tokio::test]
async fn callback_allow_with_updated_input() {
    let updated = json!({"command": "npm test -- --ci"});
    let (cb, count, seen) = counting(CanUseToolResult::Allow {
        updated_input: Some(updated.clone()),
        updated_permissions: Vec::new(),
    });
    let engine = PermissionEngine::builder()
        .can_use_tool(cb)
        .build()
        .unwrap();
    let d = engine.decide(&bash("npm test")).await;
    assert_eq!(d.behavior, Behavior::Allow);
    assert_eq!(d.decided_by, DecisionSource::Callback);
    assert_eq!(d.updated_input, Some(updated));
    assert_eq!(count.load(Ordering::SeqCst), 1);
    let req = &seen.lock().unwrap()[0];
    assert_eq!(req.tool_name, "Bash");
    assert_eq!(req.suggestions[0].to_rule_string(), "Bash(npm test:*)");
}

#[tokio::test]
async fn callback_deny_with_interrupt() {
    let (cb, _, _) = counting(CanUseToolResult::Deny {
        message: "Security policy violation".into(),
        interrupt: true,
    });
    let engine = PermissionEngine::builder()
        .can_use_tool(cb)
        .build()
        .unwrap();
    let d = engine.decide(&bash("npm publish")).await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.interrupt);
    assert_eq!(d.reason, "Security policy violation");
}

#[tokio::test]
async fn callback_only_for_undecided_calls_and_ask_rules() {
    let (cb, count, seen) = counting(CanUseToolResult::Allow {
        updated_input: None,
        updated_permissions: Vec::new(),
    });
    let rules =
        PermissionRules::parse(&["Bash(ls:*)"], &["Bash(git push:*)"], &["Bash(rm:*)"]).unwrap();
    let engine = PermissionEngine::builder()
        .rules(rules)
        .mode(PermissionMode::BypassPermissions)
        .can_use_tool(cb)
        .build()
        .unwrap();
    assert_eq!(engine.decide(&bash("ls")).await.behavior, Behavior::Allow);
    assert_eq!(engine.decide(&bash("rm x")).await.behavior, Behavior::Deny);
    assert_eq!(count.load(Ordering::SeqCst), 0);
    // Ask rules reach the callback even in bypass mode.
    let d = engine.decide(&bash("git push")).await;
    assert_eq!(d.behavior, Behavior::Allow);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(
        seen.lock().unwrap()[0].matched_ask_rule.as_deref(),
        Some("Bash(git push:*)")
    );
    // Allow with an unchanged input reports no updated_input.
    assert_eq!(d.updated_input, None);
}

#[tokio::test]
async fn non_interactive_resolution_names_the_rule_or_flag() {
    let engine = PermissionEngine::builder().build().unwrap();
    let d = engine.decide(&bash("npm test")).await;
    assert_eq!(d.behavior, Behavior::Ask);
    let r = engine.resolve_non_interactive(d);
    assert_eq!(r.behavior, Behavior::Deny);
    assert!(
        r.reason
            .contains("add \"Bash(npm test:*)\" to permissions.allow"),
        "{}",
        r.reason
    );

    let tmp = tempfile::tempdir().unwrap();
    let call = ToolCall::new(
        "Edit",
        json!({"file_path": tmp.path().join("a.rs"), "old_string": "a", "new_string": "b"}),
        tmp.path(),
    );
    let r = engine.resolve_non_interactive(engine.decide(&call).await);
    assert!(r.reason.contains("Edit(//"), "{}", r.reason);
    assert!(
        r.reason.contains("--permission-mode acceptEdits"),
        "{}",
        r.reason
    );
    // Allow and deny pass through.
    let ok = ToolCall::new(
        "Read",
        json!({"file_path": tmp.path().join("a.rs")}),
        tmp.path(),
    );
    assert_eq!(
        engine
            .resolve_non_interactive(engine.decide(&ok).await)
            .behavior,
        Behavior::Allow
    );
}

struct Scripted(std::sync::Mutex<Vec<AskAnswer>>);
impl Asker for Scripted {
    fn ask<'a>(&'a self, _request: &'a CanUseToolRequest) -> BoxFuture<'a, AskAnswer> {
        let a = self.0.lock().unwrap().remove(0);
        async move { a }.boxed()
    }
}

#[tokio::test]
async fn asker_once_always_deny() {
    let engine = PermissionEngine::builder().build().unwrap();
    let asker = Scripted(std::sync::Mutex::new(vec![
        AskAnswer::AllowOnce,
        AskAnswer::AllowAlways,
        AskAnswer::Deny {
            message: "no".into(),
        },
    ]));
    let call = bash("cargo build --release");
    let d = engine
        .resolve_with_asker(&call, engine.decide(&call).await, &asker)
        .await;
    assert_eq!(
        (d.behavior, d.decided_by.clone()),
        (Behavior::Allow, DecisionSource::User)
    );
    // Still asks next time after "once".
    let d = engine.decide(&call).await;
    assert_eq!(d.behavior, Behavior::Ask);
    let d = engine.resolve_with_asker(&call, d, &asker).await;
    assert_eq!(d.behavior, Behavior::Allow);
    // "Always" added a session rule.
    let d = engine.decide(&bash("cargo build")).await;
    assert_eq!(d.behavior, Behavior::Allow);
    assert_eq!(
        d.decided_by,
        DecisionSource::Rule {
            rule: "Bash(cargo build:*)".into(),
            source_file: Some("session".into())
        }
    );
    let other = bash("make");
    let d = engine
        .resolve_with_asker(&other, engine.decide(&other).await, &asker)
        .await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert_eq!(d.reason, "no");
}

#[tokio::test]
async fn cache_serves_identical_inputs_only() {
    let engine = PermissionEngine::builder()
        .rules(PermissionRules::parse(&["Bash(ls:*)"], &[], &[]).unwrap())
        .build()
        .unwrap();
    let a = ToolCall::new(
        "Bash",
        json!({"command": "ls", "description": "x"}),
        std::env::temp_dir(),
    );
    let b = ToolCall::new(
        "Bash",
        json!({"description": "x", "command": "ls"}),
        std::env::temp_dir(),
    );
    let first = engine.decide(&a).await;
    assert!(matches!(first.decided_by, DecisionSource::Rule { .. }));
    // Same input, keys in another order: cache hit.
    let second = engine.decide(&b).await;
    assert_eq!(second.decided_by, DecisionSource::Cache);
    assert_eq!(second.behavior, Behavior::Allow);
    // Different input: no hit.
    let third = engine.decide(&bash("ls -la")).await;
    assert!(matches!(third.decided_by, DecisionSource::Rule { .. }));
    // A mode change clears the cache.
    engine.set_mode(PermissionMode::Plan).unwrap();
    let plan = engine.decide(&a).await;
    assert_eq!(plan.behavior, Behavior::Deny);
    assert!(matches!(plan.decided_by, DecisionSource::Mode { .. }));
}

#[tokio::test]
async fn cache_never_stores_rewritten_inputs_and_skips_file_tools() {
    let (cb, count, _) = counting(CanUseToolResult::Allow {
        updated_input: Some(json!({"command": "echo safe"})),
        updated_permissions: Vec::new(),
    });
    let engine = PermissionEngine::builder()
        .can_use_tool(cb)
        .cache_callback_decisions(true)
        .build()
        .unwrap();
    engine.decide(&bash("deploy")).await;
    engine.decide(&bash("deploy")).await;
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "rewritten decisions are not cached"
    );

    let (cb, count, _) = counting(CanUseToolResult::Allow {
        updated_input: None,
        updated_permissions: Vec::new(),
    });
    let engine = PermissionEngine::builder()
        .can_use_tool(cb.clone())
        .cache_callback_decisions(true)
        .build()
        .unwrap();
    engine.decide(&bash("deploy")).await;
    let d = engine.decide(&bash("deploy")).await;
    assert_eq!(d.decided_by, DecisionSource::Cache);
    assert_eq!(count.load(Ordering::SeqCst), 1);

    // File tools are never cached: a file can become a symlink between calls.
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    std::fs::write(cwd.join("plain.txt"), "x").unwrap();
    let engine = PermissionEngine::builder()
        .default_policies()
        .home_dir(&cwd)
        .build()
        .unwrap();
    let call = ToolCall::new("Read", json!({"file_path": "plain.txt"}), &cwd);
    assert_eq!(engine.decide(&call).await.behavior, Behavior::Allow);
    std::fs::remove_file(cwd.join("plain.txt")).unwrap();
    std::fs::write(cwd.join(".env"), "S=1").unwrap();
    std::os::unix::fs::symlink(cwd.join(".env"), cwd.join("plain.txt")).unwrap();
    let d = engine.decide(&call).await;
    assert_eq!(d.behavior, Behavior::Ask, "{:?}", d.decided_by);
}

#[tokio::test]
async fn workaround_detection_escalates_to_ask() {
    let rules = PermissionRules::parse(&["Bash(git:*)"], &[], &["Bash(git push:*)"]).unwrap();
    let engine = PermissionEngine::builder().rules(rules).build().unwrap();
    for cmd in ["git push", "git push -f", "git push origin main"] {
        assert_eq!(engine.decide(&bash(cmd)).await.behavior, Behavior::Deny);
    }
    // An unrelated git command is still fine...
    assert_eq!(
        engine.decide(&bash("git status")).await.behavior,
        Behavior::Allow
    );
    // ...but an alike one that slips past the deny rule escalates.
    let d = engine.decide(&bash("git $(echo push) origin")).await;
    assert_eq!(d.behavior, Behavior::Ask);
    let d = engine.decide(&bash("cd x && git push --mirror")).await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.reason.contains("workaround"), "{}", d.reason);
    let d = engine.decide(&bash("command git push")).await;
    assert_eq!(d.behavior, Behavior::Deny);
}

#[tokio::test]
async fn workaround_detection_across_tools_and_stop_session() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    std::fs::write(cwd.join(".env"), "S=1").unwrap();
    let engine = PermissionEngine::builder()
        .rules(
            PermissionRules::parse(&["Bash(cat:*)", "Bash(grep:*)"], &[], &["Read(.env)"]).unwrap(),
        )
        .workaround(WorkaroundConfig {
            enabled: true,
            threshold: 3,
            escalation: Escalation::StopSession,
        })
        .build()
        .unwrap();
    let read = ToolCall::new("Read", json!({"file_path": ".env"}), &cwd);
    for _ in 0..3 {
        assert_eq!(engine.decide(&read).await.behavior, Behavior::Deny);
    }
    // Same sensitive file through Bash: stop the session.
    let d = engine
        .decide(&ToolCall::new("Bash", json!({"command": "cat .env"}), &cwd))
        .await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.interrupt);
    assert_eq!(d.decided_by, DecisionSource::Workaround);
    assert!(d.reason.contains(".env"), "{}", d.reason);
}

#[tokio::test]
async fn non_interactive_denials_count_for_workarounds() {
    let engine = PermissionEngine::builder().build().unwrap();
    for i in 0..3 {
        let d = engine
            .decide(&bash(&format!("terraform destroy -target={i}")))
            .await;
        engine.resolve_non_interactive(d);
    }
    let d = engine
        .decide(&bash("terraform destroy -auto-approve"))
        .await;
    assert_eq!(d.decided_by, DecisionSource::Workaround);
    assert!(d.reason.contains("3 earlier"), "{}", d.reason);
}

#[tokio::test]
async fn decisions_serialize_for_recording() {
    let engine = PermissionEngine::builder().build().unwrap();
    let d = engine.decide(&bash("make")).await;
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["behavior"], "ask");
    assert_eq!(v["decided_by"]["type"], "default");
    assert!(v["duration_us"].is_u64());
    assert_eq!(v["interrupt"], false);
    assert_eq!(v["suggestions"][0], "Bash(make:*)");
}

#[tokio::test]
async fn engine_is_shareable_across_tasks() {
    let engine = Arc::new(
        PermissionEngine::builder()
            .default_policies()
            .build()
            .unwrap(),
    );
    let mut handles = Vec::new();
    for i in 0..8 {
        let e = engine.clone();
        handles.push(tokio::spawn(async move {
            e.decide(&bash(&format!("echo {i}"))).await.behavior
        }));
    }
    for h in handles {
        assert_eq!(h.await.unwrap(), Behavior::Ask);
    }
}
