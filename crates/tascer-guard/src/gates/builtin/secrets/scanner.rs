//! Finds secrets in text and redacts them.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::rules::{AllowTarget, Rule, builtin_rules, parse_rules, shannon_entropy};
use crate::gates::error::GateError;

/// Rule id used for exact matches of session secrets.
pub const SESSION_SECRET_RULE: &str = "session-secret";

/// A secret found in text. It never holds the secret itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretFinding {
    /// The gitleaks rule id, or `session-secret`.
    pub rule_id: String,
    /// The rule's description.
    pub description: String,
    /// Byte offset of the secret in the scanned text.
    pub start: usize,
    /// Byte offset just past the secret.
    pub end: usize,
    /// A redacted snippet: the secret's surroundings with the secret
    /// replaced by `[REDACTED:<rule_id>]`.
    pub snippet: String,
}

/// The gitleaks rules, ready to scan.
#[derive(Debug)]
pub struct SecretScanner {
    rules: Vec<Rule>,
}

static BUILTIN: OnceLock<Result<SecretScanner, String>> = OnceLock::new();

/// Context bytes kept on each side of a secret in a snippet.
const SNIPPET_CONTEXT: usize = 16;

impl SecretScanner {
    /// The scanner over the embedded gitleaks v8.30.0 rules, built once
    /// (from a table made at build time: no TOML is parsed).
    pub fn builtin() -> Result<&'static SecretScanner, GateError> {
        BUILTIN
            .get_or_init(|| {
                Ok(SecretScanner {
                    rules: builtin_rules(),
                })
            })
            .as_ref()
            .map_err(|e| GateError::SecretRules(e.clone()))
    }

    /// A scanner over the rules of a gitleaks TOML config.
    pub fn from_toml(text: &str) -> Result<Self, GateError> {
        let rules = parse_rules(text).map_err(|e| GateError::SecretRules(e.to_string()))?;
        Ok(SecretScanner { rules })
    }

    /// Number of rules with a regex.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// Compiles every rule now and returns the ids of rules whose regex
    /// does not compile with Rust's `regex` (those rules never match).
    pub fn uncompilable_rules(&self) -> Vec<&str> {
        self.rules
            .iter()
            .filter(|r| r.regex().is_none())
            .map(|r| r.id.as_ref())
            .collect()
    }

    /// Finds secrets in `text`: every rule whose keyword (if any) appears,
    /// filtered by entropy, stopwords and the rule's allowlist, plus exact
    /// matches of `session_secrets`. Sorted by position.
    pub fn scan(&self, text: &str, session_secrets: &[String]) -> Vec<SecretFinding> {
        let lower = text.to_lowercase();
        let mut found: Vec<(usize, usize, &str, &str)> = Vec::new();
        for rule in &self.rules {
            if !rule.keywords.is_empty()
                && !rule.keywords.iter().any(|k| lower.contains(k.as_ref()))
            {
                continue;
            }
            let Some(re) = rule.regex() else { continue };
            for caps in re.captures_iter(text) {
                let Some(whole) = caps.get(0) else { continue };
                let secret = match rule.secret_group {
                    Some(g) => caps.get(g),
                    None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()),
                }
                .unwrap_or(whole);
                if allowed(rule, text, whole, secret) {
                    continue;
                }
                found.push((
                    secret.start(),
                    secret.end(),
                    rule.id.as_ref(),
                    rule.description.as_ref(),
                ));
            }
        }
        for s in session_secrets.iter().filter(|s| !s.is_empty()) {
            for (start, m) in text.match_indices(s.as_str()) {
                found.push((
                    start,
                    start + m.len(),
                    SESSION_SECRET_RULE,
                    "A secret known to the session.",
                ));
            }
        }
        // On equal spans a specific rule wins over `generic-api-key`.
        found.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1), f.2.starts_with("generic")));
        found.dedup_by_key(|f| (f.0, f.1));
        let ranges: Vec<(usize, usize)> = found.iter().map(|f| (f.0, f.1)).collect();
        found
            .iter()
            .map(|&(start, end, id, desc)| SecretFinding {
                rule_id: id.to_string(),
                description: desc.to_string(),
                start,
                end,
                snippet: snippet(text, start, end, id, &ranges),
            })
            .collect()
    }

    /// `text` with every finding replaced by `[REDACTED:<rule_id>]`.
    pub fn redact(&self, text: &str, session_secrets: &[String]) -> String {
        let findings = self.scan(text, session_secrets);
        let mut out = String::with_capacity(text.len());
        let mut pos = 0;
        for f in findings {
            if f.end <= pos {
                continue;
            }
            let start = f.start.max(pos);
            out.push_str(text.get(pos..start).unwrap_or_default());
            out.push_str(&format!("[REDACTED:{}]", f.rule_id));
            pos = f.end;
        }
        out.push_str(text.get(pos..).unwrap_or_default());
        out
    }
}

fn allowed(rule: &Rule, text: &str, whole: regex::Match<'_>, secret: regex::Match<'_>) -> bool {
    let secret_lower = secret.as_str().to_lowercase();
    if rule
        .stopwords
        .iter()
        .any(|w| secret_lower.contains(w.as_ref()))
    {
        return true;
    }
    rule.allowlist().iter().any(|(re, target)| match target {
        AllowTarget::Secret => re.is_match(secret.as_str()),
        AllowTarget::Match => re.is_match(whole.as_str()),
        AllowTarget::Line => re.is_match(line_of(text, whole.start(), whole.end())),
    }) || rule
        .entropy
        .is_some_and(|min| shannon_entropy(secret.as_str()) < min)
}

fn line_of(text: &str, start: usize, end: usize) -> &str {
    let s = text
        .get(..start)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let e = text
        .get(end..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| end + i);
    text.get(s..e).unwrap_or_default()
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

fn snippet(
    text: &str,
    start: usize,
    end: usize,
    rule_id: &str,
    ranges: &[(usize, usize)],
) -> String {
    let before_start = floor_boundary(text, start.saturating_sub(SNIPPET_CONTEXT));
    let after_end = ceil_boundary(text, end.saturating_add(SNIPPET_CONTEXT));
    // Context characters inside any other finding are masked, and control
    // characters become spaces, so a snippet never carries a secret.
    let clean = |from: usize, to: usize| -> String {
        text.get(from..to)
            .unwrap_or_default()
            .char_indices()
            .map(|(i, c)| {
                let at = from + i;
                if ranges.iter().any(|&(s, e)| at >= s && at < e) {
                    '*'
                } else if c.is_control() {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    };
    format!(
        "{}[REDACTED:{rule_id}]{}",
        clean(before_start, start),
        clean(end, after_end)
    )
}
