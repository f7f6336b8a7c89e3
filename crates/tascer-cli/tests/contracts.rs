//! `tascer contracts run|status` against the scripted mock model: a
//! directory with a good contract, a malformed one, one that exceeds its
//! turn budget and one that tries to write outside its files gets the right
//! statuses and Result sections, and every session verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

const GREET: &str = "# Contract: Greet the world\n\nWritten by the manager.\n\n## Status\npending\n\n## Task\nCreate `hello.txt` saying hello.\n\n## Constraints\n- Files the agent may touch: hello.txt\n- Tools allowed: Write, Bash\n- Turn budget: 5 turns\n- Say it politely\n\n## Notes\nThis section is not the executor's business.\n\n## Result\n";

const BROKEN: &str = "# Contract: Broken\n\n## Status\ndone\n\n## Task\nNothing.\n";

const ENDLESS: &str = "# Contract: Endless loop\n## Status\npending\n## Task\nKeep going.\n## Constraints\n- Time/turn budget: 2 turns\n";

const ESCAPE: &str = "# Contract: Escape attempt\n## Status\npending\n## Task\nWrite allowed.txt.\n## Constraints\n- Files: allowed.txt\n";

fn scenario() -> Scenario {
    Scenario::new()
        .conversation(
            "Contract: Greet the world",
            vec![
                Turn::new()
                    .with_tool_id(
                        "toolu_w",
                        "Write",
                        json!({"file_path": "hello.txt", "content": "hello, world\n"}),
                    )
                    .with_tool_id("toolu_g", "Bash", json!({"command": "git add hello.txt"})),
                Turn::text("Created hello.txt with a greeting."),
            ],
        )
        .conversation(
            "Contract: Endless loop",
            vec![Turn::tool("Bash", json!({"command": "echo tick"}))],
        )
        .conversation(
            "Contract: Escape attempt",
            vec![
                Turn::tool(
                    "Write",
                    json!({"file_path": "outside.txt", "content": "escaped\n"}),
                ),
                Turn::text("Done."),
            ],
        )
}

fn endless_scenario(s: Scenario) -> Scenario {
    let mut s = s;
    for c in &mut s.conversations {
        if c.when_prompt_contains.contains("Endless") {
            c.loop_last_turn = true;
        }
    }
    s
}

fn contracts_cmd(home: &Path, ws: &Path, url: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", url)
        .arg("contracts")
        .args(args);
    cmd
}

/// The value after `- Label:` in a Result section, without backticks.
fn result_field(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("- {label}:")))
        .unwrap_or_else(|| panic!("no `- {label}:` line in:\n{text}"))
        .trim()
        .trim_matches('`')
        .to_string()
}

fn verify_ok(home: &Path, ws: &Path, session: &str) {
    let out = tascer(home, ws)
        .args(["verify", session, "--json"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "verify {session}: {stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert!(report["entries_checked"].as_u64().unwrap() > 0, "{report}");
}

#[test]
fn a_directory_of_contracts_gets_the_right_statuses_and_results() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    let dir = ws.join("contracts");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let out = tascer(&home, &ws)
        .args(["keys", "generate"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    std::fs::write(dir.join("01-greet.md"), GREET).unwrap();
    std::fs::write(dir.join("02-broken.md"), BROKEN).unwrap();
    std::fs::write(dir.join("03-endless.md"), ENDLESS).unwrap();
    std::fs::write(dir.join("04-escape.md"), ESCAPE).unwrap();
    let server = MockServer::start_blocking(endless_scenario(scenario())).unwrap();

    let out = contracts_cmd(&home, &ws, &server.url(), &["run"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "failed contracts → exit 1\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 completed, 2 failed, 1 malformed"),
        "{stdout}"
    );

    // The good contract: completed, moved, every other byte kept.
    assert!(!dir.join("01-greet.md").exists());
    let done = std::fs::read_to_string(ws.join("contracts_completed/01-greet.md")).unwrap();
    let (before, after) = done.split_once("## Result\n").unwrap();
    assert_eq!(
        before,
        GREET
            .split_once("## Result\n")
            .unwrap()
            .0
            .replace("\npending\n", "\ncompleted\n")
    );
    assert!(after.contains("**Outcome:** completed"), "{after}");
    assert!(
        after.contains("Created hello.txt with a greeting."),
        "{after}"
    );
    assert_eq!(result_field(after, "Files changed"), "hello.txt");
    assert_eq!(result_field(after, "Turns"), "2");
    assert!(result_field(after, "Signing key").len() >= 16, "{after}");
    assert_eq!(
        result_field(after, "Ledger head")
            .split('`')
            .next()
            .unwrap()
            .len(),
        64,
        "{after}"
    );
    assert!(
        result_field(after, "Refused calls").contains("Bash(git add hello.txt)"),
        "git writes are refused: {after}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt")).unwrap(),
        "hello, world\n"
    );
    let greet_session = result_field(after, "Session");

    // The malformed one: reported with file and line, left untouched.
    assert_eq!(
        std::fs::read_to_string(dir.join("02-broken.md")).unwrap(),
        BROKEN
    );
    assert!(
        stdout.contains("02-broken.md:4: unknown status `done`"),
        "{stdout}"
    );

    // Over its turn budget: failed, with why, stays in place.
    let endless = std::fs::read_to_string(dir.join("03-endless.md")).unwrap();
    assert!(endless.contains("## Status\nfailed\n"), "{endless}");
    assert!(
        endless.contains("**Outcome:** failed — exceeded its turn budget of 2 turns"),
        "{endless}"
    );
    let endless_session = result_field(&endless, "Session");

    // Writing outside its files: refused, failed with why, nothing written.
    let escape = std::fs::read_to_string(dir.join("04-escape.md")).unwrap();
    assert!(escape.contains("## Status\nfailed\n"), "{escape}");
    assert!(
        escape.contains("tried to write outside its allowed files: outside.txt"),
        "{escape}"
    );
    assert!(!ws.join("outside.txt").exists());
    let escape_session = result_field(&escape, "Session");

    for session in [&greet_session, &endless_session, &escape_session] {
        verify_ok(&home, &ws, session);
    }

    // `status --json` shows all four.
    let out = contracts_cmd(&home, &ws, &server.url(), &["status", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<(String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().into(),
                r["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("02-broken".to_string(), "malformed".to_string()),
            ("03-endless".into(), "failed".into()),
            ("04-escape".into(), "failed".into()),
            ("01-greet".into(), "completed".into()),
        ]
    );
    assert_eq!(rows[3]["session"], greet_session.as_str());

    // A second run finds nothing pending and runs no session.
    let requests = server.requests().len();
    let out = contracts_cmd(&home, &ws, &server.url(), &["run"])
        .output()
        .unwrap();
    assert_eq!(server.requests().len(), requests, "{:?}", texts(&out));
}

#[test]
fn status_table_and_missing_directory() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/a.md"), ESCAPE).unwrap();
    let out = tascer(root.path(), &ws)
        .args(["contracts", "status"])
        .output()
        .unwrap();
    let (stdout, _) = texts(&out);
    assert!(stdout.contains("CONTRACT"), "{stdout}");
    assert!(stdout.contains("a  "), "{stdout}");
    assert!(stdout.contains("pending"), "{stdout}");

    let out = tascer(root.path(), &ws)
        .args(["contracts", "run", "nowhere"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("no contracts directory"), "{stderr}");
    assert!(stderr.contains("tascer contracts init nowhere"), "{stderr}");

    // `contracts init` creates both directories, their .gitkeep and a
    // template the executor never runs; the run then finds nothing to do.
    let out = tascer(root.path(), &ws)
        .args(["contracts", "init", "nowhere"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    for keep in [
        "nowhere/.gitkeep",
        "contracts_completed/.gitkeep",
        "nowhere/.template.md",
    ] {
        assert!(ws.join(keep).is_file(), "{keep}");
    }
    let out = tascer(root.path(), &ws)
        .env("ANTHROPIC_API_KEY", "unused")
        .args(["contracts", "run", "nowhere", "--json"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["contracts"], serde_json::json!([]));
}

/// `tascer contracts status --json | head -1`: the reader goes away, the
/// command ends quietly as a Unix tool does (no panic, exit 141).
#[test]
fn status_into_a_closed_pipe_does_not_panic() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    // Enough rows that the output outgrows the pipe's buffer.
    for i in 0..400 {
        std::fs::write(ws.join(format!("contracts/{i:03}.md")), ESCAPE).unwrap();
    }
    let mut child = tascer(root.path(), &ws)
        .args(["contracts", "status", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}

#[test]
fn demo_contracts_runs_without_an_api_key() {
    let root = tempfile::tempdir().unwrap();
    let out = tascer(root.path(), root.path())
        .args(["demo", "contracts"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 completed, 2 failed, 1 malformed"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("entries, signed").count(), 3, "{stdout}");
    assert!(!stdout.contains('✗'), "{stdout}");
}
