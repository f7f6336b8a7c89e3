#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Secret detection and redaction with the embedded gitleaks rules.

use serde_json::json;
use tascer_core::ToolOutput;
use tascer_guard::gates::{
    GateContext, GateRegistry, GateRunner, Phase, SecretScanner, ValidationConfig, redact,
    redact_with,
};

const AWS: &str = "AKIAQ3RTXZ7WMNBV5LKP";

fn github_token() -> String {
    format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
}

#[test]
fn every_gitleaks_rule_compiles() {
    let scanner = SecretScanner::builtin().unwrap();
    assert!(scanner.rule_count() > 200, "{}", scanner.rule_count());
    assert_eq!(scanner.uncompilable_rules(), Vec::<&str>::new());
}

#[test]
fn finds_aws_key_and_github_token() {
    let scanner = SecretScanner::builtin().unwrap();
    let text = format!("export AWS_KEY={AWS}\ntoken: {}\n", github_token());
    let findings = scanner.scan(&text, &[]);
    let ids: Vec<&str> = findings.iter().map(|f| f.rule_id.as_str()).collect();
    assert!(ids.contains(&"aws-access-token"), "{ids:?}");
    assert!(ids.contains(&"github-pat"), "{ids:?}");
    for f in &findings {
        assert!(f.snippet.contains("[REDACTED:"), "{}", f.snippet);
        assert!(!f.snippet.contains(AWS));
        assert!(!f.snippet.contains(&github_token()));
    }
}

#[test]
fn redact_replaces_every_secret() {
    let text = format!("a {AWS} b {} c", github_token());
    let out = redact(&text);
    assert!(!out.contains(AWS), "{out}");
    assert!(!out.contains(&github_token()), "{out}");
    assert!(out.contains("[REDACTED:aws-access-token]"), "{out}");
    assert!(out.starts_with("a ") && out.ends_with(" c"), "{out}");
}

#[test]
fn allowlisted_example_key_is_not_a_finding() {
    let out = redact("AKIAIOSFODNN7EXAMPLE");
    assert_eq!(out, "AKIAIOSFODNN7EXAMPLE");
}

#[test]
fn clean_text_is_unchanged() {
    let text = "fn main() { println!(\"hello\"); }";
    assert_eq!(redact(text), text);
}

#[test]
fn session_secrets_are_redacted_exactly() {
    let secrets = vec!["hunter2-very-private".to_string()];
    let out = redact_with("pw=hunter2-very-private;", &secrets);
    assert_eq!(out, "pw=[REDACTED:session-secret];");
}

#[tokio::test]
async fn gate_fails_on_leaked_output_and_passes_clean() {
    let registry = GateRegistry::with_builtins(&Default::default()).unwrap();
    let runner = GateRunner::new(registry);
    let config = ValidationConfig::default();
    let dir = tempfile::tempdir().unwrap();

    let ctx = GateContext::new(
        Phase::Post,
        "Bash",
        json!({"command": "cat creds"}),
        dir.path().to_path_buf(),
    )
    .with_output(ToolOutput::text(format!("key = {AWS}")));
    let results = runner.run(Phase::Post, &ctx, &config).await;
    let r = results
        .iter()
        .find(|r| r.gate == "no_secrets_leaked")
        .unwrap();
    assert!(!r.passed, "{r:?}");
    let dump = serde_json::to_string(r).unwrap();
    assert!(!dump.contains(AWS), "{dump}");
    assert!(dump.contains("aws-access-token"));

    let clean = GateContext::new(
        Phase::Post,
        "Bash",
        json!({"command": "ls"}),
        dir.path().to_path_buf(),
    )
    .with_output(ToolOutput::text("Cargo.toml\nsrc\n"));
    let results = runner.run(Phase::Post, &clean, &config).await;
    assert!(results.iter().all(|r| r.passed), "{results:?}");
}

#[tokio::test]
async fn gate_checks_written_content_and_session_secrets() {
    let registry = GateRegistry::with_builtins(&Default::default()).unwrap();
    let gate = registry.get("no_secrets_leaked").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = GateContext::new(
        Phase::Post,
        "Write",
        json!({"file_path": "notes.txt", "content": "the key is s3ss10n-k3y"}),
        dir.path().to_path_buf(),
    )
    .with_session_secrets(vec!["s3ss10n-k3y".into()]);
    let r = gate.check(&ctx).await;
    assert!(!r.passed);
    assert_eq!(r.findings[0]["rule_id"], "session-secret");
    assert_eq!(r.findings[0]["source"], "written content");
    assert!(!serde_json::to_string(&r).unwrap().contains("s3ss10n-k3y"));
}
