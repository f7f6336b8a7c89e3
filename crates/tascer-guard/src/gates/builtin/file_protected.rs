//! `file_protected` (alias `not_protected`): writes to protected paths fail.

use futures::future::BoxFuture;
use std::sync::OnceLock;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::gates::context::GateContext;
use crate::gates::error::GateError;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

/// Options of `file_protected`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileProtectedOptions {
    /// Globs, matched against the path relative to the working directory
    /// (or the absolute path outside it).
    pub globs: Vec<String>,
    /// Also protect common lockfiles (`Cargo.lock`, `package-lock.json`, ...).
    pub lockfiles: bool,
}

impl Default for FileProtectedOptions {
    fn default() -> Self {
        FileProtectedOptions {
            globs: vec![".git/**".to_string(), "**/.git/**".to_string()],
            lockfiles: true,
        }
    }
}

const LOCKFILES: &[&str] = &[
    "**/Cargo.lock",
    "**/package-lock.json",
    "**/npm-shrinkwrap.json",
    "**/yarn.lock",
    "**/pnpm-lock.yaml",
    "**/poetry.lock",
    "**/uv.lock",
    "**/Pipfile.lock",
    "**/go.sum",
    "**/Gemfile.lock",
    "**/composer.lock",
];

pub(crate) struct FileProtected {
    name: &'static str,
    globs: Vec<Glob>,
    /// Built on the first check: a process that never writes a file (a
    /// `tascer hook` call for `Bash`) does not pay for it.
    set: OnceLock<Result<GlobSet, String>>,
}

impl FileProtected {
    /// Checks every glob now (a bad one is a configuration error); the
    /// matcher is built when first needed.
    pub(crate) fn new(
        name: &'static str,
        options: &FileProtectedOptions,
    ) -> Result<Self, GateError> {
        let mut globs = options.globs.clone();
        if options.lockfiles {
            globs.extend(LOCKFILES.iter().map(|s| (*s).to_string()));
        }
        let globs = globs
            .iter()
            .map(|g| {
                Glob::new(g).map_err(|source| GateError::InvalidGlob {
                    glob: g.clone(),
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FileProtected {
            name,
            globs,
            set: OnceLock::new(),
        })
    }

    fn set(&self) -> Result<&GlobSet, &str> {
        self.set
            .get_or_init(|| {
                let mut builder = GlobSetBuilder::new();
                for glob in &self.globs {
                    builder.add(glob.clone());
                }
                builder.build().map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl Gate for FileProtected {
    fn name(&self) -> &str {
        self.name
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let set = match self.set() {
                Ok(set) => set,
                Err(e) => {
                    return GateResult::fail(
                        self.name,
                        format!("the protected-path globs do not build: {e}"),
                    );
                }
            };
            let mut findings = Vec::new();
            for path in &ctx.changed_files {
                let rel = ctx.relative(path);
                let hits = set.matches(rel);
                if !hits.is_empty() {
                    let globs: Vec<&str> = hits
                        .iter()
                        .filter_map(|i| self.globs.get(*i).map(Glob::glob))
                        .collect();
                    findings.push(json!({ "path": rel.display().to_string(), "globs": globs }));
                }
            }
            if findings.is_empty() {
                GateResult::pass(self.name, "no protected path is written")
            } else {
                let paths: Vec<String> = findings
                    .iter()
                    .filter_map(|f| f["path"].as_str().map(str::to_string))
                    .collect();
                GateResult::fail(
                    self.name,
                    format!(
                        "protected path(s) must not be written: {}",
                        paths.join(", ")
                    ),
                )
                .with_findings(findings)
            }
        })
    }
}
