//! [`WriteScopePolicy`]: the only files a session may change.

use std::path::{Path, PathBuf};

use super::call::ToolCall;
use super::facts::CallFacts;
use super::path_pattern::PathPattern;
use super::paths::{canonicalize, is_within};
use super::policy::{Policy, PolicyVerdict};

/// Shell commands whose literal operands are paths they change.
const CHANGING_COMMANDS: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "touch", "mkdir", "tee", "ln", "chmod", "chown", "truncate",
    "install", "dd",
];

/// Denies every write outside a set of gitignore-style path patterns
/// (relative to the call's working directory), and every write inside a
/// protected directory even when a pattern matches.
///
/// Checked writes: the paths of `Write`, `Edit`, `MultiEdit` and
/// `NotebookEdit`; for `Bash`, the targets of output redirections and the
/// operands of file-changing commands (`rm mv cp touch mkdir tee ln chmod
/// chown truncate install dd`). A target only known at run time is denied.
/// Other programs run by `Bash` (an interpreter, `sed -i`) are not looked
/// into: leave `Bash` out of the session's tools when that matters.
#[derive(Debug, Clone)]
pub struct WriteScopePolicy {
    patterns: Vec<PathPattern>,
    protected: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl WriteScopePolicy {
    /// A policy allowing writes to paths matching `patterns` (gitignore
    /// style, as in `Edit(…)` rules: `src/**`, `README.md`, `/docs/`).
    /// Returns the pattern's error when one is invalid.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, String> {
        let patterns = patterns
            .iter()
            .map(|p| {
                let p = p.as_ref().trim();
                PathPattern::parse(p, None).map_err(|e| format!("file pattern `{p}`: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(WriteScopePolicy {
            patterns,
            protected: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
        })
    }

    /// Adds a directory no write may touch, whatever the patterns say.
    pub fn protected(mut self, dir: impl Into<PathBuf>) -> Self {
        self.protected.push(dir.into());
        self
    }

    fn allows(&self, path: &Path, cwd: &Path) -> PolicyVerdict {
        let home = self.home.as_deref();
        let canonical = canonicalize(path, cwd, home);
        if let Some(dir) = self
            .protected
            .iter()
            .map(|d| canonicalize(d, cwd, home))
            .find(|d| is_within(&canonical, d))
        {
            return PolicyVerdict::Deny {
                reason: format!(
                    "{} is inside the protected directory {}",
                    canonical.display(),
                    dir.display()
                ),
            };
        }
        if self
            .patterns
            .iter()
            .any(|p| p.matches(&canonical, cwd, home))
        {
            return PolicyVerdict::Abstain;
        }
        PolicyVerdict::Deny {
            reason: format!(
                "{} is outside the files this session may change ({})",
                canonical.display(),
                self.describe()
            ),
        }
    }

    fn describe(&self) -> String {
        if self.patterns.is_empty() {
            return "none".to_string();
        }
        self.patterns
            .iter()
            .map(|p| p.raw.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check_shell(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        let Some(analysis) = &facts.shell else {
            return PolicyVerdict::Abstain;
        };
        let mut verdict = PolicyVerdict::Abstain;
        for cmd in &analysis.commands {
            let mut targets: Vec<&super::shell::ShellWord> = cmd.writes.iter().collect();
            if cmd
                .base_name()
                .is_some_and(|name| CHANGING_COMMANDS.contains(&name))
            {
                targets.extend(cmd.argv.iter().skip(1).filter(|w| !w.text.starts_with('-')));
            }
            for word in targets {
                let v = if word.literal && !word.glob {
                    self.allows(Path::new(&word.text), &call.cwd)
                } else if word.text == "/dev/null" {
                    PolicyVerdict::Abstain
                } else {
                    PolicyVerdict::Deny {
                        reason: format!(
                            "`{}` writes to `{}`, which is only known at run time; \
                             this session may only change {}",
                            cmd.display(),
                            word.text,
                            self.describe()
                        ),
                    }
                };
                verdict = verdict.stricter(v);
            }
        }
        verdict
    }
}

impl Policy for WriteScopePolicy {
    fn name(&self) -> &str {
        "write-scope"
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        let facts = CallFacts::of(call, self.home.as_deref());
        self.check_with_facts(call, &facts)
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        let mut verdict = PolicyVerdict::Abstain;
        for p in facts.paths.iter().filter(|p| p.write) {
            verdict = verdict.stricter(self.allows(&p.lexical, &call.cwd));
        }
        if call.tool_name == "Bash" {
            verdict = verdict.stricter(self.check_shell(call, facts));
        }
        verdict
    }

    fn cacheable(&self, _call: &ToolCall) -> bool {
        // Symlinks can change where a path goes between two calls.
        false
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn verdict(policy: &WriteScopePolicy, tool: &str, input: serde_json::Value) -> PolicyVerdict {
        let dir = std::env::temp_dir();
        policy.check(&ToolCall::new(tool, input, dir))
    }

    fn denied(v: &PolicyVerdict) -> bool {
        matches!(v, PolicyVerdict::Deny { .. })
    }

    #[test]
    fn writes_inside_the_patterns_pass_and_others_are_denied() {
        let p = WriteScopePolicy::new(&["src/**", "README.md"]).unwrap();
        assert!(!denied(&verdict(
            &p,
            "Write",
            json!({"file_path": "src/a/b.rs", "content": ""})
        )));
        assert!(!denied(&verdict(
            &p,
            "Edit",
            json!({"file_path": "README.md"})
        )));
        assert!(denied(&verdict(
            &p,
            "Write",
            json!({"file_path": "other.txt"})
        )));
        assert!(denied(&verdict(
            &p,
            "Write",
            json!({"file_path": "src/../x.rs"})
        )));
        assert!(denied(&verdict(
            &p,
            "Write",
            json!({"file_path": "/etc/passwd"})
        )));
        // Reads are not this policy's business.
        assert!(!denied(&verdict(
            &p,
            "Read",
            json!({"file_path": "/etc/hosts"})
        )));
    }

    #[test]
    fn shell_redirections_and_changing_commands_are_checked() {
        let p = WriteScopePolicy::new(&["out/**"]).unwrap();
        assert!(!denied(&verdict(
            &p,
            "Bash",
            json!({"command": "echo hi > out/a.txt"})
        )));
        assert!(denied(&verdict(
            &p,
            "Bash",
            json!({"command": "echo hi > b.txt"})
        )));
        assert!(denied(&verdict(
            &p,
            "Bash",
            json!({"command": "rm -f b.txt"})
        )));
        assert!(denied(&verdict(
            &p,
            "Bash",
            json!({"command": "echo x > \"$F\""})
        )));
        assert!(!denied(&verdict(&p, "Bash", json!({"command": "ls -la"}))));
    }

    #[test]
    fn protected_directories_win_over_patterns() {
        let dir = std::env::temp_dir();
        let p = WriteScopePolicy::new(&["**"])
            .unwrap()
            .protected(dir.join("contracts"));
        let call = ToolCall::new(
            "Write",
            json!({"file_path": "contracts/a.md", "content": ""}),
            dir.clone(),
        );
        assert!(denied(&p.check(&call)));
    }
}
