//! `no_secrets_leaked`: tool output and written content hold no secret,
//! judged by the gitleaks rules and the session's own secrets.

mod re2;
mod rules;
mod scanner;

use futures::future::BoxFuture;
use serde_json::json;

pub use scanner::{SecretFinding, SecretScanner};

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "no_secrets_leaked";

/// `text` with every secret the built-in gitleaks rules find replaced by
/// `[REDACTED:<rule_id>]`. If the rules cannot load, the whole text is
/// withheld rather than risk storing a secret.
pub fn redact(text: &str) -> String {
    redact_with(text, &[])
}

/// Like [`redact`], also replacing exact matches of `session_secrets`.
pub fn redact_with(text: &str, session_secrets: &[String]) -> String {
    match SecretScanner::builtin() {
        Ok(s) => s.redact(text, session_secrets),
        Err(_) => "[REDACTED:secret-rules-unavailable]".to_string(),
    }
}

pub(crate) struct NoSecretsLeaked;

impl Gate for NoSecretsLeaked {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let scanner = match SecretScanner::builtin() {
                Ok(s) => s,
                Err(e) => return GateResult::fail(NAME, e.to_string()),
            };
            let mut sources: Vec<(&str, &str)> = ctx
                .written_content()
                .into_iter()
                .map(|c| ("written content", c))
                .collect();
            if let Some(text) = ctx.output_text() {
                sources.push(("tool output", text));
            }
            let mut findings = Vec::new();
            let mut rules_hit = Vec::new();
            for (source, text) in sources {
                for f in scanner.scan(text, &ctx.session_secrets) {
                    if !rules_hit.contains(&f.rule_id) {
                        rules_hit.push(f.rule_id.clone());
                    }
                    findings.push(json!({
                        "source": source,
                        "rule_id": f.rule_id,
                        "snippet": f.snippet,
                    }));
                }
            }
            if findings.is_empty() {
                GateResult::pass(NAME, "no secret found")
            } else {
                GateResult::fail(
                    NAME,
                    format!(
                        "{} possible secret(s) found ({}); they are redacted from stored evidence",
                        findings.len(),
                        rules_hit.join(", ")
                    ),
                )
                .with_findings(findings)
            }
        })
    }
}
