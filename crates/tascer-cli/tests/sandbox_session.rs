//! The sandbox in a real `tascer run` session (issue 22): a Bash call that
//! writes outside the workspace is refused by the kernel even in
//! `bypassPermissions`, the model is told why, and the refusal is in the
//! ledger; `sandbox.enabled: false` turns it off.
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

/// Runs the session; returns its id.
fn run_session(home: &Path, ws: &Path, target: &Path, extra: &[&str]) -> String {
    let server = MockServer::start_blocking(scenario(target)).unwrap();
    let out = run_cmd(home, ws, &server.url(), "go", extra)
        .output()
        .unwrap();
    let frames = json_lines(&out.stdout);
    let result = frames
        .iter()
        .find(|f| f["type"] == "result")
        .unwrap_or_else(|| panic!("no result frame: {}", String::from_utf8_lossy(&out.stderr)));
    result["session_id"].as_str().unwrap().to_string()
}

#[test]
fn a_write_outside_is_refused_told_and_recorded_even_in_bypass_permissions() {
    let support = tascer_sandbox::support();
    if !support.landlock {
        let why = "the kernel has no Landlock";
        eprintln!("SKIPPED: sandbox_session: {why}");
        tascer_testkit::skip("sandbox_session", why);
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
    let ledger = serde_json::to_string(
        &ledger_rows(&home, &session)
            .iter()
            .map(|r| r.payload.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap();
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
