#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Registry, configuration, runner, verdicts and user gates.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tascer_guard::gates::{
    BuiltinOptions, EvidenceKind, Gate, GateContext, GateError, GateRegistry, GateResult,
    GateRunner, GateVerdict, Phase, ValidationConfig,
};

fn builtins() -> GateRegistry {
    GateRegistry::with_builtins(&BuiltinOptions::default()).unwrap()
}

#[test]
fn defaults_are_conservative_and_valid() {
    let config = ValidationConfig::default();
    assert_eq!(config.for_tool("Write").pre_gates, vec!["file_protected"]);
    assert_eq!(
        config.for_tool("Edit").post_gates,
        vec!["syntax_valid", "no_secrets_leaked"]
    );
    assert_eq!(config.for_tool("Bash").pre_gates, vec!["command_allowed"]);
    assert!(config.for_tool("Read").pre_gates.is_empty());
    builtins().validate(&config).unwrap();
    for name in [
        "command_allowed",
        "file_protected",
        "not_protected",
        "file_exists",
        "exit_code_zero",
        "syntax_valid",
        "tests_pass",
        "no_secrets_leaked",
        "diff_size_limit",
    ] {
        assert!(builtins().get(name).is_some(), "{name}");
    }
}

#[test]
fn settings_value_is_parsed_and_merged() {
    let settings = json!({
        "permissions": {},
        "validation": {
            "defaults": { "post_gates": ["exit_code_zero"], "timeout_ms": 5000 },
            "per_tool": {
                "Bash": { "pre_gates": ["command_allowed"], "post_gates": ["exit_code_zero"],
                          "evidence": ["stdout", "stderr"], "require_proof": true }
            },
            "gates": {
                "command_allowed": { "deny": ["npm publish"] },
                "tests_pass": { "command": "cargo test", "timeout_ms": 1000 },
                "diff_size_limit": { "max_changed_lines": 10 }
            }
        }
    });
    let config = ValidationConfig::from_settings(&settings).unwrap();
    assert_eq!(config.defaults.timeout_ms, 5000);
    assert_eq!(config.for_tool("Glob").post_gates, vec!["exit_code_zero"]);
    let bash = config.for_tool("Bash");
    assert!(bash.require_proof);
    assert_eq!(
        bash.evidence,
        vec![EvidenceKind::Stdout, EvidenceKind::Stderr]
    );
    assert!(bash.tell_model_on_failure);
    assert_eq!(config.gates.command_allowed.deny, vec!["npm publish"]);
    assert_eq!(
        config.gates.tests_pass.command.as_deref(),
        Some("cargo test")
    );
    assert_eq!(config.gates.diff_size_limit.max_changed_lines, 10);
    // Untouched default entries survive.
    assert_eq!(config.for_tool("Write").pre_gates, vec!["file_protected"]);
    // A missing key means the defaults.
    assert_eq!(
        ValidationConfig::from_settings(&json!({})).unwrap(),
        ValidationConfig::default()
    );
}

#[test]
fn bad_shape_is_an_error() {
    let err =
        ValidationConfig::from_settings(&json!({"validation": {"defaults": {"pre_gates": 3}}}))
            .unwrap_err();
    assert!(matches!(err, GateError::InvalidConfig(_)), "{err}");
    let err = ValidationConfig::from_settings(
        &json!({"validation": {"per_tool": {"Bash": {"evidence": ["video"]}}}}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("video"), "{err}");
}

#[test]
fn unknown_gate_name_is_named() {
    let config = ValidationConfig::from_settings(&json!({
        "validation": { "per_tool": { "Edit": { "post_gates": ["syntax_valid", "lint_clean"] } } }
    }))
    .unwrap();
    let err = builtins().validate(&config).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("lint_clean"), "{text}");
    assert!(text.contains("per_tool.Edit.post_gates"), "{text}");
}

#[tokio::test]
async fn closure_gate_registered_and_run() {
    let mut registry = builtins();
    registry.register_fn("no_todo", |ctx: GateContext| async move {
        let content = ctx.input["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if content.contains("TODO") {
            GateResult::fail("no_todo", "content has a TODO")
        } else {
            GateResult::pass("no_todo", "no TODO")
        }
    });
    let config = ValidationConfig::from_settings(&json!({
        "validation": { "per_tool": { "Write": { "pre_gates": ["no_todo", "file_protected"] } } }
    }))
    .unwrap();
    registry.validate(&config).unwrap();
    let runner = GateRunner::new(registry);
    let dir = tempfile::tempdir().unwrap();
    let ctx = GateContext::new(
        Phase::Pre,
        "Write",
        json!({"file_path": "a.txt", "content": "TODO later"}),
        dir.path().to_path_buf(),
    );
    let results = runner.run(Phase::Pre, &ctx, &config).await;
    assert_eq!(results.len(), 2);
    assert!(!results[0].passed);
    assert!(results[1].passed);
    let verdict = GateVerdict::from_results(Phase::Pre, &results);
    assert!(verdict.block && !verdict.mark_failed && !verdict.passed);
    assert!(
        verdict
            .message
            .unwrap()
            .contains("no_todo: content has a TODO")
    );
}

struct Slow;

impl Gate for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn check<'a>(&'a self, _ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            GateResult::pass("slow", "finally")
        })
    }
}

#[tokio::test]
async fn trait_gate_times_out_and_post_failure_marks_failed() {
    let mut registry = GateRegistry::new();
    registry.register(Slow);
    let config = ValidationConfig::from_value(&json!({
        "defaults": { "post_gates": ["slow"], "timeout_ms": 100 }
    }))
    .unwrap();
    let runner = GateRunner::new(registry);
    let dir = tempfile::tempdir().unwrap();
    let ctx = GateContext::new(Phase::Post, "Custom", json!({}), dir.path().to_path_buf());
    let started = std::time::Instant::now();
    let results = runner.run(Phase::Post, &ctx, &config).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!results[0].passed);
    assert!(
        results[0].message.contains("timed out"),
        "{}",
        results[0].message
    );
    let verdict = GateVerdict::from_results(Phase::Post, &results);
    assert!(verdict.mark_failed && !verdict.block);
}

#[tokio::test]
async fn results_serialize_round_trip() {
    let runner = GateRunner::new(builtins());
    let dir = tempfile::tempdir().unwrap();
    let ctx = GateContext::new(
        Phase::Pre,
        "Bash",
        json!({"command": "rm -rf /"}),
        dir.path().to_path_buf(),
    );
    let results = runner
        .run(Phase::Pre, &ctx, &ValidationConfig::default())
        .await;
    assert_eq!(results.len(), 1);
    assert!(!results[0].passed);
    let text = serde_json::to_string(&results).unwrap();
    let back: Vec<GateResult> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, results);
    assert!(GateVerdict::from_results(Phase::Pre, &[]).passed);
}

#[test]
fn changed_files_derived_from_input() {
    let cwd = std::path::PathBuf::from("/w");
    let c = GateContext::new(
        Phase::Pre,
        "MultiEdit",
        json!({"file_path": "a/b.rs"}),
        cwd.clone(),
    );
    assert_eq!(c.changed_files, vec![cwd.join("a/b.rs")]);
    let n = GateContext::new(
        Phase::Pre,
        "NotebookEdit",
        json!({"notebook_path": "/x/n.ipynb"}),
        cwd.clone(),
    );
    assert_eq!(
        n.changed_files,
        vec![std::path::PathBuf::from("/x/n.ipynb")]
    );
    let r = GateContext::new(Phase::Pre, "Read", json!({"file_path": "a"}), cwd);
    assert!(r.changed_files.is_empty());
}
