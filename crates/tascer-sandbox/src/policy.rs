//! [`SandboxPolicy`]: what a sandboxed command may read, write and reach.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;

/// Paths inside the workspace kept read-only although the workspace is
/// writable: what a command could change to run code later or to loosen
/// Tascer's own settings.
const PROTECTED_IN_WORKSPACE: &[&str] = &[".git/hooks", ".git/config", ".tascer", ".claude"];

/// Secret locations under the user's home that no sandboxed command reads.
const SECRET_HOME_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
];

/// What a sandboxed command may do. Serialized as JSON for
/// `tascer sandbox --policy-json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// Where the command may create, change and delete files: the
    /// workspace first, then `--add-dir` directories and the private
    /// temporary directory.
    pub writable: Vec<PathBuf>,
    /// Paths inside the writable roots kept read-only.
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Paths the command may not read (files or whole directories).
    #[serde(default)]
    pub deny_read: Vec<PathBuf>,
    /// Whether the command may open network sockets.
    #[serde(default)]
    pub network: bool,
    /// Refuse to run when a part of the policy cannot be enforced (instead
    /// of a warning on stderr).
    #[serde(default)]
    pub fail_if_unavailable: bool,
}

impl SandboxPolicy {
    /// The default policy for a workspace: write only in `workspace`,
    /// its protected paths read-only, the secret locations of `home` and
    /// the `.env` files outside the workspace ([`env_files_outside`])
    /// unreadable, no network.
    ///
    /// [`env_files_outside`]: crate::env_files_outside
    /// A git worktree (`.git` is a file naming its git directory) gets
    /// that directory and the repository's shared one writable too, so
    /// `git commit` works, with the shared `hooks` and `config` read-only.
    pub fn for_workspace(workspace: &Path, home: Option<&Path>) -> Self {
        let workspace = absolute(workspace);
        let mut policy = SandboxPolicy {
            read_only: PROTECTED_IN_WORKSPACE
                .iter()
                .map(|p| workspace.join(p))
                .collect(),
            writable: vec![workspace.clone()],
            deny_read: home
                .map(default_secret_paths)
                .unwrap_or_default()
                .into_iter()
                .chain(crate::env_files::env_files_outside(&workspace, home))
                .collect(),
            network: false,
            fail_if_unavailable: false,
        };
        if let Some((git_dir, common)) = worktree_git_dirs(&workspace) {
            policy.read_only.push(common.join("hooks"));
            policy.read_only.push(common.join("config"));
            policy = policy.allow_write(&git_dir).allow_write(&common);
        }
        policy
    }

    /// Adds a writable directory (`--add-dir`, `sandbox.allowWrite`, the
    /// private temporary directory); its own protected paths stay read-only.
    pub fn allow_write(mut self, dir: &Path) -> Self {
        let dir = absolute(dir);
        if !self.writable.contains(&dir) {
            self.writable.push(dir);
        }
        self
    }

    /// Adds a path no command may read (`sandbox.denyRead`).
    pub fn deny_read(mut self, path: &Path) -> Self {
        let path = absolute(path);
        if !self.deny_read.contains(&path) {
            self.deny_read.push(path);
        }
        self
    }

    /// Lets the command open network sockets (or not).
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Refuse to run rather than warn when the kernel lacks a feature.
    pub fn fail_if_unavailable(mut self, refuse: bool) -> Self {
        self.fail_if_unavailable = refuse;
        self
    }

    /// The policy as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a policy from JSON; every path must be absolute.
    pub fn from_json(json: &str) -> Result<Self, SandboxError> {
        let policy: SandboxPolicy =
            serde_json::from_str(json).map_err(|e| SandboxError::Policy(e.to_string()))?;
        let all = policy
            .writable
            .iter()
            .chain(&policy.read_only)
            .chain(&policy.deny_read);
        if let Some(relative) = all.into_iter().find(|p| !p.is_absolute()) {
            return Err(SandboxError::Policy(format!(
                "{} is not an absolute path",
                relative.display()
            )));
        }
        Ok(policy)
    }

    /// One sentence for the model and the user: what the sandbox allows.
    pub fn summary(&self) -> String {
        let writable: Vec<String> = self
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        format!(
            "Commands run under Tascer's OS sandbox: writes only under {}; {} kept read-only; \
             secret locations (~/.ssh, ~/.aws, credentials…) unreadable; network {}. \
             Settings: sandbox.allowWrite, sandbox.denyRead, sandbox.network, sandbox.enabled. \
             A command that cannot work inside the sandbox may set dangerouslyDisableSandbox: \
             true, which a person must approve (or sandbox.excludedCommands list).",
            writable.join(", "),
            PROTECTED_IN_WORKSPACE.join(", "),
            if self.network { "allowed" } else { "off" },
        )
    }
}

/// The secret locations under `home`: SSH, cloud and package-registry
/// credentials, and Tascer's signing keys (`$TASCER_HOME/keys`, default
/// `~/.tascer/keys`).
pub fn default_secret_paths(home: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SECRET_HOME_PATHS.iter().map(|p| home.join(p)).collect();
    let tascer_home = std::env::var_os("TASCER_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".tascer"));
    paths.push(tascer_home.join("keys"));
    paths
}

/// The git directory and the shared (common) git directory of a git
/// worktree at `workspace` (whose `.git` is a file `gitdir: PATH`).
fn worktree_git_dirs(workspace: &Path) -> Option<(PathBuf, PathBuf)> {
    let text = std::fs::read_to_string(workspace.join(".git")).ok()?;
    let git_dir = workspace.join(text.strip_prefix("gitdir:")?.trim());
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(rel) => git_dir.join(rel.trim()),
        Err(_) => git_dir.clone(),
    };
    Some((absolute(&git_dir), absolute(&common)))
}

/// `path` made absolute against the current directory and cleaned of `.`
/// and `..` without touching the file system.
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_policy_protects_settings_and_hooks() {
        let p = SandboxPolicy::for_workspace(Path::new("/w/x/../ws"), Some(Path::new("/h")));
        assert_eq!(p.writable, vec![PathBuf::from("/w/ws")]);
        assert!(p.read_only.contains(&PathBuf::from("/w/ws/.git/hooks")));
        assert!(p.read_only.contains(&PathBuf::from("/w/ws/.claude")));
        assert!(p.deny_read.contains(&PathBuf::from("/h/.ssh")));
        assert!(!p.network);
    }

    #[test]
    fn a_git_worktree_may_commit_but_not_change_shared_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git_dir = root.join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(
            root.join("wt/.git"),
            format!("gitdir: {}\n", git_dir.display()),
        )
        .unwrap();
        let p = SandboxPolicy::for_workspace(&root.join("wt"), None);
        assert!(p.writable.contains(&git_dir));
        assert!(p.writable.contains(&root.join("main/.git")));
        assert!(p.read_only.contains(&root.join("main/.git/hooks")));
        assert!(p.read_only.contains(&root.join("main/.git/config")));
    }

    #[test]
    fn json_round_trip_and_relative_paths_refused() {
        let p = SandboxPolicy::for_workspace(Path::new("/ws"), None).network(true);
        assert_eq!(SandboxPolicy::from_json(&p.to_json()).ok(), Some(p));
        let err = SandboxPolicy::from_json(r#"{"writable":["rel"]}"#);
        assert!(matches!(err, Err(SandboxError::Policy(m)) if m.contains("absolute")));
    }
}
