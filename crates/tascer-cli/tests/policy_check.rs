//! `tascer policy check` on sessions recorded by real `tascer run`s
//! against the scripted mock model: a new deny rule lists exactly the
//! calls it would have refused (exit 1), a new allow rule the calls it
//! would have let through (exit 0), `--all` covers every session, the
//! settings a session ran with change nothing, and bad settings exit 2
//! naming the rule and where it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use common::texts;

/// A session's workspace: `.tascer/settings.json` holds `settings`.
fn workspace(settings: Option<Value>) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    std::fs::write(ws.path().join("old.log"), "old\n").unwrap();
    if let Some(settings) = settings {
        std::fs::create_dir_all(ws.path().join(".tascer")).unwrap();
        std::fs::write(
            ws.path().join(".tascer/settings.json"),
            settings.to_string(),
        )
        .unwrap();
    }
    ws
}

/// The project settings of the "allowed" session: Bash, Write and Read.
fn allow_all() -> Value {
    json!({"permissions": {"allow": ["Bash", "Write", "Read"]}})
}

/// Six calls, two of them `rm`.
fn busy_scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Bash", json!({"command": "echo hi"}))
                .with_tool("Write", json!({"file_path": "a.txt", "content": "x\n"}))
                .with_tool("Bash", json!({"command": "rm old.log"}))
                .with_tool("Read", json!({"file_path": "notes.txt"}))
                .with_tool("Bash", json!({"command": "rm -f a.txt"}))
                .with_tool("Bash", json!({"command": "cat notes.txt"})),
        )
        .turn(Turn::text("done"))
}

/// Two Bash calls that nothing allows (refused: no one to ask).
fn refused_scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Bash", json!({"command": "echo hello"}))
                .with_tool("Bash", json!({"command": "rm notes.txt"})),
        )
        .turn(Turn::text("done"))
}

/// Runs `scenario` as a `tascer run` in `ws`; returns the session id and
/// its permission denials' tool_use ids count.
async fn record(home: &Path, ws: &Path, scenario: Scenario) -> (String, usize) {
    let result = common::record_run(home, ws, scenario, &[]).await;
    let denials = result["permission_denials"].as_array().unwrap().len();
    (result["session_id"].as_str().unwrap().to_string(), denials)
}

/// `tascer policy check ARGS` in `cwd`.
fn check(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    common::tascer(home, cwd)
        .args(["policy", "check"])
        .args(args)
        .output()
        .unwrap()
}

/// `tascer policy check --json ARGS`: its exit code and output.
fn check_json(home: &Path, cwd: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = check(home, cwd, &all);
    let (stdout, stderr) = texts(&out);
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (out.status.code().unwrap(), value)
}

/// `(session, command or path, change)` of each listed change.
fn changes(value: &Value) -> Vec<(String, String, String)> {
    value["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let input = &c["input"];
            let what = input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .unwrap_or_default();
            (
                c["session_id"].as_str().unwrap().to_string(),
                what.to_string(),
                c["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const DENY_RM: &str = r#"{"permissions":{"deny":["Bash(rm:*)"]}}"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_new_deny_rule_lists_exactly_the_calls_it_would_have_refused() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace(Some(allow_all()));
    let (id, denials) = record(home.path(), ws.path(), busy_scenario()).await;
    assert_eq!(denials, 0, "every call ran");

    let (code, value) = check_json(home.path(), ws.path(), &["--settings", DENY_RM, &id]);
    assert_eq!(code, 1, "an allowed call would be refused: {value:#}");
    let refused = |cmd: &str| (id.clone(), cmd.to_string(), "newly_refused".to_string());
    assert_eq!(
        changes(&value),
        [refused("rm old.log"), refused("rm -f a.txt")],
        "{value:#}"
    );
    assert_eq!(
        value["totals"],
        json!({"unchanged": 4, "newly_refused": 2, "newly_asked": 0,
               "newly_allowed": 0, "undecided": 0})
    );
    let first = &value["changes"][0];
    assert_eq!(first["before"]["behavior"], "allow");
    assert_eq!(first["before"]["decided_by"]["rule"], "Bash");
    assert_eq!(first["after"]["behavior"], "deny");
    assert_eq!(first["after"]["decided_by"]["rule"], "Bash(rm:*)");
    assert!(
        value["skipped_deciders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().contains("hooks")),
        "{value:#}"
    );

    // The table says the same, with the reason and what was not run.
    let out = check(home.path(), ws.path(), &["--settings", DENY_RM, &id]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains(" → ")).collect();
    assert_eq!(rows.len(), 3, "a header and two calls: {stdout}");
    for (row, cmd) in rows[1..].iter().zip(["rm old.log", "rm -f a.txt"]) {
        assert!(row.contains(cmd), "{row}");
        assert!(row.contains("allow (rule) → deny"), "{row}");
        assert!(row.contains("denied by rule `Bash(rm:*)`"), "{row}");
    }
    assert!(
        stdout.contains("4 unchanged, 2 newly refused, 0 newly asked, 0 newly allowed"),
        "{stdout}"
    );
    assert!(stdout.contains("not run: hooks"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_a_session_ran_with_change_nothing() {
    let home = tempfile::tempdir().unwrap();
    let allowed = workspace(Some(allow_all()));
    let refused = workspace(None);
    let (a, _) = record(home.path(), allowed.path(), busy_scenario()).await;
    let (b, denials) = record(home.path(), refused.path(), refused_scenario()).await;
    assert_eq!(denials, 2);
    for id in [&a, &b] {
        let (code, value) = check_json(home.path(), allowed.path(), &["--settings", "{}", id]);
        assert_eq!(code, 0, "{value:#}");
        assert_eq!(changes(&value), [], "{value:#}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_allow_rule_lists_the_refused_calls_it_would_let_through() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace(None);
    let (id, denials) = record(home.path(), ws.path(), refused_scenario()).await;
    assert_eq!(denials, 2, "nothing allowed Bash");

    let settings = r#"{"permissions":{"allow":["Bash(echo:*)"]}}"#;
    let (code, value) = check_json(home.path(), ws.path(), &["--settings", settings, &id]);
    assert_eq!(code, 0, "nothing allowed is refused: {value:#}");
    assert_eq!(
        changes(&value),
        [(id.clone(), "echo hello".into(), "newly_allowed".into())],
        "the rm call is asked again, as it was: {value:#}"
    );
    let change = &value["changes"][0];
    assert_eq!(change["before"]["behavior"], "deny");
    assert_eq!(change["after"]["decided_by"]["rule"], "Bash(echo:*)");
    assert_eq!(value["totals"]["unchanged"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn all_re_judges_every_session_in_the_store() {
    let home = tempfile::tempdir().unwrap();
    let allowed = workspace(Some(allow_all()));
    let refused = workspace(None);
    let (a, _) = record(home.path(), allowed.path(), busy_scenario()).await;
    let (b, _) = record(home.path(), refused.path(), refused_scenario()).await;

    let settings = r#"{"permissions":{"deny":["Bash(rm:*)"],"allow":["Bash(echo:*)"]}}"#;
    let (code, value) = check_json(
        home.path(),
        allowed.path(),
        &["--settings", settings, "--all"],
    );
    assert_eq!(code, 1, "{value:#}");
    let mut sessions: Vec<&str> = value["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    sessions.sort_unstable();
    let mut expected = [a.as_str(), b.as_str()];
    expected.sort_unstable();
    assert_eq!(sessions, expected);
    let mut got = changes(&value);
    got.sort();
    let mut want = vec![
        (
            a.clone(),
            "rm old.log".to_string(),
            "newly_refused".to_string(),
        ),
        (a.clone(), "rm -f a.txt".into(), "newly_refused".into()),
        (b.clone(), "echo hello".into(), "newly_allowed".into()),
    ];
    want.sort();
    assert_eq!(got, want, "{value:#}");

    // --since in the future leaves nothing to judge.
    let (code, value) = check_json(
        home.path(),
        allowed.path(),
        &["--settings", settings, "--all", "--since", "2999-01-01"],
    );
    assert_eq!(code, 0, "{value:#}");
    assert_eq!(value["totals"]["unchanged"], 0);
    assert_eq!(changes(&value), []);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_settings_exit_2_naming_the_rule_and_where_it_is() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace(Some(allow_all()));
    let (id, _) = record(home.path(), ws.path(), busy_scenario()).await;

    let inline = r#"{"permissions":{"deny":["Bash(rm:*"]}}"#;
    let out = check(home.path(), ws.path(), &["--settings", inline, &id]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("--settings"), "{stderr}");
    assert!(stderr.contains("`Bash(rm:*`"), "{stderr}");
    assert_eq!(
        stderr.matches("missing closing").count(),
        1,
        "said once: {stderr}"
    );

    let file = ws.path().join("new-settings.json");
    std::fs::write(&file, inline).unwrap();
    let path = file.to_str().unwrap();
    let out = check(home.path(), ws.path(), &["--settings", path, &id]);
    let stderr = texts(&out).1;
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(path), "names the file: {stderr}");
    assert!(stderr.contains("`Bash(rm:*`"), "names the rule: {stderr}");

    let out = check(
        home.path(),
        ws.path(),
        &["--settings", "{}", "no-such-session"],
    );
    let stderr = texts(&out).1;
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no-such-session"), "{stderr}");
}
