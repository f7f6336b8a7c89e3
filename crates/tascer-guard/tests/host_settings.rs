#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Settings as a host (Claude Code, through `tascer hook`) reads them: the
//! project found from a subdirectory, Claude Code's own files honoured
//! (what Tascer cannot honour is a warning), and the mode a call is decided
//! in when the caller names its own.

use std::path::Path;

use serde_json::json;
use tascer_guard::permissions::{Behavior, PermissionEngine, PermissionMode, ToolCall};
use tascer_guard::settings::{LoadSettings as _, LoadedSettings, SettingsLoader, project_root};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A git project `proj/` with a `src/` subdirectory, and a user home.
struct Project {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    root: std::path::PathBuf,
    src: std::path::PathBuf,
}

fn project() -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    let src = root.join("src");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    Project {
        home: base.join("home"),
        _tmp: tmp,
        root,
        src,
    }
}

fn load(p: &Project) -> LoadedSettings {
    SettingsLoader::new(&p.src)
        .home(&p.home)
        .claude_compat(true)
        .project_dir(project_root(&p.src, None))
        .load()
        .unwrap()
}

fn bash(cwd: &Path, command: &str) -> ToolCall {
    ToolCall {
        tool_name: "Bash".into(),
        input: json!({ "command": command }),
        tool_use_id: "t".into(),
        cwd: cwd.to_path_buf(),
        session_id: "s".into(),
    }
}

#[tokio::test]
async fn a_subdirectory_gets_the_project_s_rules_and_claude_code_s_own() {
    let p = project();
    write(
        &p.root.join(".tascer/settings.json"),
        r#"{"permissions":{"deny":["Bash(git push:*)"]}}"#,
    );
    write(
        &p.root.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash(npm test:*)"]}}"#,
    );
    let settings = load(&p);
    assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
    let engine = settings
        .apply(PermissionEngine::builder(), Some(&p.home))
        .mode(PermissionMode::DontAsk)
        .build()
        .unwrap();
    let push = engine.decide(&bash(&p.src, "git push origin main")).await;
    assert_eq!(push.behavior, Behavior::Deny);
    assert!(push.reason.contains("Bash(git push:*)"), "{}", push.reason);
    // dontAsk honours Claude Code's own allow rule.
    let test = engine.decide(&bash(&p.src, "npm test")).await;
    assert_eq!(test.behavior, Behavior::Allow, "{}", test.reason);
}

#[test]
fn what_tascer_cannot_honour_in_claude_code_s_files_is_a_warning() {
    let p = project();
    write(
        &p.root.join(".claude/settings.local.json"),
        r#"{"model":"opus","permissions":{"allow":["Bash(npm test:*)","Bash(:*)"],"disableAutoMode":"disable"}}"#,
    );
    let settings = load(&p);
    // `model` is Claude Code's to apply: a host does not warn about it.
    assert_eq!(settings.warnings.len(), 2, "{:?}", settings.warnings);
    assert_eq!(
        settings.unhonoured().len(),
        1,
        "{:?}",
        settings.unhonoured()
    );
    assert!(
        settings
            .warnings
            .iter()
            .any(|w| w.contains("Bash(:*)") && w.contains(".claude/settings.local.json")),
        "{:?}",
        settings.warnings
    );
    assert!(
        settings
            .warnings
            .iter()
            .any(|w| w.contains("permissions.disableAutoMode")),
        "{:?}",
        settings.warnings
    );
    // The rule it can honour is kept.
    assert_eq!(settings.rules.list(Behavior::Allow).len(), 1);

    // In Tascer's own files the same rule is an error naming the file.
    write(
        &p.root.join(".tascer/settings.json"),
        r#"{"permissions":{"deny":["Bash(:*)"]}}"#,
    );
    let err = SettingsLoader::new(&p.src)
        .project_dir(&p.root)
        .load()
        .unwrap_err()
        .to_string();
    assert!(err.contains(".tascer/settings.json"), "{err}");
}

#[test]
fn claude_code_s_hooks_are_left_to_claude_code() {
    let p = project();
    write(
        &p.root.join(".claude/settings.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"tascer hook"}]}]}}"#,
    );
    write(
        &p.root.join(".tascer/settings.json"),
        r#"{"hooks":{"Stop":[]}}"#,
    );
    let mut settings = load(&p);
    assert_eq!(settings.hooks().len(), 2);
    settings.without_claude_code_hooks();
    let hooks = settings.hooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        hooks[0].0,
        tascer_guard::settings::SettingsSource::Project,
        "only Tascer's own hooks stay"
    );
}

#[test]
fn the_caller_s_mode_holds_unless_it_is_below_the_floor() {
    let p = project();
    let mode =
        |settings: &LoadedSettings, caller: Option<&str>| settings.mode_for_caller(caller).mode;
    let none = load(&p);
    // Safe without configuration: bypassPermissions is not accepted.
    let bypass = none.mode_for_caller(Some("bypassPermissions"));
    assert_eq!(bypass.mode, PermissionMode::Auto);
    assert!(bypass.replaced.unwrap().contains("bypassPermissions"));
    assert_eq!(mode(&none, Some("default")), PermissionMode::Default);
    assert_eq!(
        mode(&none, Some("acceptEdits")),
        PermissionMode::AcceptEdits
    );
    assert_eq!(mode(&none, Some("auto")), PermissionMode::Auto);
    assert_eq!(mode(&none, Some("no-such-mode")), PermissionMode::Auto);
    assert_eq!(mode(&none, None), PermissionMode::Default);

    // The profile's own mode is the floor; callerModes widens what is
    // accepted, disableBypassPermissionsMode narrows it again.
    write(
        &p.root.join(".tascer/settings.json"),
        r#"{"permissions":{"defaultMode":"dontAsk"}}"#,
    );
    let floor = load(&p);
    assert_eq!(
        mode(&floor, Some("bypassPermissions")),
        PermissionMode::DontAsk
    );
    write(
        &p.root.join(".tascer/settings.local.json"),
        r#"{"permissions":{"callerModes":["bypassPermissions","default"]}}"#,
    );
    let wide = load(&p);
    assert_eq!(
        mode(&wide, Some("bypassPermissions")),
        PermissionMode::BypassPermissions
    );
    assert_eq!(mode(&wide, Some("acceptEdits")), PermissionMode::DontAsk);
    write(
        &p.root.join(".claude/settings.json"),
        r#"{"permissions":{"disableBypassPermissionsMode":"disable"}}"#,
    );
    let disabled = load(&p);
    assert_eq!(
        mode(&disabled, Some("bypassPermissions")),
        PermissionMode::DontAsk
    );
}
