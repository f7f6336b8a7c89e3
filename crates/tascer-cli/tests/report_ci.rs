//! `tascer agent` runs a session as `tascer run` does; `tascer report
//! --format json` carries the verify verdict as `success`; `tascer report
//! --ci` writes `.ci/proof-report.json` for the latest session of the
//! working directory and exits 1 once the ledger was tampered with; a
//! one-word prompt that reads like a command is refused before any model
//! call; the capture flags reach the records.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let work = root.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .status()
        .unwrap();
    assert!(git.success());
    Dirs {
        _root: root,
        home,
        work,
    }
}

/// Runs `tascer args…` in `work` with `home`, the model at `url`.
async fn tascer(dirs: &Dirs, url: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env("TASCER_HOME", &dirs.home)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", url)
        .env_remove("TASCER_LOG")
        .current_dir(&dirs.work)
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_ci_report(work: &Path) -> Value {
    let raw = std::fs::read_to_string(work.join(".ci/proof-report.json")).unwrap();
    serde_json::from_str(&raw).unwrap()
}

/// Replaces the payload of the session's first tool record in the ledger.
fn tamper_a_tool_record(home: &Path, session: &str) {
    let conn = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    let n = conn
        .execute(
            "UPDATE ledger_entries SET payload = json_set(payload, '$.tool', 'Forged') \
             WHERE session_id = ?1 AND kind = 'tool_record'",
            rusqlite::params![session],
        )
        .unwrap();
    assert!(n >= 1, "no tool record to tamper with");
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_runs_and_report_ci_turns_red_after_tampering() {
    let dirs = dirs();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo proof"})))
            .turn(Turn::text("Done.")),
    )
    .await
    .unwrap();
    let run = tascer(
        &dirs,
        &server.url(),
        &[
            "agent",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
            "go",
        ],
    )
    .await;
    assert!(run.status.success(), "{}", text(&run.stderr));
    let result: Value = serde_json::from_slice(&run.stdout).unwrap();
    let session = result["session_id"].as_str().unwrap().to_owned();

    let report = tascer(&dirs, "", &["report", &session, "--format", "json"]).await;
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    let data: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(data["success"], true);
    assert_eq!(data["verification"]["ok"], true);

    // No session named: the latest one of the working directory.
    let ci = tascer(&dirs, "", &["report", "--ci"]).await;
    assert_eq!(ci.status.code(), Some(0), "{}", text(&ci.stderr));
    let proof = read_ci_report(&dirs.work);
    assert_eq!(proof["success"], true);
    assert_eq!(proof["session_id"], session.as_str());
    let records = proof["records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["tool"], "Bash");
    assert_eq!(records[0]["proof_valid"], true);

    tamper_a_tool_record(&dirs.home, &session);
    let ci = tascer(&dirs, "", &["report", "--ci"]).await;
    assert_eq!(ci.status.code(), Some(1), "{}", text(&ci.stdout));
    assert!(
        text(&ci.stdout).contains("NOT verified"),
        "{}",
        text(&ci.stdout)
    );
    let proof = read_ci_report(&dirs.work);
    assert_eq!(proof["success"], false);
    assert_eq!(proof["verification"]["ok"], false);
    let report = tascer(&dirs, "", &["report", &session, "--format", "json"]).await;
    assert_eq!(report.status.code(), Some(1));
    let data: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(data["success"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_like_word_is_not_sent_to_the_model() {
    let dirs = dirs();
    let server = MockServer::start(Scenario::new().turn(Turn::text("paid answer")))
        .await
        .unwrap();
    for word in ["agnet", "status", "verfy"] {
        let out = tascer(&dirs, &server.url(), &[word]).await;
        assert_eq!(out.status.code(), Some(2), "{word}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.contains(&format!("tascer run {word}")), "{err}");
    }
    assert!(server.requests().is_empty(), "a model call was made");
    // Sent on purpose, the same word is a prompt.
    let out = tascer(&dirs, &server.url(), &["-p", "status"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("paid answer"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn report_ci_without_a_session_here_says_so() {
    let dirs = dirs();
    let out = tascer(&dirs, "", &["report", "--ci"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("no session was run in"), "{err}");
    assert!(err.contains("tascer report --ci SESSION"), "{err}");
    assert!(!dirs.work.join(".ci/proof-report.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn capture_flags_reach_the_records() {
    let dirs = dirs();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "true"})))
            .turn(Turn::text("Done.")),
    )
    .await
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env("TASCER_HOME", &dirs.home)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("BUILD_TAG", "b-17")
        .current_dir(&dirs.work)
        .args(["run", "--output-format", "json"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(["--env-allowlist", "BUILD_TAG,NOT_SET"])
        .args([
            "--capture-git-state",
            "false",
            "--generate-proofs",
            "false",
            "go",
        ]);
    let run = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let result: Value = serde_json::from_slice(&run.stdout).unwrap();
    let session = result["session_id"].as_str().unwrap();
    let report = tascer(&dirs, "", &["report", session, "--format", "json"]).await;
    let data: Value = serde_json::from_slice(&report.stdout).unwrap();
    let record = &data["tools"][0]["record"];
    assert_eq!(record["context"]["env"], json!({"BUILD_TAG": "b-17"}));
    assert!(record["context"]["git"].is_null(), "{}", record["context"]);
    assert!(
        record.get("proof_hash").is_none_or(Value::is_null),
        "{record}"
    );
}
