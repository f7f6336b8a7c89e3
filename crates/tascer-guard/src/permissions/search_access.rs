//! [`SearchAccess`]: the file-access decision applied to every file a
//! search opens, not only to the path it was called with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tascer_core::Behavior;

use super::call::ToolCall;
use super::decision::DecisionSource;
use super::engine::PermissionEngine;
use super::sensitive::SensitivePatterns;

/// Decides, for each file a `Grep` or `Glob` finds under an approved root,
/// whether it may be opened: the engine decides a `Read` of that file
/// (rules, policies, mode) and the file is withheld when that is a denial,
/// or an ask from a rule or a policy (a sensitive file, a hard link to
/// one, a `Read` deny or ask rule). An ask only because the file lies
/// outside the working directories does not withhold it: the search root
/// was approved.
///
/// Without `Read` rules or policies of the caller's own, only files the
/// built-in policy could protect are decided (a sensitive name, or more
/// than one hard link), so a search over a large tree costs one `stat` per
/// file at most.
#[derive(Debug)]
pub struct SearchAccess {
    engine: Arc<PermissionEngine>,
    cwd: PathBuf,
    every_file: bool,
    sensitive: SensitivePatterns,
}

impl SearchAccess {
    /// A check for calls made from `cwd`.
    pub fn new(engine: Arc<PermissionEngine>, cwd: PathBuf) -> Self {
        let every_file = engine.screens_every_file();
        let sensitive = engine.sensitive_patterns().clone();
        SearchAccess {
            engine,
            cwd,
            every_file,
            sensitive,
        }
    }

    fn needs_decision(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.every_file
            || self.sensitive.matching(path).is_some()
            || std::fs::metadata(path).is_ok_and(|m| m.nlink() > 1)
    }
}

impl PermissionEngine {
    /// The per-file check the loop hands to tools that open files they
    /// found themselves (Grep over a directory, Glob results): see
    /// [`SearchAccess`].
    pub fn file_access(self: &Arc<Self>, cwd: &Path) -> Arc<dyn tascer_core::FileAccess> {
        Arc::new(SearchAccess::new(Arc::clone(self), cwd.to_path_buf()))
    }
}

impl tascer_core::FileAccess for SearchAccess {
    fn may_read(&self, path: &Path) -> Result<(), String> {
        if !self.needs_decision(path) {
            return Ok(());
        }
        let call = ToolCall::new(
            "Read",
            json!({ "file_path": path.to_string_lossy() }),
            &self.cwd,
        );
        let d = self.engine.evaluate(&call);
        let refused = match d.behavior {
            Behavior::Deny => true,
            Behavior::Ask => matches!(
                d.decided_by,
                DecisionSource::Rule { .. } | DecisionSource::Policy { .. }
            ),
            Behavior::Allow => false,
        };
        if refused { Err(d.reason) } else { Ok(()) }
    }
}
