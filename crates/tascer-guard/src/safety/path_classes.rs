//! Path classes — trusted, sensitive, other — and the low-risk
//! auto-approve policy built on them.
//!
//! The project directory (the call's working directory and the additional
//! directories) and the configured trusted roots (by default `~/.claude`)
//! are trusted; a path matching a sensitive pattern (the built-in
//! [`DEFAULT_SENSITIVE`](crate::permissions::DEFAULT_SENSITIVE) list plus
//! the configured ones) is sensitive wherever it is. The sensitive patterns
//! are the file-access policy's own: path classes widen that one list and
//! decide whether reading such a file is refused or asked; they do not
//! keep a second one.

use std::path::{Path, PathBuf};

use crate::permissions::paths::{canonicalize, is_within};
use crate::permissions::{
    Behavior, CallFacts, DEFAULT_SENSITIVE, Policy, PolicyVerdict, SensitivePatterns, ToolCall,
};

/// The trusted roots used when none are configured.
pub const DEFAULT_TRUSTED: &[&str] = &["~/.claude"];

/// The tools auto-approve covers when none are configured.
pub const DEFAULT_AUTO_APPROVE_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead"];

/// The class of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathClass {
    /// Inside the project or a trusted root, and not sensitive.
    Trusted,
    /// Matches this sensitive pattern.
    Sensitive(String),
    /// Anything else.
    Other,
}

/// Trusted roots and sensitive patterns.
#[derive(Debug, Clone, PartialEq)]
pub struct PathClasses {
    trusted: Vec<String>,
    sensitive: SensitivePatterns,
    sensitive_read: Behavior,
}

impl Default for PathClasses {
    /// `~/.claude` trusted, the built-in sensitive patterns, sensitive
    /// reads refused.
    fn default() -> Self {
        PathClasses::new(
            DEFAULT_TRUSTED.iter().map(|s| (*s).to_string()).collect(),
            Vec::new(),
            Behavior::Deny,
        )
    }
}

impl PathClasses {
    /// Path classes with these trusted roots (`~/` expanded, relative ones
    /// anchored at the call's working directory), these sensitive patterns
    /// besides the built-in ones, and what reading a sensitive file gets
    /// (`Deny` or `Ask`; `Allow` is taken as `Ask`).
    pub fn new(
        trusted: Vec<String>,
        extra_sensitive: Vec<String>,
        sensitive_read: Behavior,
    ) -> Self {
        let mut patterns: Vec<String> =
            DEFAULT_SENSITIVE.iter().map(|s| (*s).to_string()).collect();
        for p in extra_sensitive {
            if !patterns.contains(&p) {
                patterns.push(p);
            }
        }
        PathClasses {
            trusted,
            sensitive: SensitivePatterns::new(patterns),
            sensitive_read: match sensitive_read {
                Behavior::Deny => Behavior::Deny,
                _ => Behavior::Ask,
            },
        }
    }

    /// The sensitive patterns (built-in and configured).
    pub fn sensitive(&self) -> &SensitivePatterns {
        &self.sensitive
    }

    /// What reading a sensitive file gets.
    pub fn sensitive_read(&self) -> Behavior {
        self.sensitive_read
    }

    /// The trusted roots as configured.
    pub fn trusted(&self) -> &[String] {
        &self.trusted
    }

    /// The canonical trusted roots for a call in `cwd`: `cwd`, `extra`
    /// (the additional working directories) and the configured roots.
    pub fn roots(&self, cwd: &Path, extra: &[PathBuf], home: Option<&Path>) -> Vec<PathBuf> {
        std::iter::once(cwd.to_path_buf())
            .chain(extra.iter().cloned())
            .chain(
                self.trusted
                    .iter()
                    .map(|t| crate::permissions::paths::expand_home(t, home)),
            )
            .map(|p| canonicalize(&p, cwd, home))
            .collect()
    }

    /// The class of a path (`canonical`: resolved; `lexical`: as written,
    /// made absolute), given the canonical trusted `roots`.
    pub fn classify(&self, canonical: &Path, lexical: &Path, roots: &[PathBuf]) -> PathClass {
        if let Some(pattern) = self
            .sensitive
            .matching(canonical)
            .or_else(|| self.sensitive.matching(lexical))
        {
            return PathClass::Sensitive(pattern.to_string());
        }
        if roots.iter().any(|r| is_within(canonical, r)) {
            PathClass::Trusted
        } else {
            PathClass::Other
        }
    }
}

/// Low-risk auto-approve: a call of one of the configured read-only tools
/// whose every path is [`PathClass::Trusted`] is allowed (like an allow
/// rule: deny and ask rules and other policies' refusals still come
/// first).
#[derive(Debug, Clone)]
pub struct AutoApprovePolicy {
    classes: PathClasses,
    tools: Vec<String>,
    additional: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl AutoApprovePolicy {
    /// The name decisions carry (`DecisionSource::Policy { name }`).
    pub const NAME: &'static str = "auto-approve";

    /// Auto-approve for `tools` (read-only tools) on the trusted paths of
    /// `classes`, with `additional` working directories trusted too.
    pub fn new(
        classes: PathClasses,
        tools: Vec<String>,
        additional: Vec<PathBuf>,
        home: Option<PathBuf>,
    ) -> Self {
        AutoApprovePolicy {
            classes,
            tools,
            additional,
            home,
        }
    }
}

impl Policy for AutoApprovePolicy {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        let facts = CallFacts::of(call, self.home.as_deref());
        self.check_with_facts(call, &facts)
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        if !self.tools.contains(&call.tool_name) || facts.paths.is_empty() {
            return PolicyVerdict::Abstain;
        }
        let roots = self
            .classes
            .roots(&call.cwd, &self.additional, self.home.as_deref());
        let all_trusted = facts
            .paths
            .iter()
            .all(|p| self.classes.classify(&p.canonical, &p.lexical, &roots) == PathClass::Trusted);
        if all_trusted {
            PolicyVerdict::Allow
        } else {
            PolicyVerdict::Abstain
        }
    }

    fn cacheable(&self, _call: &ToolCall) -> bool {
        // The class of a path depends on the filesystem (symlinks).
        false
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, input: serde_json::Value, cwd: &Path) -> ToolCall {
        ToolCall {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            cwd: cwd.to_path_buf(),
            session_id: "s".into(),
        }
    }

    #[test]
    fn reads_on_trusted_paths_are_approved_sensitive_and_other_paths_are_not() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        let policy = AutoApprovePolicy::new(
            PathClasses::new(
                vec!["~/.claude".into()],
                vec!["*.tfstate".into()],
                Behavior::Deny,
            ),
            vec!["Read".into(), "Grep".into()],
            Vec::new(),
            Some(home.path().to_path_buf()),
        );
        let cwd = project.path();
        let read = |path: &str| call("Read", json!({ "file_path": path }), cwd);
        let claude = home.path().join(".claude/settings.json");
        assert_eq!(
            policy.check(&read(claude.to_str().unwrap())),
            PolicyVerdict::Allow
        );
        assert_eq!(policy.check(&read("src/main.rs")), PolicyVerdict::Allow);
        // Sensitive anywhere, built-in or configured.
        assert_eq!(policy.check(&read(".env")), PolicyVerdict::Abstain);
        assert_eq!(policy.check(&read("prod.tfstate")), PolicyVerdict::Abstain);
        // Outside every trusted root.
        let other = elsewhere.path().join("notes.md");
        assert_eq!(
            policy.check(&read(other.to_str().unwrap())),
            PolicyVerdict::Abstain
        );
        // `..` cannot climb out of a trusted root.
        assert_eq!(
            policy.check(&read("../../../../etc/hosts")),
            PolicyVerdict::Abstain
        );
        // Only the configured tools.
        let write = call("Write", json!({"file_path": "a.txt", "content": "x"}), cwd);
        assert_eq!(policy.check(&write), PolicyVerdict::Abstain);
        let glob = call("Glob", json!({"pattern": "*.rs"}), cwd);
        assert_eq!(policy.check(&glob), PolicyVerdict::Abstain);
        let grep = call("Grep", json!({"pattern": "x"}), cwd);
        assert_eq!(policy.check(&grep), PolicyVerdict::Allow);
    }
}
