//! The built `tascer` binary with project memory, `--json-schema`, slash
//! commands, skills and agents from real files, against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

/// A workspace (`root/ws`, a git repository root), a Tascer home and a
/// user home (`HOME`) holding `~/.claude`.
struct Dirs {
    root: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for d in ["ws/.git", "ws/.claude", "tascer", "user/.claude"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        Dirs { root }
    }
    fn ws(&self) -> std::path::PathBuf {
        self.root.path().join("ws").canonicalize().unwrap()
    }
    fn user_home(&self) -> std::path::PathBuf {
        self.root.path().join("user")
    }
    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    fn run(&self, server: &MockServer, prompt: &str, extra: &[&str]) -> std::process::Command {
        let mut cmd = run_cmd(
            &self.root.path().join("tascer"),
            &self.ws(),
            &server.url(),
            prompt,
            extra,
        );
        cmd.env("HOME", self.user_home())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("MAX_STRUCTURED_OUTPUT_RETRIES");
        cmd
    }
}

fn frames(out: &std::process::Output) -> Vec<Value> {
    json_lines(&out.stdout)
}

fn system_of(server: &MockServer) -> String {
    server.requests()[0].body["system"].to_string()
}

#[test]
fn home_and_project_claude_md_reach_the_model_and_init() {
    let dirs = Dirs::new();
    dirs.write(
        &dirs.user_home().join(".claude/CLAUDE.md"),
        "USER-RULE: be brief",
    );
    dirs.write(&dirs.ws().join("CLAUDE.md"), "PROJECT-RULE: run the tests");
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("ok"))).unwrap();

    let out = dirs.run(&server, "hi", &[]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let system = system_of(&server);
    assert!(system.contains("USER-RULE: be brief"), "{system}");
    assert!(system.contains("PROJECT-RULE: run the tests"), "{system}");
    let init = frames(&out)
        .into_iter()
        .find(|f| f["subtype"] == "init")
        .unwrap();
    assert_eq!(init["memory_files"].as_array().unwrap().len(), 2, "{init}");

    // `--setting-sources project` leaves the user's file out.
    server.clear_requests();
    let out = dirs
        .run(&server, "hi", &["--setting-sources", "project"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let system = system_of(&server);
    assert!(!system.contains("USER-RULE"), "{system}");
    assert!(system.contains("PROJECT-RULE"), "{system}");
}

#[test]
fn json_schema_from_a_file_fixes_an_invalid_answer() {
    let dirs = Dirs::new();
    let schema = dirs.root.path().join("schema.json");
    dirs.write(
        &schema,
        &json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"]
        })
        .to_string(),
    );
    let server = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::text("yes"))
            .turn(Turn::text(r#"{"ok": true}"#)),
    )
    .unwrap();
    let out = dirs
        .run(
            &server,
            "is it ok?",
            &["--json-schema", schema.to_str().unwrap()],
        )
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let result = frames(&out).pop().unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["structured_output"], json!({"ok": true}));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn inline_json_schema_that_never_matches_fails_with_its_subtype() {
    let dirs = Dirs::new();
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("nope"))).unwrap();
    let mut cmd = dirs.run(
        &server,
        "go",
        &["--json-schema", r#"{"type": "object", "required": ["ok"]}"#],
    );
    cmd.env("MAX_STRUCTURED_OUTPUT_RETRIES", "1");
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let result = frames(&out).pop().unwrap();
    assert_eq!(result["subtype"], "error_max_structured_output_retries");
    assert_eq!(server.requests().len(), 2);

    // A schema that is not JSON is refused before any model call.
    server.clear_requests();
    let out = dirs
        .run(&server, "go", &["--json-schema", "{not json"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--json-schema is not valid JSON"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn slash_commands_skills_and_agents_from_files_in_print_mode() {
    let dirs = Dirs::new();
    dirs.write(
        &dirs.ws().join(".claude/commands/review.md"),
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.",
    );
    dirs.write(
        &dirs.user_home().join(".claude/skills/style/SKILL.md"),
        "---\ndescription: House style\n---\nUse short lines.",
    );
    dirs.write(
        &dirs.ws().join(".claude/agents/checker.md"),
        "---\ndescription: Checks things\n---\nYou check.",
    );
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("ok"))).unwrap();

    let out = dirs
        .run(&server, "/review src/main.rs", &[])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Review src/main.rs carefully."), "{sent}");
    let init = frames(&out)
        .into_iter()
        .find(|f| f["subtype"] == "init")
        .unwrap();
    assert!(
        init["slash_commands"]
            .as_array()
            .unwrap()
            .contains(&json!("review"))
    );
    assert_eq!(init["skills"], json!(["style"]));
    assert_eq!(init["agents"], json!(["general-purpose", "checker"]));

    // A built-in prints its output in text mode, with no model call.
    server.clear_requests();
    let mut cmd = tascer(&dirs.root.path().join("tascer"), &dirs.ws());
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("HOME", dirs.user_home())
        .args(["run", "/cost"]);
    let out = cmd.output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Total cost: $0.0000"), "{stdout}");
    assert!(server.requests().is_empty());

    // An unknown command fails with the list of known ones.
    let out = dirs.run(&server, "/nope", &[]).output().unwrap();
    assert!(!out.status.success());
    let result = frames(&out).pop().unwrap();
    let text = result["result"].as_str().unwrap();
    assert!(text.contains("Unknown slash command: /nope"), "{text}");
    assert!(text.contains("/review"), "{text}");
}

#[test]
fn agents_flag_takes_the_sdk_shape_and_refuses_bad_json() {
    let dirs = Dirs::new();
    let scenario = Scenario::new()
        .turn(Turn::tool(
            "Task",
            json!({"description": "d", "prompt": "SUBTASK go", "subagent_type": "helper"}),
        ))
        .turn(Turn::text("done"))
        .conversation("SUBTASK", vec![Turn::text("helped")]);
    let server = MockServer::start_blocking(scenario).unwrap();
    let agents = json!({"helper": {"description": "Helps", "prompt": "HELPER-PROMPT",
        "tools": ["Read"], "model": "inherit", "maxTurns": 2}});
    let out = dirs
        .run(&server, "go", &["--agents", &agents.to_string()])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let init = frames(&out)
        .into_iter()
        .find(|f| f["subtype"] == "init")
        .unwrap();
    assert_eq!(init["agents"], json!(["general-purpose", "helper"]));
    let requests = server.requests();
    let sub = requests
        .iter()
        .find(|r| r.body["messages"].to_string().contains("SUBTASK"))
        .unwrap();
    assert!(sub.body["system"].to_string().contains("HELPER-PROMPT"));
    assert_eq!(sub.body["model"], requests[0].body["model"], "inherit");

    let out = dirs
        .run(&server, "go", &["--agents", "{\"helper\": {}}"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--agents must be a JSON object"),
        "{stderr}"
    );
}
