//! Sensitive file patterns (`.env`, `.ssh/`, `*.pem`, …).

use std::path::Path;

use super::wildcard::wildcard_match;

/// The default sensitive patterns. A pattern ending in `/` names a
/// directory anywhere on the path; others match the file name or any
/// directory on the path (`config/secrets/prod.yaml` is sensitive by
/// `secrets*`).
pub const DEFAULT_SENSITIVE: &[&str] = &[
    ".env",
    ".env.*",
    ".ssh/",
    ".aws/",
    ".gnupg/",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "*credentials*",
    "secrets*",
    "*password*",
    ".netrc",
    ".git-credentials",
    // Claude Code's OAuth credentials (`~/.claude/.credentials.json`).
    ".credentials.json",
];

/// Template files that hold no secrets although `.env.*` names them.
pub const NOT_SENSITIVE: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// A set of sensitive patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensitivePatterns {
    patterns: Vec<String>,
}

impl Default for SensitivePatterns {
    fn default() -> Self {
        Self::new(DEFAULT_SENSITIVE.iter().copied())
    }
}

impl SensitivePatterns {
    /// A set from the given patterns.
    pub fn new<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> Self {
        SensitivePatterns {
            patterns: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// The patterns.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The first pattern `path` matches: a directory pattern (`.ssh/`)
    /// any directory on it, another pattern the file name or any
    /// directory on it (template files such as `.env.example` excepted).
    pub fn matching(&self, path: &Path) -> Option<&str> {
        let components: Vec<String> = path
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let file = components.last()?;
        let template = NOT_SENSITIVE.contains(&file.as_str());
        self.patterns
            .iter()
            .find(|p| match p.strip_suffix('/') {
                Some(dir) => components.iter().any(|c| wildcard_match(dir, c)),
                None => {
                    let (dirs, _) = components.split_at(components.len() - 1);
                    (!template && wildcard_match(p, file))
                        || dirs.iter().any(|c| wildcard_match(p, c))
                }
            })
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::SensitivePatterns;

    #[test]
    fn paths_are_sensitive_by_their_directories_too() {
        let patterns = SensitivePatterns::default();
        for (path, pattern) in [
            ("config/secrets/prod.yaml", Some("secrets*")),
            ("db_password.txt", Some("*password*")),
            ("aws-credentials.json", Some("*credentials*")),
            ("home/u/.ssh/config", Some(".ssh/")),
            ("deploy/.env", Some(".env")),
            ("deploy/.env.example", None),
            ("src/main.rs", None),
            ("/etc/passwd", None),
        ] {
            assert_eq!(patterns.matching(Path::new(path)), pattern, "{path}");
        }
    }
}
