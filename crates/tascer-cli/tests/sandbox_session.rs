//! The sandbox in a real `tascer run` session (issue 22): a Bash call that
//! writes outside the workspace is refused by the kernel even in
//! `bypassPermissions`, the model is told why, and the refusal is in the
//! ledger; `sandbox.enabled: false` turns it off. A gate command
//! (`tests_pass`) runs under the same sandbox.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

fn scenario(target: &Path) -> Scenario {
    Scenario::new()
        .turn(Turn::new().with_text("Writing outside.").with_tool_id(
            "toolu_out",
            "Bash",
            json!({"command": format!("touch '{}'", target.display())}),
        ))
        .turn(Turn::text("Done."))
}

/// Runs `scenario` as a `tascer run` session with `extra` flags; returns
/// its id.
fn run_scenario(home: &Path, ws: &Path, scenario: Scenario, extra: &[&str]) -> String {
    let server = MockServer::start_blocking(scenario).unwrap();
    let out = run_cmd(home, ws, &server.url(), "go", extra)
        .output()
        .unwrap();
    json_lines(&out.stdout)
        .iter()
        .find(|f| f["type"] == "result")
        .and_then(|f| f["session_id"].as_str())
        .unwrap_or_else(|| panic!("no result frame: {}", String::from_utf8_lossy(&out.stderr)))
        .to_string()
}

/// Runs the session of [`scenario`]; returns its id.
fn run_session(home: &Path, ws: &Path, target: &Path, extra: &[&str]) -> String {
    run_scenario(home, ws, scenario(target), extra)
}

/// False (after saying so) when this kernel cannot sandbox.
fn sandbox_available() -> bool {
    if tascer_sandbox::support().landlock {
        return true;
    }
    let why = "the kernel has no Landlock";
    eprintln!("SKIPPED: sandbox_session: {why}");
    tascer_testkit::skip("sandbox_session", why);
    false
}

/// The ledger's payloads of `session`, as one JSON text.
fn ledger_text(home: &Path, session: &str) -> String {
    serde_json::to_string(
        &ledger_rows(home, session)
            .iter()
            .map(|r| r.payload.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

#[test]
fn a_write_outside_is_refused_told_and_recorded_even_in_bypass_permissions() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, ws, outside) = (root.join("home"), root.join("ws"), root.join("outside"));
    for d in [&home, &ws, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let target = outside.join("evil");

    let session = run_session(&home, &ws, &target, &[]);
    assert!(
        !target.exists(),
        "the sandboxed command wrote outside the workspace"
    );
    let ledger = ledger_text(&home, &session);
    let expected = format!(
        "the sandbox refused a write outside the workspace: {}",
        target.display()
    );
    assert!(
        ledger.contains(&expected),
        "the ledger lacks the refusal: {ledger}"
    );

    // Turned off in the settings, the same command writes.
    let settings = r#"{"sandbox":{"enabled":false}}"#;
    run_session(&home, &ws, &target, &["--settings", settings]);
    assert!(
        target.exists(),
        "with sandbox.enabled false the command should run unconfined"
    );
}

#[test]
fn a_gate_command_runs_sandboxed_its_refusal_fails_the_gate_and_is_recorded() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, ws, outside) = (root.join("home"), root.join("ws"), root.join("outside"));
    for d in [&home, &ws, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let target = outside.join("from-the-tests");
    // The "tests" write a report in the workspace (allowed), then outside
    // it (refused by the kernel), as code the model wrote might.
    let command = format!("echo ok > test-report.txt && touch '{}'", target.display());
    let settings = json!({"validation": {
        "per_tool": {"Write": {"post_gates": ["tests_pass"]}},
        "gates": {"tests_pass": {"command": command}}
    }})
    .to_string();
    let scenario = Scenario::new()
        .turn(Turn::new().with_tool_id(
            "toolu_write",
            "Write",
            json!({"file_path": ws.join("lib.py").display().to_string(), "content": "x = 1\n"}),
        ))
        .turn(Turn::text("Done."));
    let session = run_scenario(&home, &ws, scenario, &["--settings", &settings]);

    assert!(
        ws.join("test-report.txt").exists(),
        "the gate command did not run in the workspace"
    );
    assert!(
        !target.exists(),
        "the gate command wrote outside the workspace"
    );
    let gate = ledger_rows(&home, &session)
        .iter()
        .filter_map(|r| r.payload["post_gates"].as_array().cloned())
        .flatten()
        .find(|g| g["gate"] == "tests_pass")
        .unwrap_or_else(|| {
            panic!(
                "no tests_pass result in the ledger: {}",
                ledger_text(&home, &session)
            )
        });
    let expected = format!(
        "the sandbox refused a write outside the workspace: {}",
        target.display()
    );
    let message = gate["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&expected),
        "the gate's message lacks the refusal: {gate}"
    );
}

/// Runs one Bash call that asks to leave the sandbox; returns the session.
fn run_escape(home: &Path, ws: &Path, target: &Path, settings: &str) -> String {
    let scenario = Scenario::new()
        .turn(Turn::new().with_tool_id(
            "toolu_escape",
            "Bash",
            json!({
                "command": format!("touch '{}'", target.display()),
                "dangerouslyDisableSandbox": true,
            }),
        ))
        .turn(Turn::text("Done."));
    run_scenario(home, ws, scenario, &["--settings", settings])
}

#[test]
fn leaving_the_sandbox_takes_a_person_or_an_excluded_command_and_is_recorded() {
    if !sandbox_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, ws, outside) = (root.join("home"), root.join("ws"), root.join("outside"));
    for d in [&home, &ws, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let target = outside.join("escaped");

    // Headless, in bypassPermissions: nobody can approve, so it is refused.
    let session = run_escape(&home, &ws, &target, "{}");
    assert!(!target.exists(), "left the sandbox without approval");
    let ledger = ledger_text(&home, &session);
    assert!(
        ledger.contains("sandbox-escape") && ledger.contains("outside the OS sandbox"),
        "the refusal is not recorded: {ledger}"
    );

    // Listed in sandbox.excludedCommands: it runs outside, and says so.
    let settings = r#"{"sandbox":{"excludedCommands":["touch:*"]}}"#;
    let session = run_escape(&home, &ws, &target, settings);
    assert!(target.exists(), "an excluded command should run outside");
    let ledger = ledger_text(&home, &session);
    assert!(
        ledger.contains(r#""disabled_by":"dangerouslyDisableSandbox""#),
        "the ledger does not say the command ran outside the sandbox: {ledger}"
    );
    std::fs::remove_file(&target).unwrap();

    // allowUnsandboxedCommands false: refused whatever the list says.
    let settings =
        r#"{"sandbox":{"excludedCommands":["touch:*"],"allowUnsandboxedCommands":false}}"#;
    run_escape(&home, &ws, &target, settings);
    assert!(
        !target.exists(),
        "allowUnsandboxedCommands false was ignored"
    );
}
