//! Real Claude Code–style hook scripts from `tests/fixtures/hooks/`,
//! installed under `.claude/hooks/` of a temp project and configured the
//! way Claude Code documents it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::json;
use tascer_guard::hooks::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks")
}

/// A temp project with the fixture scripts in `.claude/hooks/`.
fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let hooks = tmp.path().join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), hooks.join(entry.file_name())).unwrap();
    }
    tmp
}

fn call(dir: &Path, tool: &str, input: serde_json::Value) -> PreToolUseInput {
    PreToolUseInput {
        common: HookCommon {
            session_id: "s".into(),
            transcript_path: dir.join("t.jsonl").display().to_string(),
            cwd: dir.display().to_string(),
            permission_mode: Some("default".into()),
        },
        tool_name: tool.into(),
        tool_input: input,
        tool_use_id: "toolu_01".into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn shell_script_blocks_dangerous_bash_via_exit_2() {
    let tmp = project();
    let dir = tmp.path();
    // `sh` explicitly, so the test does not depend on the copied exec bit;
    // the next test runs a script directly.
    let settings = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
        "command": "sh \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-dangerous-bash.sh", "timeout": 10}]}]});
    let runner = HookRunner::new(HookRegistry::from_settings(&settings, dir).unwrap());

    let (out, runs) = runner
        .pre_tool_use(call(
            dir,
            "Bash",
            json!({"command": "rm -rf / --no-preserve-root", "description": "wipe"}),
        ))
        .await;
    assert_eq!(
        out.denied(),
        Some("Blocked dangerous command: rm -rf / --no-preserve-root")
    );
    assert_eq!(runs[0].exit_code, Some(2));
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);

    let (out, runs) = runner
        .pre_tool_use(call(dir, "Bash", json!({"command": "ls -la \"src\""})))
        .await;
    assert_eq!(out.decision, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);

    // Not matched for other tools.
    let (_, runs) = runner
        .pre_tool_use(call(dir, "Read", json!({"file_path": "/x"})))
        .await;
    assert!(runs.is_empty());
}

#[tokio::test]
async fn python_script_denies_with_json() {
    let tmp = project();
    let dir = tmp.path();
    let settings = json!({"PreToolUse": [{"matcher": "Read|Edit|Write", "hooks": [{"type": "command",
        "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/protect_secrets.py"}]}]});
    let runner = HookRunner::new(HookRegistry::from_settings(&settings, dir).unwrap());

    let env_file = dir.join(".env").display().to_string();
    let (out, runs) = runner
        .pre_tool_use(call(dir, "Read", json!({"file_path": env_file})))
        .await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Deny {
            reason: ".env holds secrets; access is blocked by project policy".into()
        })
    );
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);
    assert_eq!(runs[0].exit_code, Some(0));
    let parsed = runs[0]
        .output
        .as_ref()
        .unwrap()
        .hook_specific_output
        .as_ref()
        .unwrap();
    assert_eq!(parsed.hook_event_name.as_deref(), Some("PreToolUse"));

    let (out, runs) = runner
        .pre_tool_use(call(
            dir,
            "Edit",
            json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}),
        ))
        .await;
    assert_eq!(out.decision, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);
}

#[tokio::test]
async fn scripts_run_directly_by_path() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = project();
    let dir = tmp.path();
    for name in ["block-dangerous-bash.sh", "protect_secrets.py"] {
        let p = dir.join(".claude/hooks").join(name);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let settings = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-dangerous-bash.sh"}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/protect_secrets.py"}]}
    ]});
    let runner = HookRunner::new(HookRegistry::from_settings(&settings, dir).unwrap());
    let (out, runs) = runner
        .pre_tool_use(call(dir, "Bash", json!({"command": "sudo rm -rf ~"})))
        .await;
    assert!(
        out.denied()
            .unwrap()
            .starts_with("Blocked dangerous command"),
        "{runs:?}"
    );
    assert_eq!(runs.len(), 2);
    let (out, _) = runner
        .pre_tool_use(call(
            dir,
            "Write",
            json!({"file_path": "/p/id_rsa", "content": ""}),
        ))
        .await;
    assert!(out.denied().unwrap().contains("id_rsa"));
}
