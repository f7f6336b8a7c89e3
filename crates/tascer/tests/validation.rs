//! The validation section as a session lives it: per-tool gates add to the
//! defaults (the leaked-token case), every evidence kind is kept,
//! `require_proof` fails a call whose evidence is missing, `always_block`
//! blocks, and the capture switches (git state, environment allowlist,
//! proof hashes) are honoured — read from real settings files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer::guard::settings::SettingsSource;
use tascer::ledger::{Ledger, ReportData, ToolStatus};
use tascer::{Client, Options, Tool, ToolContext, ToolOutput};
use tascer_testkit::{MockServer, Scenario, Turn};

/// A GitHub token shape the gitleaks rules know.
fn token() -> String {
    format!("ghp_{}", "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2")
}

/// Writes the project settings file of the workspace.
fn project_settings(env: &Env, settings: &Value) {
    let dir = env.ws().join(".tascer");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// Runs one prompt with `options` and returns the messages and the
/// session's report.
async fn run(options: Options) -> (Vec<tascer::Message>, ReportData) {
    let mut client = Client::connect(options).await.unwrap();
    client.query("go").await.unwrap();
    let messages: Vec<_> = client.receive_response().collect().await;
    let report = client.validation_report().await.unwrap();
    assert!(client.verify_proofs().await.unwrap().ok);
    client.disconnect().await;
    (messages, report)
}

fn evidence_text(env: &Env, session: &str, digest: &str) -> String {
    let ledger = Ledger::open_in_home(env.home(), None).unwrap();
    String::from_utf8(ledger.get_evidence(session, digest).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_post_gate_catches_a_token_printed_by_a_tool_with_its_own_entry() {
    let env = Env::new();
    // The settings: defaults post-gate `no_secrets_leaked`, and a
    // per-tool entry for Bash that does not name it.
    project_settings(
        &env,
        &json!({"validation": {
            "defaults": {"post_gates": ["no_secrets_leaked"]},
            "per_tool": {"Bash": {"pre_gates": ["command_allowed"], "evidence": ["stdout"]}}
        }}),
    );
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("Bash", json!({"command": format!("echo {}", token())})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let options = anthropic_options(&server, &env).setting_sources([SettingsSource::Project]);
    let (messages, report) = run(options).await;
    let results = tool_results(&messages);
    assert!(
        results[0].1.contains("no_secrets_leaked"),
        "the model is told: {:?}",
        results[0]
    );
    let record = &report.tools[0].record;
    assert_eq!(record.status, ToolStatus::Failed);
    let gates: Vec<&str> = record.post_gates.iter().map(|g| g.gate.as_str()).collect();
    assert_eq!(gates, ["no_secrets_leaked"]);
    // Nothing of the session's ledger holds the token: the record, its
    // output evidence, its stdout evidence, any entry.
    let stored = serde_json::to_string(record).unwrap();
    assert!(!stored.contains(&token()), "{stored}");
    let stdout = &record.evidence_by_kind["stdout"][0];
    let text = evidence_text(&env, &report.session_id, stdout);
    assert!(text.contains("[REDACTED:github-pat]"), "{text}");
    let ledger = Ledger::open_in_home(env.home(), None).unwrap();
    for entry in ledger.store().entries(&report.session_id).unwrap() {
        assert!(
            !entry.payload.to_string().contains(&token()),
            "{:?}",
            entry.kind
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_evidence_kind_is_kept_and_listed_by_kind() {
    let env = Env::new();
    std::fs::write(env.ws().join("notes.txt"), "one\ntwo\n").unwrap();
    project_settings(
        &env,
        &json!({"validation": {"per_tool": {
            "Bash": {"evidence": ["stdout", "stderr"], "require_proof": true},
            "Edit": {"evidence": ["diff", "file"], "require_proof": true}
        }}}),
    );
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Bash", json!({"command": "echo to-out; echo to-err >&2"}))
                    .with_tool("Read", json!({"file_path": "notes.txt"})),
            )
            .turn(Turn::new().with_tool(
                "Edit",
                json!({"file_path": "notes.txt", "old_string": "two", "new_string": "three"}),
            ))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let options = anthropic_options(&server, &env).setting_sources([SettingsSource::Project]);
    let (_, report) = run(options).await;
    let session = &report.session_id;
    let bash = &report.tools[0].record;
    assert_eq!(bash.status, ToolStatus::Validated);
    let kinds: Vec<&str> = bash.evidence_by_kind.keys().map(String::as_str).collect();
    assert_eq!(kinds, ["stderr", "stdout"]);
    assert_eq!(
        evidence_text(&env, session, &bash.evidence_by_kind["stdout"][0]),
        "to-out\n"
    );
    assert_eq!(
        evidence_text(&env, session, &bash.evidence_by_kind["stderr"][0]),
        "to-err\n"
    );
    for digests in bash.evidence_by_kind.values() {
        assert!(
            bash.evidence.contains(&digests[0]),
            "listed where verify checks it"
        );
    }
    let proof = bash
        .post_gates
        .iter()
        .find(|g| g.gate == "require_proof")
        .unwrap();
    assert!(proof.passed, "{proof:?}");
    // Read keeps no evidence kind of its own (the defaults name none).
    assert!(report.tools[1].record.evidence_by_kind.is_empty());
    let edit = &report.tools[2].record;
    assert_eq!(edit.status, ToolStatus::Validated, "{edit:?}");
    let diff = evidence_text(&env, session, &edit.evidence_by_kind["diff"][0]);
    assert!(
        diff.contains("--- a/notes.txt") && diff.contains("+++ b/notes.txt"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-two\n") && diff.contains("\n+three\n"),
        "{diff}"
    );
    assert_eq!(
        evidence_text(&env, session, &edit.evidence_by_kind["file"][0]),
        "one\nthree\n"
    );
}

/// A custom tool that calls itself NotebookEdit and reports success
/// without writing anything: its record cannot hold the file it names.
struct FakeNotebookEdit;

impl Tool for FakeNotebookEdit {
    fn name(&self) -> &str {
        "NotebookEdit"
    }
    fn description(&self) -> &str {
        "Claims to edit a notebook."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"notebook_path": {"type": "string"}}})
    }
    fn call<'a>(&'a self, _input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async { ToolOutput::text("edited") })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn require_proof_fails_a_call_whose_evidence_could_not_be_captured() {
    let env = Env::new();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("NotebookEdit", json!({"notebook_path": "nb.ipynb"})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let validation = tascer::guard::gates::ValidationConfig::from_value(&json!({
        "per_tool": {"NotebookEdit": {"evidence": ["diff", "file"], "require_proof": true,
                                      "inherit_defaults": false}}
    }))
    .unwrap();
    let options = anthropic_options(&server, &env)
        .tools(Vec::<String>::new())
        .tool(Arc::new(FakeNotebookEdit))
        .validation(validation);
    let (messages, report) = run(options).await;
    let results = tool_results(&messages);
    assert!(
        results[0]
            .1
            .contains("require_proof: proof required, but no diff, file evidence"),
        "{:?}",
        results[0]
    );
    let record = &report.tools[0].record;
    assert_eq!(record.status, ToolStatus::Failed);
    assert_eq!(record.post_gates.last().unwrap().gate, "require_proof");
    assert!(!record.post_gates.last().unwrap().passed);
}

#[tokio::test(flavor = "multi_thread")]
async fn always_block_keeps_a_reviewer_read_only() {
    let env = Env::new();
    std::fs::write(env.ws().join("src.txt"), "keep me\n").unwrap();
    project_settings(
        &env,
        &json!({"validation": {"per_tool": {
            "Write": {"pre_gates": ["always_block"]},
            "Edit": {"pre_gates": ["always_block"]},
            "Bash": {"pre_gates": ["always_block"]}
        }}}),
    );
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Read", json!({"file_path": "src.txt"}))
                    .with_tool("Write", json!({"file_path": "src.txt", "content": "gone"}))
                    .with_tool("Bash", json!({"command": "rm src.txt"})),
            )
            .turn(Turn::text("reviewed")),
    )
    .await
    .unwrap();
    let options = anthropic_options(&server, &env).setting_sources([SettingsSource::Project]);
    let (_, report) = run(options).await;
    let statuses: Vec<ToolStatus> = report.tools.iter().map(|t| t.record.status).collect();
    assert_eq!(
        statuses,
        [
            ToolStatus::Validated,
            ToolStatus::Blocked,
            ToolStatus::Blocked
        ]
    );
    assert_eq!(report.tools[1].record.pre_gates[0].gate, "always_block");
    assert_eq!(
        std::fs::read_to_string(env.ws().join("src.txt")).unwrap(),
        "keep me\n"
    );
}

fn git_repo(env: &Env) {
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    ] {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(env.ws())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn capture_switches_and_the_env_allowlist_come_from_settings_and_options() {
    let env = Env::new();
    git_repo(&env);
    project_settings(
        &env,
        &json!({"validation": {
            "capture_git_state": false,
            "generate_proofs": false,
            "env_allowlist": ["BUILD_TAG"]
        }}),
    );
    let scenario = || {
        Scenario::new()
            .turn(Turn::new().with_tool("Bash", json!({"command": "true"})))
            .turn(Turn::text("done"))
    };
    let server = MockServer::start(scenario()).await.unwrap();
    let options = anthropic_options(&server, &env)
        .setting_sources([SettingsSource::Project])
        .env("BUILD_TAG", "b-17")
        .env("OTHER", "never");
    let (_, report) = run(options).await;
    let record = &report.tools[0].record;
    assert!(record.context["git"].is_null(), "{}", record.context);
    assert_eq!(record.context["env"], json!({"BUILD_TAG": "b-17"}));
    assert_eq!(record.proof_hash, None, "proofs are off");
    assert_eq!(record.status, ToolStatus::Validated);

    // The options win over the settings.
    let server = MockServer::start(scenario()).await.unwrap();
    let options = anthropic_options(&server, &env)
        .setting_sources([SettingsSource::Project])
        .capture_git_state(true)
        .generate_proofs(true)
        .context_env(["OTHER"])
        .env("OTHER", "now-recorded");
    let (_, report) = run(options).await;
    let record = &report.tools[0].record;
    assert_eq!(record.context["git"]["branch"], "main");
    assert_eq!(record.context["env"], json!({"OTHER": "now-recorded"}));
    assert!(record.proof_is_valid());
}
