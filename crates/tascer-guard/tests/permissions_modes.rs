#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every mode × tool class.

use std::path::Path;

use serde_json::json;
use tascer_guard::permissions::{
    Behavior, DecisionSource, PermissionEngine, PermissionError, PermissionMode, PermissionRules,
    ToolCall,
};

fn calls(dir: &Path) -> Vec<(&'static str, ToolCall)> {
    let f = dir.join("src/main.rs").display().to_string();
    vec![
        ("read", ToolCall::new("Read", json!({"file_path": f}), dir)),
        ("grep", ToolCall::new("Grep", json!({"pattern": "x"}), dir)),
        (
            "edit",
            ToolCall::new(
                "Edit",
                json!({"file_path": f, "old_string": "a", "new_string": "b"}),
                dir,
            ),
        ),
        (
            "write",
            ToolCall::new("Write", json!({"file_path": f, "content": "x"}), dir),
        ),
        (
            "bash",
            ToolCall::new("Bash", json!({"command": "cargo build"}), dir),
        ),
        (
            "fsbash",
            ToolCall::new(
                "Bash",
                json!({"command": "mkdir -p out && touch out/a"}),
                dir,
            ),
        ),
        (
            "web",
            ToolCall::new(
                "WebFetch",
                json!({"url": "https://example.com/x", "prompt": "p"}),
                dir,
            ),
        ),
        (
            "mcp",
            ToolCall::new("mcp__github__search", json!({"q": "x"}), dir),
        ),
    ]
}

fn expect(mode: PermissionMode, table: &[(&str, Behavior)]) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    let engine = PermissionEngine::builder().mode(mode).build().unwrap();
    for (name, call) in calls(tmp.path()) {
        let want = table
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b)
            .unwrap();
        let d = engine.evaluate(&call);
        assert_eq!(
            d.behavior, want,
            "{mode} {name}: {:?} {}",
            d.decided_by, d.reason
        );
    }
}

use Behavior::{Allow as A, Ask as Q, Deny as D};

#[test]
fn default_mode() {
    expect(
        PermissionMode::Default,
        &[
            ("read", A),
            ("grep", A),
            ("edit", Q),
            ("write", Q),
            ("bash", Q),
            ("fsbash", Q),
            ("web", Q),
            ("mcp", Q),
        ],
    );
}

#[test]
fn accept_edits_mode() {
    expect(
        PermissionMode::AcceptEdits,
        &[
            ("read", A),
            ("grep", A),
            ("edit", A),
            ("write", A),
            ("bash", Q),
            ("fsbash", A),
            ("web", Q),
            ("mcp", Q),
        ],
    );
}

#[test]
fn plan_mode() {
    expect(
        PermissionMode::Plan,
        &[
            ("read", A),
            ("grep", A),
            ("edit", D),
            ("write", D),
            ("bash", D),
            ("fsbash", D),
            ("web", Q),
            ("mcp", D),
        ],
    );
}

#[test]
fn bypass_mode() {
    expect(
        PermissionMode::BypassPermissions,
        &[
            ("read", A),
            ("grep", A),
            ("edit", A),
            ("write", A),
            ("bash", A),
            ("fsbash", A),
            ("web", A),
            ("mcp", A),
        ],
    );
}

#[tokio::test]
async fn dont_ask_mode_denies_what_would_ask() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = PermissionEngine::builder()
        .mode(PermissionMode::DontAsk)
        .build()
        .unwrap();
    let call = ToolCall::new("Bash", json!({"command": "cargo build"}), tmp.path());
    let d = engine.decide(&call).await;
    assert_eq!(d.behavior, D);
    assert!(d.reason.contains("dontAsk"), "{}", d.reason);
}

#[test]
fn accept_edits_outside_working_dir_asks() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let engine = PermissionEngine::builder()
        .mode(PermissionMode::AcceptEdits)
        .build()
        .unwrap();
    let f = other.path().join("x.txt").display().to_string();
    let call = ToolCall::new("Write", json!({"file_path": f, "content": ""}), tmp.path());
    assert_eq!(engine.evaluate(&call).behavior, Q);
    let call = ToolCall::new("Bash", json!({"command": format!("rm {f}")}), tmp.path());
    assert_eq!(engine.evaluate(&call).behavior, Q);
    // ...unless the directory is an additional working directory.
    let engine = PermissionEngine::builder()
        .mode(PermissionMode::AcceptEdits)
        .additional_directory(other.path())
        .build()
        .unwrap();
    let call = ToolCall::new("Write", json!({"file_path": f, "content": ""}), tmp.path());
    assert_eq!(engine.evaluate(&call).behavior, A);
}

#[test]
fn bypass_still_honours_deny_and_ask_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let rules =
        PermissionRules::parse(&[] as &[&str], &["Bash(git push:*)"], &["WebFetch"]).unwrap();
    let engine = PermissionEngine::builder()
        .rules(rules)
        .mode(PermissionMode::BypassPermissions)
        .build()
        .unwrap();
    let web = ToolCall::new("WebFetch", json!({"url": "https://a.b"}), tmp.path());
    assert_eq!(engine.evaluate(&web).behavior, D);
    let push = ToolCall::new("Bash", json!({"command": "git push origin"}), tmp.path());
    let d = engine.evaluate(&push);
    assert_eq!(d.behavior, Q);
    assert!(matches!(d.decided_by, DecisionSource::Rule { .. }));
}

#[test]
fn mode_switches_at_runtime_and_bypass_can_be_disabled() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = PermissionEngine::builder()
        .disable_bypass(true)
        .build()
        .unwrap();
    let call = ToolCall::new("Bash", json!({"command": "cargo build"}), tmp.path());
    assert_eq!(engine.evaluate(&call).behavior, Q);
    engine.set_mode(PermissionMode::Plan).unwrap();
    assert_eq!(engine.mode(), PermissionMode::Plan);
    assert_eq!(engine.evaluate(&call).behavior, D);
    let err = engine
        .set_mode(PermissionMode::BypassPermissions)
        .unwrap_err();
    assert!(matches!(err, PermissionError::BypassDisabled));
    assert!(
        err.to_string()
            .contains("Cannot set permission mode to bypassPermissions")
    );
}

#[test]
fn mode_serde_names() {
    for (m, s) in [
        (PermissionMode::Default, "\"default\""),
        (PermissionMode::AcceptEdits, "\"acceptEdits\""),
        (PermissionMode::Plan, "\"plan\""),
        (PermissionMode::BypassPermissions, "\"bypassPermissions\""),
    ] {
        assert_eq!(serde_json::to_string(&m).unwrap(), s);
        assert_eq!(serde_json::from_str::<PermissionMode>(s).unwrap(), m);
    }
    assert!(serde_json::from_str::<PermissionMode>("\"yolo\"").is_err());
    assert!("yolo".parse::<PermissionMode>().is_err());
}

#[test]
fn ask_user_question_always_asks() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = PermissionEngine::builder()
        .mode(PermissionMode::BypassPermissions)
        .build()
        .unwrap();
    let call = ToolCall::new("AskUserQuestion", json!({"questions": []}), tmp.path());
    assert_eq!(engine.evaluate(&call).behavior, Q);
}

/// `evaluate_in_mode` judges in the mode it is given (the engine's own
/// is left alone), denies a dontAsk ask, judges a disabled bypass in
/// default mode, and remembers no denial.
#[test]
fn evaluate_in_mode_judges_in_the_given_mode_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = PermissionEngine::builder()
        .disable_bypass(true)
        .build()
        .unwrap();
    let bash = ToolCall::new("Bash", json!({"command": "cargo build"}), tmp.path());
    let write = ToolCall::new(
        "Write",
        json!({"file_path": tmp.path().join("a.txt").display().to_string(), "content": "x"}),
        tmp.path(),
    );
    let judged = |call: &ToolCall, mode| engine.evaluate_in_mode(call, mode);

    assert_eq!(
        judged(&bash, PermissionMode::Default).behavior,
        Behavior::Ask
    );
    let edit = judged(&write, PermissionMode::AcceptEdits);
    assert_eq!(edit.behavior, Behavior::Allow);
    assert!(matches!(edit.decided_by, DecisionSource::Mode { .. }));
    assert_eq!(
        judged(&write, PermissionMode::Plan).behavior,
        Behavior::Deny
    );

    let dont_ask = judged(&bash, PermissionMode::DontAsk);
    assert_eq!(dont_ask.behavior, Behavior::Deny);
    assert!(
        dont_ask.reason.starts_with("dontAsk mode: "),
        "{}",
        dont_ask.reason
    );
    assert!(
        tascer_guard::permissions::is_unanswered_ask(&dont_ask.reason),
        "{}",
        dont_ask.reason
    );

    let bypass = judged(&bash, PermissionMode::BypassPermissions);
    assert_eq!(bypass.behavior, Behavior::Ask, "judged in default mode");
    assert!(
        bypass.reason.contains("bypassPermissions is disabled"),
        "{}",
        bypass.reason
    );

    assert_eq!(engine.mode(), PermissionMode::Default);
    assert_eq!(
        engine.denial_history(),
        Default::default(),
        "no denial remembered"
    );
}
