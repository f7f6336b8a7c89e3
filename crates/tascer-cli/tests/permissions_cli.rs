//! `tascer run` permission flags: `--permission-mode`,
//! `--dangerously-skip-permissions`, `--settings`, `--setting-sources`,
//! `--allowedTools` / `--disallowedTools`, and project settings files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

/// A `tascer run --output-format json` command against `server`, with a
/// clean provider environment and its own home.
fn run(home: &Path, cwd: &Path, server: &MockServer, flags: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "TASCER_MODEL"] {
        cmd.env_remove(var);
    }
    cmd.env("TASCER_HOME", home)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(cwd)
        .args(["run", "--output-format", "json"])
        .args(flags)
        .arg("go");
    cmd
}

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn write_then_echo() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Write", json!({"file_path": "w.txt", "content": "x"}))
                .with_tool("Bash", json!({"command": "echo hi"})),
        )
        .turn(Turn::text("done"))
}

#[tokio::test(flavor = "multi_thread")]
async fn default_mode_denies_and_lists_denials_without_failing_the_run() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    let out = output(run(home.path(), ws.path(), &server, &[])).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = result(&out);
    let denied: Vec<&str> = r["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["Write", "Bash"]);
    assert!(!ws.path().join("w.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_edits_and_allowed_tools_let_the_calls_run() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    let flags = [
        "--permission-mode",
        "acceptEdits",
        "--allowedTools=Bash(echo:*)",
    ];
    let out = output(run(home.path(), ws.path(), &server, &flags)).await;
    let r = result(&out);
    assert_eq!(r["permission_denials"], json!([]), "{r}");
    assert!(ws.path().join("w.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_mode_runs_workspace_work_and_refuses_the_rest_without_a_reviewer() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("build")).unwrap();
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Write", json!({"file_path": "w.txt", "content": "x"}))
                    .with_tool("Bash", json!({"command": "ls"}))
                    .with_tool("Bash", json!({"command": "rm -rf build"}))
                    .with_tool("Read", json!({"file_path": "/etc/shadow"})),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let out = output(run(
        home.path(),
        ws.path(),
        &server,
        &["--permission-mode", "auto"],
    ))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = result(&out);
    let denied: Vec<&str> = r["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["Bash", "Read"], "{r}");
    assert!(ws.path().join("w.txt").exists(), "the edit ran");
    assert!(ws.path().join("build").exists(), "rm -rf did not run");
}

#[tokio::test(flavor = "multi_thread")]
async fn inline_settings_deny_rules_beat_skip_permissions() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    let settings = json!({"permissions": {"deny": ["Bash(echo:*)"]}}).to_string();
    let flags = [
        "--dangerously-skip-permissions",
        "--settings",
        settings.as_str(),
    ];
    let out = output(run(home.path(), ws.path(), &server, &flags)).await;
    let r = result(&out);
    assert_eq!(r["permission_denials"][0]["tool_name"], "Bash", "{r}");
    assert!(
        ws.path().join("w.txt").exists(),
        "bypass approved the Write"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn project_settings_are_read_unless_sources_exclude_them() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".tascer")).unwrap();
    std::fs::write(
        ws.path().join(".tascer/settings.json"),
        json!({"permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(echo:*)"]}})
            .to_string(),
    )
    .unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    let out = output(run(home.path(), ws.path(), &server, &[])).await;
    assert_eq!(result(&out)["permission_denials"], json!([]));

    std::fs::remove_file(ws.path().join("w.txt")).unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    let flags = ["--setting-sources", "user,local"];
    let out = output(run(home.path(), ws.path(), &server, &flags)).await;
    assert_eq!(
        result(&out)["permission_denials"].as_array().unwrap().len(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_flags_fail_with_one_clear_line() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::start(write_then_echo()).await.unwrap();
    for (flags, expected) in [
        (vec!["--permission-mode", "yolo"], "yolo"),
        (
            vec!["--setting-sources", "global"],
            "unknown setting source",
        ),
        (vec!["--settings", "{not json"], "--settings"),
        (vec!["--settings", "missing.json"], "missing.json"),
    ] {
        let out = output(run(home.path(), ws.path(), &server, &flags)).await;
        assert!(!out.status.success(), "{flags:?} should fail");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
    assert!(server.requests().is_empty(), "no model call on bad flags");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_access_policy_takes_its_roots_from_the_settings() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("vault")).unwrap();
    std::fs::write(ws.path().join("vault/key.txt"), "secret").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "notes").unwrap();
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Read", json!({"file_path": "vault/key.txt"}))
                    .with_tool("Read", json!({"file_path": "notes.txt"})),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let settings = json!({"policies": {"fileAccess": {"restrictedRoots": ["vault"]}}}).to_string();
    let flags = [
        "--dangerously-skip-permissions",
        "--settings",
        settings.as_str(),
    ];
    let out = output(run(home.path(), ws.path(), &server, &flags)).await;
    let r = result(&out);
    let denied: Vec<&str> = r["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_input"]["file_path"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["vault/key.txt"], "{r}");
    let mut audit = Command::new(env!("CARGO_BIN_EXE_tascer"));
    audit
        .env("TASCER_HOME", home.path())
        .current_dir(ws.path())
        .args(["audit", "query", "--json", "--decider", "file-access"]);
    let rows: Value = serde_json::from_slice(&output(audit).await.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert!(
        rows[0]["reason"]
            .as_str()
            .unwrap()
            .contains("inside the restricted directory"),
        "{rows}"
    );
}
