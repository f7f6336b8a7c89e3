//! Gitignore-style path specifiers of `Read(…)`/`Edit(…)` rules.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use super::paths::canonicalize;

/// Where a path pattern is anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathAnchor {
    /// `//abs/path`: the filesystem root.
    Absolute,
    /// `~/path`: the home directory.
    Home,
    /// `/path`: the project root of the settings file the rule came from
    /// (the working directory when the rule has no file).
    ProjectRoot(Option<PathBuf>),
    /// `./path` or `path`: the working directory.
    Cwd,
}

/// A parsed path specifier.
#[derive(Debug, Clone)]
pub struct PathPattern {
    /// The specifier as written.
    pub raw: String,
    /// Where it is anchored.
    pub anchor: PathAnchor,
    /// The glob relative to the anchor.
    pub relative: String,
    matcher: GlobMatcher,
}

impl PartialEq for PathPattern {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw && self.anchor == other.anchor
    }
}

impl PathPattern {
    /// Parses a specifier; `project_root` anchors `/path` forms.
    pub fn parse(spec: &str, project_root: Option<&Path>) -> Result<Self, String> {
        let raw = spec.trim();
        if raw.is_empty() {
            return Err("empty path pattern".into());
        }
        let (anchor, rest, anchored) = if let Some(r) = raw.strip_prefix("//") {
            (PathAnchor::Absolute, r, true)
        } else if raw == "~" {
            (PathAnchor::Home, "", true)
        } else if let Some(r) = raw.strip_prefix("~/") {
            (PathAnchor::Home, r, true)
        } else if let Some(r) = raw.strip_prefix('/') {
            (
                PathAnchor::ProjectRoot(project_root.map(Path::to_path_buf)),
                r,
                true,
            )
        } else if let Some(r) = raw.strip_prefix("./") {
            (PathAnchor::Cwd, r, true)
        } else {
            // gitignore: a pattern with no inner slash matches at any depth.
            let inner_slash = raw.trim_end_matches('/').contains('/');
            (PathAnchor::Cwd, raw, inner_slash)
        };
        let rest = rest.trim_end_matches('/');
        let relative = if rest.is_empty() {
            "**".to_string()
        } else if anchored {
            rest.to_string()
        } else {
            format!("**/{rest}")
        };
        let matcher = GlobBuilder::new(&relative)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("bad path pattern: {e}"))?
            .compile_matcher();
        Ok(PathPattern {
            raw: raw.to_string(),
            anchor,
            relative,
            matcher,
        })
    }

    /// The directory the pattern is relative to, for a call in `cwd`.
    pub fn base(&self, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
        let base = match &self.anchor {
            PathAnchor::Absolute => PathBuf::from("/"),
            PathAnchor::Home => home?.to_path_buf(),
            PathAnchor::ProjectRoot(Some(root)) => root.clone(),
            PathAnchor::ProjectRoot(None) | PathAnchor::Cwd => cwd.to_path_buf(),
        };
        Some(canonicalize(&base, cwd, home))
    }

    /// True when the absolute `path` (or a directory containing it, as in
    /// gitignore) matches.
    pub fn matches(&self, path: &Path, cwd: &Path, home: Option<&Path>) -> bool {
        let Some(base) = self.base(cwd, home) else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(&base) else {
            return false;
        };
        if rel.as_os_str().is_empty() {
            return self.relative == "**";
        }
        rel.ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| self.matcher.is_match(a))
    }
}
