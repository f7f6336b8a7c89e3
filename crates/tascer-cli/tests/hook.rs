//! `tascer hook`: Claude Code's command-hook protocol, answered by the
//! built binary with Tascer's settings, and recorded in a ledger session
//! per Claude Code session that `tascer verify` checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use common::{home_db_texts, hook, ledger_rows, report_json, run_with_stdin, tascer, tascer_hook};

const SESSION: &str = "5f0c2a1e-cc00-4d7e-9a51-0123456789ab";

fn event(cwd: &Path, name: &str, mode: &str, extra: Value) -> Value {
    let mut v = json!({
        "hook_event_name": name,
        "session_id": SESSION,
        "transcript_path": "/home/u/.claude/projects/x/session.jsonl",
        "cwd": cwd.display().to_string(),
        "permission_mode": mode,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn bash(cwd: &Path, mode: &str, id: &str, command: &str) -> Value {
    event(
        cwd,
        "PreToolUse",
        mode,
        json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id}),
    )
}

fn stdout_json(out: &Output) -> Option<Value> {
    let text = String::from_utf8_lossy(&out.stdout);
    let text = text.trim();
    (!text.is_empty()).then(|| serde_json::from_str(text).unwrap())
}

/// A Tascer home and a project whose settings deny `rm` and ask about
/// `git push`.
fn project_with_rules() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join(".tascer")).unwrap();
    std::fs::write(
        work.path().join(".tascer/settings.json"),
        json!({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]}}).to_string(),
    )
    .unwrap();
    (home, work)
}

#[test]
fn deny_rules_hold_in_every_mode_and_the_session_verifies() {
    let (home, work) = project_with_rules();
    let keys = tascer(home.path(), work.path())
        .args(["keys", "generate"])
        .output()
        .unwrap();
    assert!(keys.status.success(), "{keys:?}");

    let start = event(
        work.path(),
        "SessionStart",
        "default",
        json!({"source": "startup"}),
    );
    assert_eq!(
        hook(home.path(), work.path(), &start).status.code(),
        Some(0)
    );

    // A denied command, in bypassPermissions too: deny with Tascer's reason.
    for (i, mode) in ["default", "acceptEdits", "bypassPermissions"]
        .iter()
        .enumerate()
    {
        let out = hook(
            home.path(),
            work.path(),
            &bash(work.path(), mode, &format!("toolu_rm{i}"), "rm -rf build"),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let answer = stdout_json(&out).expect("a decision");
        let specific = &answer["hookSpecificOutput"];
        assert_eq!(specific["hookEventName"], "PreToolUse");
        assert_eq!(specific["permissionDecision"], "deny", "{mode}: {answer}");
        let reason = specific["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("Bash(rm:*)"), "{reason}");
    }

    // An explicit Tascer ask rule is asked; a command only the mode would
    // ask about is left to Claude Code (no decision).
    let out = hook(
        home.path(),
        work.path(),
        &bash(work.path(), "default", "toolu_push", "git push origin main"),
    );
    let answer = stdout_json(&out).expect("a decision");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    let out = hook(
        home.path(),
        work.path(),
        &bash(work.path(), "default", "toolu_ls", "ls"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_json(&out), None, "{out:?}");

    // The benign call runs; PostToolUse closes its record with the result.
    let post = event(
        work.path(),
        "PostToolUse",
        "default",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_ls",
               "tool_response": {"stdout": "README.md\n", "stderr": "", "interrupted": false}}),
    );
    let out = hook(home.path(), work.path(), &post);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let end = event(
        work.path(),
        "SessionEnd",
        "default",
        json!({"reason": "prompt_input_exit"}),
    );
    assert_eq!(hook(home.path(), work.path(), &end).status.code(), Some(0));

    // One ledger session for the Claude Code session, signed, verified.
    let verify = tascer(home.path(), work.path())
        .args(["verify", SESSION])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{text}{verify:?}");
    assert!(!text.contains("UNSIGNED"), "{text}");
    let rows = ledger_rows(home.path(), SESSION);
    assert_eq!(rows.first().unwrap().kind, "session_start");
    assert_eq!(rows.last().unwrap().kind, "session_end");
    let report = report_json(home.path(), work.path(), SESSION);
    let calls = report["tools"].as_array().unwrap();
    let status = |id: &str| {
        calls
            .iter()
            .find(|c| c["record"]["tool_use_id"] == id)
            .map(|c| c["record"]["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no record of {id}: {report}"))
    };
    assert_eq!(status("toolu_rm2"), "blocked");
    assert_eq!(status("toolu_ls"), "validated");
    // PostToolUse closed the record PreToolUse kept (with its permission
    // decision); only the asked `git push`, which never ran, still waits.
    let ls = calls
        .iter()
        .find(|c| c["record"]["tool_use_id"] == "toolu_ls")
        .unwrap();
    assert_eq!(ls["record"]["context"]["note"], Value::Null, "{ls}");
    assert_eq!(ls["record"]["permission"]["behavior"], "ask", "{ls}");
    let waiting = home_db_texts(home.path(), "SELECT tool_use_id FROM pending_calls");
    assert_eq!(waiting, ["toolu_push"]);
}

#[test]
fn bad_input_is_a_clear_non_blocking_error() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut cmd = tascer(home.path(), work.path());
    cmd.arg("hook").stdin(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not JSON"), "{stderr}");

    // A PreToolUse Tascer cannot decide is refused (fail closed).
    let out = hook(
        home.path(),
        work.path(),
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"}),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no session_id"),
        "{out:?}"
    );
}

#[test]
fn install_keeps_other_hooks_is_idempotent_and_uninstall_restores_the_bytes() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let settings = work.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // The user's own file, with their formatting and their own hook.
    let original = "{\n  \"model\": \"opus\",\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]}\n}\n";
    std::fs::write(&settings, original).unwrap();
    let install = |args: &[&str]| {
        let out = tascer(home.path(), work.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    install(&["install", "claude-code", "--project"]);
    let first = std::fs::read_to_string(&settings).unwrap();
    let value: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(value["model"], "opus");
    let pre = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "the user's hook stays: {value}");
    assert_eq!(pre[0]["hooks"][0]["command"], "./mine.sh");
    // The hook-only executable built next to this tascer.
    let ours = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert_eq!(ours, env!("CARGO_BIN_EXE_tascer-hook"));
    for event in [
        "PostToolUse",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "UserPromptSubmit",
    ] {
        assert!(value["hooks"][event].is_array(), "{event}: {value}");
    }
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(mcp["mcpServers"]["tascer"]["args"], json!(["mcp", "serve"]));
    // The /commit and /push slash commands call the gatekeeper's tools.
    let commands = work.path().join(".claude/commands");
    for (file, tool) in [
        ("commit.md", "mcp__tascer__commit"),
        ("push.md", "mcp__tascer__push"),
    ] {
        let text = std::fs::read_to_string(commands.join(file)).unwrap();
        assert!(
            text.starts_with("---\ndescription:")
                && text.contains(&format!("allowed-tools: {tool}\n")),
            "{text}"
        );
    }

    // Idempotent.
    let again = install(&["install", "claude-code"]);
    assert!(again.contains("already set up"), "{again}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), first);

    // Uninstall gives back exactly what was there.
    install(&["uninstall", "claude-code"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    assert!(
        !work.path().join(".mcp.json").exists(),
        "install created it"
    );
    assert!(!commands.exists(), "install created the commands");
}

#[test]
fn the_tascer_hook_executable_answers_as_tascer_hook() {
    let (home, work) = project_with_rules();
    let events = |session: &str| {
        let mut events = vec![
            bash(work.path(), "default", "toolu_rm", "rm -rf build"),
            bash(work.path(), "default", "toolu_push", "git push origin main"),
            bash(work.path(), "default", "toolu_ls", "ls"),
            event(
                work.path(),
                "PostToolUse",
                "default",
                json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_ls",
                       "tool_response": {"stdout": "a\n", "stderr": "", "interrupted": false}}),
            ),
            event(
                work.path(),
                "SessionEnd",
                "default",
                json!({"reason": "exit"}),
            ),
        ];
        for e in &mut events {
            e["session_id"] = json!(session);
        }
        events
    };
    let (a, b) = (
        "session-tascer-hook-subcommand",
        "session-tascer-hook-executable",
    );
    for (via_subcommand, via_executable) in events(a).iter().zip(events(b)) {
        let mut cmd = tascer(home.path(), work.path());
        cmd.arg("hook");
        let expected = run_with_stdin(cmd, &via_subcommand.to_string());
        let got = run_with_stdin(
            tascer_hook(home.path(), work.path()),
            &via_executable.to_string(),
        );
        assert_eq!(
            got.status.code(),
            expected.status.code(),
            "{via_executable}"
        );
        assert_eq!(
            stdout_json(&got),
            stdout_json(&expected),
            "{via_executable}"
        );
    }
    for session in [a, b] {
        let verify = tascer(home.path(), work.path())
            .args(["verify", session])
            .output()
            .unwrap();
        assert!(verify.status.success(), "{verify:?}");
    }
    let report = report_json(home.path(), work.path(), b);
    assert_eq!(report["tool_status_counts"]["blocked"], 1, "{report}");
    assert_eq!(report["tool_status_counts"]["validated"], 1, "{report}");
}

#[test]
fn install_without_the_hook_executable_runs_tascer_hook() {
    // A tascer with no tascer-hook next to it (a copy of the binary alone).
    let bin = tempfile::tempdir().unwrap();
    let alone = bin.path().join("tascer");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_tascer"), &alone).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_tascer"), &alone).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&alone)
        .args(["install", "claude-code", "--project"])
        .env("TASCER_HOME", home.path())
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(work.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(command, format!("{} hook", alone.display()));
}
