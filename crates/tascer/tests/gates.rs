//! Validation gates in the loop: a pre-gate blocks a call, post-gates mark
//! calls failed (and tell the model), passing calls are validated, secrets
//! are redacted from stored evidence, user gates plug in by name — and the
//! ledger records every gate result and verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use futures::StreamExt;
use serde_json::json;
use tascer::Client;
use tascer::guard::gates::{FnGate, GateResult, ToolValidation, ValidationConfig};
use tascer::ledger::ToolStatus;
use tascer_testkit::{MockServer, Scenario, Turn};

/// A GitHub token shape the gitleaks rules know.
fn token() -> String {
    format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
}

fn validation() -> ValidationConfig {
    let mut config = ValidationConfig::default();
    config.per_tool.insert(
        "Bash".into(),
        ToolValidation {
            pre_gates: vec!["command_allowed".into()],
            post_gates: vec!["exit_code_zero".into(), "no_secrets_leaked".into()],
            ..ToolValidation::default()
        },
    );
    let mut write = config.per_tool["Write"].clone();
    write.post_gates.push("no_todo".into());
    config.per_tool.insert("Write".into(), write);
    config
}

#[tokio::test(flavor = "multi_thread")]
async fn gates_block_fail_and_validate_calls_and_the_ledger_proves_it() {
    let env = Env::new();
    tascer::ledger::generate_keypair(env.home(), false).unwrap();
    std::fs::write(env.ws().join("Cargo.lock"), "# lock\n").unwrap();
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool("Write", json!({"file_path": "Cargo.lock", "content": "x"}))
                    .with_tool("Bash", json!({"command": "exit 3"}))
                    .with_tool(
                        "Write",
                        json!({"file_path": "ok.json", "content": "{\"a\": 1}"}),
                    )
                    .with_tool(
                        "Write",
                        json!({"file_path": "bad.json", "content": "{\"a\": "}),
                    )
                    .with_tool(
                        "Write",
                        json!({"file_path": "t.txt", "content": "TODO later"}),
                    )
                    .with_tool(
                        "Bash",
                        json!({"command": format!("echo token={}", token())}),
                    )
                    .with_tool("Bash", json!({"command": "echo fine"})),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let no_todo = FnGate::new("no_todo", |ctx| async move {
        if ctx.written_content().iter().any(|c| c.contains("TODO")) {
            GateResult::fail("no_todo", "written content holds a TODO")
        } else {
            GateResult::pass("no_todo", "no TODO")
        }
    });
    let options = anthropic_options(&server, &env)
        .validation(validation())
        .gate(Arc::new(no_todo));
    let mut client = Client::connect(options).await.unwrap();
    client.query("go").await.unwrap();
    let messages: Vec<_> = client.receive_response().collect().await;
    let results = tool_results(&messages);

    // What the model saw.
    assert!(
        results[0].2 && results[0].1.contains("file_protected"),
        "{:?}",
        results[0]
    );
    assert!(results[1].2);
    assert!(results[3].1.contains("syntax_valid"), "{:?}", results[3]);
    assert!(results[4].1.contains("no_todo"), "{:?}", results[4]);
    assert!(
        results[5].1.contains("no_secrets_leaked"),
        "{:?}",
        results[5]
    );
    assert!(!results[6].2, "{:?}", results[6]);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("Cargo.lock")).unwrap(),
        "# lock\n"
    );

    // What the ledger holds.
    let report = client.validation_report().await.unwrap();
    let records: Vec<_> = report.tools.iter().map(|t| &t.record).collect();
    let statuses: Vec<ToolStatus> = records.iter().map(|r| r.status).collect();
    use ToolStatus::{Blocked, Failed, Validated};
    assert_eq!(
        statuses,
        [
            Blocked, Failed, Validated, Failed, Failed, Failed, Validated
        ]
    );
    assert!(!records[0].pre_gates[0].passed);
    assert_eq!(records[1].post_gates[0].gate, "exit_code_zero");
    assert!(!records[1].post_gates[0].passed);
    assert!(records[2].post_gates.iter().all(|g| g.passed));
    assert!(records.iter().all(|r| r.proof_hash.is_some()));
    let stored = serde_json::to_string(&records[5]).unwrap();
    assert!(
        !stored.contains(&token()),
        "the secret is redacted: {stored}"
    );
    // The stored output evidence (a blob in the database) is redacted too.
    let ledger = tascer::ledger::Ledger::open_in_home(env.home(), None).unwrap();
    let output_digest = records[5]
        .output_digest
        .as_deref()
        .expect("an output digest");
    let session_id = &report.session_id;
    let output = ledger.get_evidence(session_id, output_digest).unwrap();
    let output = String::from_utf8_lossy(&output);
    assert!(!output.is_empty() && !output.contains(&token()), "{output}");
    assert!(records[6].context["git"].is_null() || records[6].context["cwd"].is_string());
    assert_eq!(records[6].context["tascer_version"], tascer::VERSION);

    let verify = client.verify_proofs().await.unwrap();
    assert!(verify.ok && verify.signed, "{verify:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_context_records_git_state_and_only_allowlisted_env() {
    let env = Env::new();
    let ws = env.ws();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&ws)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("Write", json!({"file_path": "b.txt", "content": "b"})))
            .turn(Turn::new().with_tool("Bash", json!({"command": "echo after"})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let mut options = anthropic_options(&server, &env)
        .env("MY_ALLOWED", "yes")
        .env("MY_SECRET", "never-recorded");
    options.context_env = Some(vec!["MY_ALLOWED".into()]);
    let mut client = Client::connect(options).await.unwrap();
    client.query("go").await.unwrap();
    let _: Vec<_> = client.receive_response().collect().await;
    let report = client.validation_report().await.unwrap();
    let first = &report.tools[0].record.context;
    let second = &report.tools[1].record.context;
    assert_eq!(first["git"]["branch"], "main");
    assert_eq!(first["git"]["untracked"], json!([]));
    assert_eq!(
        second["git"]["untracked"],
        json!(["b.txt"]),
        "refreshed after the Write"
    );
    assert_eq!(first["env"], json!({"MY_ALLOWED": "yes"}));
    let all = serde_json::to_string(&report.tools).unwrap();
    assert!(!all.contains("never-recorded"));
}
