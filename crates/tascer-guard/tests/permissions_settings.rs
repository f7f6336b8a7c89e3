#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Settings files: precedence, merging, Claude Code's files, errors.

use std::path::Path;

use serde_json::json;
use tascer_guard::permissions::{
    Behavior, DecisionSource, PermissionEngine, PermissionMode, ToolCall,
};
use tascer_guard::settings::{LoadSettings as _, SettingsError, SettingsLoader, SettingsSource};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct Fixture {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    cwd: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap().join("home");
    let cwd = tmp.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    write(
        &home.join(".tascer/settings.json"),
        r#"{"permissions":{"allow":["Bash(ls:*)"],"defaultMode":"plan","additionalDirectories":["~/shared"]},
            "env":{"A":"user","B":"user"},"model":"x","hooks":{"Stop":[]}}"#,
    );
    write(
        &cwd.join(".tascer/settings.json"),
        r#"{"permissions":{"deny":["Bash(rm:*)"],"defaultMode":"acceptEdits"},"env":{"B":"project","C":"project"}}"#,
    );
    write(
        &cwd.join(".tascer/settings.local.json"),
        r#"{"permissions":{"ask":["Bash(git push:*)"],"additionalDirectories":["../data"]},"env":{"C":"local"}}"#,
    );
    write(
        &cwd.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["WebFetch"]},"env":{"D":"claude"}}"#,
    );
    write(
        &cwd.join(".claude/settings.local.json"),
        r#"{"permissions":{"allow":["Bash(make:*)"]}}"#,
    );
    write(
        &home.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash(cargo:*)"]}}"#,
    );
    Fixture {
        _tmp: tmp,
        home,
        cwd,
    }
}

#[test]
fn precedence_and_merging() {
    let f = fixture();
    let loaded = SettingsLoader::new(&f.cwd).home(&f.home).load().unwrap();
    let sources: Vec<_> = loaded.layers.iter().map(|l| l.source).collect();
    assert_eq!(
        sources,
        [
            SettingsSource::Local,
            SettingsSource::Project,
            SettingsSource::User
        ]
    );
    assert_eq!(loaded.default_mode(), Some(PermissionMode::AcceptEdits));
    let env = loaded.env();
    assert_eq!(env["A"], "user");
    assert_eq!(env["B"], "project");
    assert_eq!(env["C"], "local");
    assert!(!env.contains_key("D"));
    assert_eq!(loaded.rules.allow.len(), 1);
    assert_eq!(loaded.rules.ask.len(), 1);
    assert_eq!(loaded.rules.deny.len(), 1);
    assert_eq!(loaded.hooks().len(), 1);
    // Unknown keys are preserved.
    assert_eq!(loaded.layers[2].settings.other["model"], "x");
    let dirs = loaded.additional_directories(Some(&f.home));
    assert!(dirs.contains(&f.home.join("shared")));
    assert!(dirs.contains(&f.cwd.join("../data")));
}

#[test]
fn flag_settings_win_and_claude_files_load_when_asked() {
    let f = fixture();
    let loaded = SettingsLoader::new(&f.cwd)
        .home(&f.home)
        .claude_compat(true)
        .flag_settings(r#"{"permissions":{"defaultMode":"default","allow":["Bash(echo:*)"]}}"#)
        .load()
        .unwrap();
    let sources: Vec<_> = loaded.layers.iter().map(|l| l.source).collect();
    assert_eq!(
        sources,
        [
            SettingsSource::Flag,
            SettingsSource::Local,
            SettingsSource::ClaudeLocal,
            SettingsSource::Project,
            SettingsSource::ClaudeProject,
            SettingsSource::User,
            SettingsSource::ClaudeUser,
        ]
    );
    assert_eq!(loaded.default_mode(), Some(PermissionMode::Default));
    assert_eq!(loaded.env()["D"], "claude");
    let engine = loaded
        .apply(PermissionEngine::builder(), Some(&f.home))
        .build()
        .unwrap();
    assert_eq!(engine.mode(), PermissionMode::Default);
    let bash = |c: &str| ToolCall::new("Bash", json!({"command": c}), &f.cwd);
    for (cmd, want) in [
        ("echo hi", Behavior::Allow),
        ("ls", Behavior::Allow),
        ("make", Behavior::Allow),
        ("cargo test", Behavior::Allow),
        ("git push", Behavior::Ask),
        ("rm x", Behavior::Deny),
    ] {
        assert_eq!(engine.evaluate(&bash(cmd)).behavior, want, "{cmd}");
    }
    let web = ToolCall::new("WebFetch", json!({"url": "https://a.b"}), &f.cwd);
    let d = engine.evaluate(&web);
    assert_eq!(d.behavior, Behavior::Deny);
    match d.decided_by {
        DecisionSource::Rule { source_file, .. } => {
            assert!(source_file.unwrap().ends_with(".claude/settings.json"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn flag_settings_file_and_sources_filter() {
    let f = fixture();
    write(
        &f.cwd.join("extra.json"),
        r#"{"permissions":{"deny":["Read"]}}"#,
    );
    let loaded = SettingsLoader::new(&f.cwd)
        .home(&f.home)
        .sources(false, false, true)
        .flag_settings("extra.json")
        .load()
        .unwrap();
    let sources: Vec<_> = loaded.layers.iter().map(|l| l.source).collect();
    assert_eq!(sources, [SettingsSource::Flag, SettingsSource::Local]);
    assert_eq!(loaded.rules.deny[0].raw, "Read");
    let missing = SettingsLoader::new(&f.cwd)
        .flag_settings("nope.json")
        .load();
    assert!(matches!(missing, Err(SettingsError::Io { .. })));
}

#[test]
fn project_root_anchors_slash_rules() {
    let f = fixture();
    write(
        &f.cwd.join(".tascer/settings.json"),
        r#"{"permissions":{"deny":["Edit(/docs/**)"]}}"#,
    );
    let loaded = SettingsLoader::new(&f.cwd).load().unwrap();
    let engine = loaded
        .apply(PermissionEngine::builder(), None)
        .build()
        .unwrap();
    // A call whose cwd is a subdirectory still resolves `/docs` against the project root.
    let sub = f.cwd.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let target = f.cwd.join("docs/a.md").display().to_string();
    let call = ToolCall::new("Write", json!({"file_path": target, "content": ""}), &sub);
    assert_eq!(engine.evaluate(&call).behavior, Behavior::Deny);
}

#[test]
fn malformed_json_names_file_and_line() {
    let f = fixture();
    write(
        &f.cwd.join(".tascer/settings.json"),
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash\",]\n  }\n}",
    );
    let err = SettingsLoader::new(&f.cwd).load().unwrap_err();
    match &err {
        SettingsError::Parse { path, line, .. } => {
            assert!(path.ends_with(".tascer/settings.json"));
            assert_eq!(*line, 3);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("line 3"), "{err}");
    let inline = SettingsLoader::new(&f.cwd)
        .sources(false, false, false)
        .flag_settings("{oops")
        .load();
    assert!(matches!(inline, Err(SettingsError::Parse { ref path, .. }) if path == "--settings"));
}

#[test]
fn bad_rule_and_bad_mode_are_errors() {
    let f = fixture();
    write(
        &f.cwd.join(".tascer/settings.local.json"),
        r#"{"permissions":{"deny":["Bash(rm"]}}"#,
    );
    let err = SettingsLoader::new(&f.cwd).load().unwrap_err();
    assert!(matches!(err, SettingsError::Rule { .. }));
    assert!(
        err.to_string().contains("settings.local.json") && err.to_string().contains("Bash(rm"),
        "{err}"
    );
    write(
        &f.cwd.join(".tascer/settings.local.json"),
        r#"{"permissions":{"defaultMode":"yolo"}}"#,
    );
    let err = SettingsLoader::new(&f.cwd).load().unwrap_err();
    assert!(matches!(err, SettingsError::Parse { .. }), "{err}");
}

#[test]
fn disable_bypass_from_settings() {
    let f = fixture();
    write(
        &f.cwd.join(".tascer/settings.local.json"),
        r#"{"permissions":{"disableBypassPermissionsMode":"disable","defaultMode":"bypassPermissions"}}"#,
    );
    let loaded = SettingsLoader::new(&f.cwd).load().unwrap();
    assert!(loaded.bypass_disabled());
    assert!(
        loaded
            .apply(PermissionEngine::builder(), None)
            .build()
            .is_err()
    );
}

#[test]
fn policies_settings_set_the_file_access_roots_and_the_mcp_lists() {
    let f = fixture();
    std::fs::create_dir_all(f.cwd.join("vault")).unwrap();
    std::fs::create_dir_all(f.home.join("shared")).unwrap();
    write(
        &f.cwd.join(".tascer/settings.json"),
        r#"{"policies": {"fileAccess": {"restrictedRoots": ["vault"], "blockOutside": true},
                         "mcp": {"deny": ["shell"], "allow": ["docs__search"]}}}"#,
    );
    write(
        &f.home.join(".tascer/settings.json"),
        r#"{"policies": {"fileAccess": {"allowedRoots": ["~/shared"], "blockOutside": false},
                         "mcp": {"default": "deny"}}}"#,
    );
    let loaded = SettingsLoader::new(&f.cwd).home(&f.home).load().unwrap();
    let config = loaded.file_access(Some(&f.home));
    assert_eq!(config.restricted_roots, [f.cwd.join("vault")]);
    assert_eq!(config.allowed_roots, [f.home.join("shared")]);
    assert_eq!(
        config.block_outside,
        Some(true),
        "the project's switch wins"
    );
    let engine = loaded
        .apply(PermissionEngine::builder(), Some(&f.home))
        .default_policies()
        .mode(PermissionMode::BypassPermissions)
        .build()
        .unwrap();
    let decide = |tool: &str, input: serde_json::Value| {
        let d = engine.evaluate(&ToolCall::new(tool, input, &f.cwd));
        (d.behavior, d.decided_by)
    };
    let policy = |name: &str| DecisionSource::Policy { name: name.into() };
    let read = |path: &Path| json!({"file_path": path});
    assert_eq!(
        decide("Read", read(&f.cwd.join("vault/key.txt"))),
        (Behavior::Deny, policy("file-access")),
        "a restricted root, even in bypassPermissions"
    );
    assert_eq!(
        decide("Read", read(Path::new("/opt/elsewhere.txt"))),
        (Behavior::Deny, policy("file-access")),
        "outside the allowed roots"
    );
    assert_eq!(
        decide("Read", read(&f.home.join("shared/notes.txt"))).0,
        Behavior::Allow,
        "an allowed root from the user's settings"
    );
    assert_eq!(
        decide("mcp__shell__run", json!({})),
        (Behavior::Deny, policy("mcp"))
    );
    assert_eq!(
        decide("mcp__docs__fetch", json!({})),
        (Behavior::Deny, policy("mcp")),
        "unlisted: the user's default"
    );
    assert_eq!(decide("mcp__docs__search", json!({})).0, Behavior::Allow);

    // A misspelt key is an error naming the file.
    write(
        &f.cwd.join(".tascer/settings.local.json"),
        r#"{"policies": {"fileAccess": {"restrictedRoot": ["vault"]}}}"#,
    );
    let err = SettingsLoader::new(&f.cwd)
        .home(&f.home)
        .load()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("settings.local.json") && err.contains("restrictedRoot"),
        "{err}"
    );
}
