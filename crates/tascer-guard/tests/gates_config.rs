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

#[test]
fn per_tool_gates_add_to_the_defaults_unless_the_tool_says_otherwise() {
    let config = ValidationConfig::from_settings(&json!({
        "validation": {
            "defaults": { "pre_gates": ["file_exists"], "post_gates": ["no_secrets_leaked"],
                          "evidence": ["stdout"], "timeout_ms": 1234, "require_proof": true },
            "per_tool": {
                "Bash": { "pre_gates": ["command_allowed"], "evidence": ["stderr"] },
                "Read": { "post_gates": ["no_secrets_leaked", "exit_code_zero"], "timeout_ms": 99 },
                "Glob": { "pre_gates": ["always_block"], "inherit_defaults": false }
            }
        }
    }))
    .unwrap();
    let bash = config.for_tool("Bash");
    assert_eq!(bash.pre_gates, vec!["file_exists", "command_allowed"]);
    assert_eq!(bash.post_gates, vec!["no_secrets_leaked"]);
    assert_eq!(
        bash.evidence,
        vec![EvidenceKind::Stdout, EvidenceKind::Stderr]
    );
    assert_eq!(
        bash.timeout_ms, 1234,
        "a scalar left out comes from defaults"
    );
    assert!(bash.require_proof);
    // A gate named in both runs once; a scalar the entry gives is its own.
    let read = config.for_tool("Read");
    assert_eq!(read.post_gates, vec!["no_secrets_leaked", "exit_code_zero"]);
    assert_eq!(read.timeout_ms, 99);
    // `inherit_defaults: false` replaces the defaults for the tool.
    let glob = config.for_tool("Glob");
    assert_eq!(glob.pre_gates, vec!["always_block"]);
    assert!(glob.post_gates.is_empty() && glob.evidence.is_empty());
    assert!(!glob.require_proof);
    // Built-in entries inherit too: Write keeps its own gates after the defaults'.
    let write = config.for_tool("Write");
    assert_eq!(write.pre_gates, vec!["file_exists", "file_protected"]);
    assert_eq!(write.post_gates, vec!["no_secrets_leaked", "syntax_valid"]);
    assert!(write.require_proof);
    // A tool without an entry gets the defaults.
    assert_eq!(config.for_tool("WebFetch").pre_gates, vec!["file_exists"]);
}

#[tokio::test]
async fn a_default_post_gate_runs_for_a_tool_with_its_own_entry() {
    // The case of the issue: default post-gate `no_secrets_leaked` and a
    // per-tool Bash entry: a Bash call that printed a token fails.
    let config = ValidationConfig::from_value(&json!({
        "defaults": { "post_gates": ["no_secrets_leaked"] },
        "per_tool": { "Bash": { "pre_gates": ["command_allowed"] } }
    }))
    .unwrap();
    let runner = GateRunner::new(builtins());
    let dir = tempfile::tempdir().unwrap();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let ctx = GateContext::new(
        Phase::Post,
        "Bash",
        json!({"command": "cat ~/.token"}),
        dir.path().to_path_buf(),
    )
    .with_output(tascer_core::ToolOutput::text(format!("token={token}\n")));
    let results = runner.run(Phase::Post, &ctx, &config).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].gate, "no_secrets_leaked");
    assert!(!results[0].passed, "{results:?}");
    assert!(!serde_json::to_string(&results).unwrap().contains(&token));
}

#[tokio::test]
async fn always_block_fails_every_call_with_its_message() {
    let config = ValidationConfig::from_value(&json!({
        "per_tool": { "Write": { "pre_gates": ["always_block"], "inherit_defaults": false },
                      "Read": { "post_gates": ["always_block"] } },
        "gates": { "always_block": { "message": "this reviewer only reads" } }
    }))
    .unwrap();
    let registry = GateRegistry::with_builtins(&config.gates).unwrap();
    registry.validate(&config).unwrap();
    let runner = GateRunner::new(registry);
    let dir = tempfile::tempdir().unwrap();
    let ctx = GateContext::new(
        Phase::Pre,
        "Write",
        json!({"file_path": "a.txt", "content": "x"}),
        dir.path().to_path_buf(),
    );
    let pre = runner.run(Phase::Pre, &ctx, &config).await;
    assert_eq!(pre.len(), 1);
    assert!(!pre[0].passed);
    assert_eq!(pre[0].message, "this reviewer only reads");
    assert!(GateVerdict::from_results(Phase::Pre, &pre).block);
    let ctx = GateContext::new(Phase::Post, "Read", json!({}), dir.path().to_path_buf())
        .with_output(tascer_core::ToolOutput::text("content"));
    let post = runner.run(Phase::Post, &ctx, &config).await;
    assert!(GateVerdict::from_results(Phase::Post, &post).mark_failed);
    // Without options it names the tool.
    let plain = GateRegistry::with_builtins(&BuiltinOptions::default()).unwrap();
    let gate = plain.get("always_block").unwrap();
    let ctx = GateContext::new(Phase::Pre, "Bash", json!({}), dir.path().to_path_buf());
    let r = gate.check(&ctx).await;
    assert_eq!(r.message, "Bash is not allowed in this session");
}

#[test]
fn capture_switches_and_the_env_allowlist_are_read_from_the_section() {
    let config = ValidationConfig::from_value(&json!({
        "capture_git_state": false,
        "generate_proofs": false,
        "env_allowlist": ["CI", "BUILD_ID"]
    }))
    .unwrap();
    assert!(!config.capture_git_state);
    assert!(!config.generate_proofs);
    assert_eq!(
        config.env_allowlist,
        Some(vec!["CI".to_string(), "BUILD_ID".to_string()])
    );
    let default = ValidationConfig::default();
    assert!(default.capture_git_state && default.generate_proofs);
    assert_eq!(default.env_allowlist, None);
}

#[test]
fn the_proof_check_names_what_is_missing() {
    use tascer_guard::gates::{PROOF_CHECK, ToolValidation};
    let off = ToolValidation::default();
    assert_eq!(off.proof_check(true, &[EvidenceKind::Diff]), None);
    let on = ToolValidation {
        require_proof: true,
        evidence: vec![EvidenceKind::Stdout, EvidenceKind::Diff],
        ..ToolValidation::default()
    };
    let pass = on.proof_check(true, &[]).unwrap();
    assert!(pass.passed && pass.gate == PROOF_CHECK, "{pass:?}");
    assert!(pass.message.contains("stdout, diff"), "{}", pass.message);
    let fail = on.proof_check(true, &[EvidenceKind::Diff]).unwrap();
    assert!(!fail.passed);
    assert_eq!(
        fail.message,
        "proof required, but no diff evidence could be captured"
    );
    let no_proofs = on.proof_check(false, &[]).unwrap();
    assert!(!no_proofs.passed && no_proofs.message.contains("proofs are off"));
}
