//! The context a call is made in, as the loop records it around
//! admission's decision: git state, allowlisted environment, the files a
//! writing call names.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tascer_guard::gates::{GateContext, Phase};
use tascer_ledger::ContextSnapshot;

use crate::context_cache::{ContextCache, SharedCapturer, prewarm};

/// Tools whose calls may change the worktree: context is refreshed after
/// them (unless the capturer watches the worktree).
const WRITING_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];

/// Context capture of one session (shared by its agents).
pub(crate) struct ContextCapture {
    context_env: Vec<String>,
    /// Whether the git state is captured (validation `capture_git_state`).
    git: bool,
    /// Where the capturers come from (shared with other sessions that
    /// hold the same cache).
    cache: ContextCache,
    /// The context capturer of the directory calls last ran in.
    capturer: Mutex<Option<(PathBuf, SharedCapturer)>>,
}

impl ContextCapture {
    /// Captures context with these environment variables allowlisted,
    /// with the capturers of `cache`; the git state only when `git`.
    pub fn new(context_env: Vec<String>, cache: ContextCache, git: bool) -> Self {
        ContextCapture {
            context_env,
            git,
            cache,
            capturer: Mutex::new(None),
        }
    }

    /// The cache's context capturer for `cwd`, made this session's.
    fn capturer_for(&self, cwd: &Path) -> SharedCapturer {
        let mut slot = self.capturer.lock();
        match slot.as_ref() {
            Some((dir, capturer)) if dir == cwd => Arc::clone(capturer),
            _ => {
                let capturer = self.cache.capturer(cwd, &self.context_env);
                *slot = Some((cwd.to_path_buf(), Arc::clone(&capturer)));
                capturer
            }
        }
    }

    /// Starts the first context capture in `cwd` in the background (see
    /// [`crate::context_cache`]).
    pub fn prewarm(&self, cwd: &Path) {
        if self.git {
            prewarm(&self.capturer_for(cwd));
        }
    }

    /// The context of a call made in `cwd`: git state, allowlisted
    /// environment, cwd and version.
    pub fn capture(&self, cwd: &Path, env: &HashMap<String, String>) -> Value {
        let vars: BTreeMap<String, String> = self
            .context_env
            .iter()
            .filter_map(|k| {
                env.get(k)
                    .cloned()
                    .or_else(|| std::env::var(k).ok())
                    .map(|v| (k.clone(), v))
            })
            .collect();
        let snapshot = if self.git {
            self.capturer_for(cwd).lock().capture_with_env(vars)
        } else {
            ContextSnapshot {
                cwd: cwd.to_string_lossy().into_owned(),
                tascer_version: crate::VERSION.to_string(),
                git: None,
                git_error: None,
                env: vars,
                captured_at: chrono::Utc::now(),
            }
        };
        serde_json::to_value(snapshot)
            .unwrap_or_else(|_| json!({ "cwd": cwd.display().to_string() }))
    }

    /// After a call that may have written to the worktree, the cached git
    /// state is marked stale.
    pub fn after_call(&self, tool_name: &str) {
        if self.git
            && WRITING_TOOLS.contains(&tool_name)
            && let Some((_, capturer)) = self.capturer.lock().as_ref()
        {
            capturer.lock().worktree_may_have_changed();
        }
    }
}

/// The files a writing call names (absolute), for file evidence.
pub(crate) fn changed_files(tool_name: &str, input: &Value, cwd: &Path) -> Vec<PathBuf> {
    GateContext::new(Phase::Post, tool_name, input.clone(), cwd.to_path_buf()).changed_files
}
