//! The gitleaks rules: the built-in set as a Rust table made from the
//! embedded TOML when Tascer is built (`build.rs`), or any gitleaks TOML
//! parsed at run time; regexes compiled lazily (only when a rule's keyword
//! appears).

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::re2;

/// The gitleaks v8.30.0 default rules (MIT licence; see `data/README.md`).
#[cfg(test)]
pub(crate) const GITLEAKS_TOML: &str = include_str!("../../../../data/gitleaks-v8.30.0.toml");

/// One rule of the built-in set, as `build.rs` writes it (keywords and
/// stopwords already lowercase).
struct StaticRule {
    id: &'static str,
    description: &'static str,
    regex: Option<&'static str>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    keywords: &'static [&'static str],
    allowlists: &'static [StaticAllowlist],
}

/// One allowlist of a built-in rule.
struct StaticAllowlist {
    regexes: &'static [&'static str],
    regex_target: Option<&'static str>,
    stopwords: &'static [&'static str],
}

/// The built-in rules, from `data/gitleaks-v8.30.0.toml` at build time.
static BUILTIN_RULES: &[StaticRule] = include!(concat!(env!("OUT_DIR"), "/gitleaks_rules.rs"));

/// The built-in rules, ready to compile on demand. They borrow the static
/// table: nothing is copied.
pub(crate) fn builtin_rules() -> Vec<Rule> {
    let borrowed = |v: &'static [&'static str]| v.iter().map(|s| Cow::Borrowed(*s)).collect();
    BUILTIN_RULES
        .iter()
        .filter_map(|r| {
            let source = r.regex?;
            let mut allow_sources = Vec::new();
            let mut stopwords = Vec::new();
            for a in r.allowlists {
                let target = AllowTarget::of(a.regex_target);
                allow_sources.extend(a.regexes.iter().map(|s| (Cow::Borrowed(*s), target)));
                stopwords.extend(a.stopwords.iter().map(|s| Cow::Borrowed(*s)));
            }
            Some(Rule {
                id: Cow::Borrowed(r.id),
                description: Cow::Borrowed(r.description),
                source: Cow::Borrowed(source),
                regex: OnceLock::new(),
                entropy: r.entropy,
                secret_group: r.secret_group,
                keywords: borrowed(r.keywords),
                allow_sources,
                allow: OnceLock::new(),
                stopwords,
            })
        })
        .collect()
}

const SIZE_LIMIT: usize = 64 * 1024 * 1024;

#[derive(Debug, Deserialize)]
struct RawConfig {
    #[serde(default)]
    rules: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    id: String,
    #[serde(default)]
    description: String,
    regex: Option<String>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<RawAllowlist>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAllowlist {
    #[serde(default)]
    regexes: Vec<String>,
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

/// One compiled-on-demand rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) id: Cow<'static, str>,
    pub(crate) description: Cow<'static, str>,
    source: Cow<'static, str>,
    regex: OnceLock<Option<Regex>>,
    pub(crate) entropy: Option<f64>,
    pub(crate) secret_group: Option<usize>,
    /// Lowercase keywords; empty means "always try".
    pub(crate) keywords: Vec<Cow<'static, str>>,
    allow_sources: Vec<(Cow<'static, str>, AllowTarget)>,
    allow: OnceLock<Vec<(Regex, AllowTarget)>>,
    /// Lowercase stopwords.
    pub(crate) stopwords: Vec<Cow<'static, str>>,
}

/// What an allowlist regex is matched against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum AllowTarget {
    Secret,
    Match,
    Line,
}

impl AllowTarget {
    /// From gitleaks' `regexTarget` (default: the secret).
    fn of(regex_target: Option<&str>) -> Self {
        match regex_target {
            Some("match") => AllowTarget::Match,
            Some("line") => AllowTarget::Line,
            _ => AllowTarget::Secret,
        }
    }
}

impl Rule {
    /// The compiled regex; `None` when it does not compile with Rust's
    /// `regex` (logged once).
    pub(crate) fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| match compile(&self.source) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!(rule = %self.id, error = %e, "secret rule does not compile");
                    None
                }
            })
            .as_ref()
    }

    /// The compiled allowlist regexes.
    pub(crate) fn allowlist(&self) -> &[(Regex, AllowTarget)] {
        self.allow.get_or_init(|| {
            self.allow_sources
                .iter()
                .filter_map(|(s, t)| compile(s).ok().map(|r| (r, *t)))
                .collect()
        })
    }
}

/// Compiles a Go (RE2) pattern with Rust's `regex` (see [`re2`]): the
/// size limit raised, Perl classes as RE2 reads them (ASCII), and a
/// literal `{` that does not start a repetition escaped.
pub(crate) fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    let build = |p: &str| {
        RegexBuilder::new(p)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .build()
    };
    let pattern = re2::ascii_perl_classes(pattern);
    build(&pattern).or_else(|_| build(&re2::escape_go_braces(&pattern)))
}

/// Parses the rules of a gitleaks TOML config.
pub(crate) fn parse_rules(toml_text: &str) -> Result<Vec<Rule>, toml::de::Error> {
    let raw: RawConfig = toml::from_str(toml_text)?;
    Ok(raw.rules.into_iter().filter_map(Rule::from_raw).collect())
}

impl Rule {
    /// The rule as scanning uses it; `None` for a rule without a regex
    /// (gitleaks' path-only rules).
    fn from_raw(r: RawRule) -> Option<Rule> {
        let source = r.regex?;
        let mut allow_sources = Vec::new();
        let mut stopwords = Vec::new();
        for a in r.allowlists {
            let target = AllowTarget::of(a.regex_target.as_deref());
            allow_sources.extend(a.regexes.into_iter().map(|s| (Cow::Owned(s), target)));
            stopwords.extend(a.stopwords.iter().map(|s| Cow::Owned(s.to_lowercase())));
        }
        Some(Rule {
            id: Cow::Owned(r.id),
            description: Cow::Owned(r.description),
            source: Cow::Owned(source),
            regex: OnceLock::new(),
            entropy: r.entropy,
            secret_group: r.secret_group,
            keywords: r
                .keywords
                .iter()
                .map(|k| Cow::Owned(k.to_lowercase()))
                .collect(),
            allow_sources,
            allow: OnceLock::new(),
            stopwords,
        })
    }
}

/// Shannon entropy (bits per character) of `s`.
pub(crate) fn shannon_entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut total = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let n = total as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The table `build.rs` made holds exactly what parsing the TOML at
    /// run time gives.
    #[test]
    fn the_built_table_matches_the_toml() {
        let parsed = parse_rules(GITLEAKS_TOML).unwrap();
        let built = builtin_rules();
        assert!(parsed.len() > 200, "{}", parsed.len());
        assert_eq!(built.len(), parsed.len());
        for (b, p) in built.iter().zip(&parsed) {
            assert_eq!(format!("{b:?}"), format!("{p:?}"), "rule {}", p.id);
        }
    }
}
