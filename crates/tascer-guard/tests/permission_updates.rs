#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Permission updates from a `can_use_tool` answer ("always allow"):
//! applied for the rest of the session, persisted to the Claude Code
//! settings file they name, and read back by the next session.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
use serde_json::json;
use tascer_guard::permissions::{
    Behavior, CanUseTool, CanUseToolRequest, CanUseToolResult, DecisionSource, PermissionEngine,
    PermissionMode, PermissionUpdate, ToolCall,
};
use tascer_guard::settings::{LoadSettings as _, SettingsLoader};
use tascer_settings::ClaudeSettingsFiles;

fn files(project: &Path) -> ClaudeSettingsFiles {
    ClaudeSettingsFiles {
        local: project.join(".claude/settings.local.json"),
        project: project.join(".claude/settings.json"),
        user: Some(project.join("user-config/settings.json")),
    }
}

/// A callback answering every call with `updates`, counting the calls.
fn always(updates: serde_json::Value) -> (CanUseTool, Arc<AtomicUsize>) {
    let updates: Vec<PermissionUpdate> = serde_json::from_value(updates).unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let cb: CanUseTool = Arc::new(move |_req: CanUseToolRequest| {
        c.fetch_add(1, Ordering::SeqCst);
        let answer = CanUseToolResult::Allow {
            updated_input: None,
            updated_permissions: updates.clone(),
        };
        async move { answer }.boxed()
    });
    (cb, count)
}

fn bash(cwd: &Path, cmd: &str) -> ToolCall {
    ToolCall::new("Bash", json!({"command": cmd}), cwd)
}

#[tokio::test]
async fn always_allow_holds_for_the_next_call_and_the_next_session() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().canonicalize().unwrap();
    let (cb, count) = always(json!([{
        "type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
        "behavior": "allow", "destination": "localSettings"
    }]));
    let engine = PermissionEngine::builder()
        .can_use_tool(cb)
        .settings_files(files(&project))
        .build()
        .unwrap();
    let first = engine.decide(&bash(&project, "touch a.txt")).await;
    assert_eq!(first.behavior, Behavior::Allow);
    assert_eq!(first.decided_by, DecisionSource::Callback);
    assert!(
        first
            .reason
            .contains("added allow rule(s) Bash(touch:*) (localSettings)"),
        "{}",
        first.reason
    );
    let second = engine.decide(&bash(&project, "touch b.txt")).await;
    assert_eq!(second.behavior, Behavior::Allow);
    assert!(
        matches!(second.decided_by, DecisionSource::Rule { .. }),
        "{second:?}"
    );
    assert_eq!(count.load(Ordering::SeqCst), 1, "asked once");

    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written,
        json!({"permissions": {"allow": ["Bash(touch:*)"]}})
    );

    // The next session reads Claude Code's local file: no one is asked.
    let settings = SettingsLoader::new(&project)
        .claude_compat(true)
        .load()
        .unwrap();
    let next = settings
        .apply(PermissionEngine::builder(), None)
        .mode(PermissionMode::DontAsk)
        .build()
        .unwrap();
    let third = next.decide(&bash(&project, "touch c.txt")).await;
    assert_eq!(third.behavior, Behavior::Allow, "{}", third.reason);
}

#[tokio::test]
async fn session_updates_change_only_the_session_and_what_cannot_apply_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().canonicalize().unwrap();
    let engine = PermissionEngine::builder()
        .settings_files(files(&project))
        .disable_bypass(true)
        .build()
        .unwrap();
    let updates: Vec<PermissionUpdate> = serde_json::from_value(json!([
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
         "behavior": "deny"},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        {"type": "setMode", "mode": "bypassPermissions", "destination": "userSettings"},
        {"type": "addDirectories", "directories": ["/data"], "destination": "projectSettings"},
    ]))
    .unwrap();
    let warnings = engine.apply_updates(&updates);
    assert_eq!(engine.mode(), PermissionMode::AcceptEdits);
    let ls = engine.decide(&bash(&project, "ls")).await;
    assert_eq!(ls.behavior, Behavior::Deny, "{}", ls.reason);
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings[0].contains("cannot set the mode to bypassPermissions"));
    assert!(warnings[1].contains("/data takes effect from the next session"));
    assert!(
        !project.join(".claude/settings.local.json").exists(),
        "session updates write nothing"
    );
    assert!(
        !project.join("user-config/settings.json").exists(),
        "a mode the session refuses is not written for the next one"
    );
    let shared: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        shared["permissions"]["additionalDirectories"],
        json!(["/data"])
    );
}
