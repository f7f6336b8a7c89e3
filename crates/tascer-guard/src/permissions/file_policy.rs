//! [`FileAccessPolicy`]: where file tools may read and write.

use std::path::{Path, PathBuf};

use tascer_core::Behavior;

use super::call::ToolCall;
use super::facts::CallFacts;
use super::mode::{EDIT_TOOLS, READ_TOOLS};
use super::paths::{canonicalize, is_within};
use super::policy::{Policy, PolicyVerdict};
use super::sensitive::SensitivePatterns;

/// Checks the paths of `Read`, `Write`, `Edit`, `MultiEdit`,
/// `NotebookEdit`, `Glob`, `Grep` (and `LS`, `NotebookRead`) calls.
///
/// Paths are canonicalized first (see [`canonicalize`]): `..`, `~`,
/// symlinks — also the symlinked parent of a file that does not exist yet —
/// and `/proc/self/root/…` cannot hide where a call really goes.
///
/// * inside a restricted root → deny;
/// * matching a sensitive pattern → [`sensitive_write`](Self::sensitive_write)
///   (deny by default) for edits, [`sensitive_read`](Self::sensitive_read)
///   (ask by default) for reads;
/// * outside the allowed roots (the call's cwd plus additional
///   directories) → deny when [`block_outside`](Self::block_outside) is set,
///   else no opinion (the mode and rules decide, which asks by default).
#[derive(Debug, Clone)]
pub struct FileAccessPolicy {
    allowed_roots: Vec<PathBuf>,
    include_cwd: bool,
    restricted_roots: Vec<PathBuf>,
    sensitive: SensitivePatterns,
    sensitive_read: Behavior,
    sensitive_write: Behavior,
    block_outside: bool,
    check_shell_args: bool,
    home: Option<PathBuf>,
}

/// What settings (`policies.fileAccess`) change in the built-in
/// [`FileAccessPolicy`], merged across the settings layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccessConfig {
    /// Allowed roots besides the cwd and the additional directories.
    pub allowed_roots: Vec<PathBuf>,
    /// Roots no file tool may touch.
    pub restricted_roots: Vec<PathBuf>,
    /// [`FileAccessPolicy::block_outside`], when set.
    pub block_outside: Option<bool>,
    /// [`FileAccessPolicy::sensitive_write`], when set.
    pub sensitive_write: Option<Behavior>,
    /// [`FileAccessPolicy::check_shell_args`], when set.
    pub check_shell_args: Option<bool>,
}

impl FileAccessConfig {
    /// `policy` with this configuration applied.
    pub fn apply(&self, mut policy: FileAccessPolicy) -> FileAccessPolicy {
        for root in &self.allowed_roots {
            policy = policy.allowed_root(root.clone());
        }
        for root in &self.restricted_roots {
            policy = policy.restricted_root(root.clone());
        }
        if let Some(yes) = self.block_outside {
            policy = policy.block_outside(yes);
        }
        if let Some(behavior) = self.sensitive_write {
            policy = policy.sensitive_write(behavior);
        }
        if let Some(yes) = self.check_shell_args {
            policy = policy.check_shell_args(yes);
        }
        policy
    }
}

impl Default for FileAccessPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl FileAccessPolicy {
    /// The default policy: cwd allowed, default sensitive patterns, reads of
    /// sensitive files ask, writes deny, `~` from `$HOME`.
    pub fn new() -> Self {
        FileAccessPolicy {
            allowed_roots: Vec::new(),
            include_cwd: true,
            restricted_roots: Vec::new(),
            sensitive: SensitivePatterns::default(),
            sensitive_read: Behavior::Ask,
            sensitive_write: Behavior::Deny,
            block_outside: false,
            check_shell_args: false,
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// Adds an allowed root besides the cwd.
    pub fn allowed_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.allowed_roots.push(root.into());
        self
    }

    /// Whether the call's cwd is an allowed root (default true).
    pub fn include_cwd(mut self, yes: bool) -> Self {
        self.include_cwd = yes;
        self
    }

    /// Adds a root no file tool may touch.
    pub fn restricted_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.restricted_roots.push(root.into());
        self
    }

    /// Replaces the sensitive patterns.
    pub fn sensitive_patterns(mut self, patterns: SensitivePatterns) -> Self {
        self.sensitive = patterns;
        self
    }

    /// What reads of sensitive files get (default ask).
    pub fn sensitive_read(mut self, behavior: Behavior) -> Self {
        self.sensitive_read = behavior;
        self
    }

    /// What writes of sensitive files get (default deny).
    pub fn sensitive_write(mut self, behavior: Behavior) -> Self {
        self.sensitive_write = behavior;
        self
    }

    /// Deny anything outside the allowed roots (default false).
    pub fn block_outside(mut self, yes: bool) -> Self {
        self.block_outside = yes;
        self
    }

    /// Also look at literal `Bash` arguments and redirection targets:
    /// sensitive files mentioned → ask, written by a redirection → deny
    /// (default false; such verdicts depend on the filesystem, so those
    /// calls are not cached).
    pub fn check_shell_args(mut self, yes: bool) -> Self {
        self.check_shell_args = yes;
        self
    }

    /// The home directory for `~`.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    fn roots(&self, cwd: &Path) -> Vec<PathBuf> {
        let home = self.home.as_deref();
        let mut roots: Vec<PathBuf> = self
            .allowed_roots
            .iter()
            .map(|r| canonicalize(r, cwd, home))
            .collect();
        if self.include_cwd {
            roots.push(canonicalize(cwd, cwd, home));
        }
        roots
    }

    /// The verdict for a read or write of a protected file; `reason` gets
    /// the verb (`reading`, `writing`).
    fn sensitive_verdict(&self, write: bool, reason: impl FnOnce(&str) -> String) -> PolicyVerdict {
        let (behavior, verb) = if write {
            (self.sensitive_write, "writing")
        } else {
            (self.sensitive_read, "reading")
        };
        let reason = reason(verb);
        match behavior {
            Behavior::Deny => PolicyVerdict::Deny { reason },
            Behavior::Ask => PolicyVerdict::Ask { reason },
            Behavior::Allow => PolicyVerdict::Abstain,
        }
    }

    fn check_path(
        &self,
        lexical: &Path,
        canonical: &Path,
        write: bool,
        cwd: &Path,
        roots: &[PathBuf],
    ) -> PolicyVerdict {
        let home = self.home.as_deref();
        for r in &self.restricted_roots {
            let r = canonicalize(r, cwd, home);
            if is_within(canonical, &r) {
                return PolicyVerdict::Deny {
                    reason: format!(
                        "{} is inside the restricted directory {}",
                        canonical.display(),
                        r.display()
                    ),
                };
            }
        }
        let sensitive = self
            .sensitive
            .matching(canonical)
            .or_else(|| self.sensitive.matching(lexical));
        if let Some(pattern) = sensitive {
            return self.sensitive_verdict(write, |verb| {
                format!(
                    "{verb} {} matches the sensitive pattern `{pattern}`",
                    canonical.display()
                )
            });
        }
        if let Some(twin) =
            super::hardlinks::protected_twin(canonical, home, roots, &self.sensitive)
        {
            return self.sensitive_verdict(write, |verb| {
                format!(
                    "{verb} {}: it is a hard link to the protected file {}",
                    canonical.display(),
                    twin.display()
                )
            });
        }
        if self.block_outside && !roots.iter().any(|r| is_within(canonical, r)) {
            return PolicyVerdict::Deny {
                reason: format!("{} is outside the allowed directories", canonical.display()),
            };
        }
        PolicyVerdict::Abstain
    }
}

impl Policy for FileAccessPolicy {
    fn name(&self) -> &str {
        "file-access"
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        let facts = CallFacts::of(call, self.home.as_deref());
        self.check_with_facts(call, &facts)
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        let roots = self.roots(&call.cwd);
        let mut verdict = PolicyVerdict::Abstain;
        for p in &facts.paths {
            let v = self.check_path(&p.lexical, &p.canonical, p.write, &call.cwd, &roots);
            verdict = verdict.stricter(v);
        }
        if self.check_shell_args
            && let Some(analysis) = &facts.shell
        {
            let home = self.home.as_deref();
            for cmd in &analysis.commands {
                for w in cmd
                    .argv
                    .iter()
                    .skip(1)
                    .filter(|w| w.literal && !w.text.starts_with('-'))
                {
                    let canonical = canonicalize(Path::new(&w.text), &call.cwd, home);
                    let v = match self.check_path(
                        Path::new(&w.text),
                        &canonical,
                        false,
                        &call.cwd,
                        &roots,
                    ) {
                        PolicyVerdict::Deny { reason } => PolicyVerdict::Ask { reason },
                        PolicyVerdict::Ask { reason } => PolicyVerdict::Ask { reason },
                        _ => PolicyVerdict::Abstain,
                    };
                    verdict = verdict.stricter(v);
                }
                for w in cmd.writes.iter().filter(|w| w.literal) {
                    let canonical = canonicalize(Path::new(&w.text), &call.cwd, home);
                    let v =
                        self.check_path(Path::new(&w.text), &canonical, true, &call.cwd, &roots);
                    if !matches!(v, PolicyVerdict::Abstain) {
                        verdict = verdict.stricter(v);
                    }
                }
            }
        }
        verdict
    }

    fn cacheable(&self, call: &ToolCall) -> bool {
        if call.tool_name == "Bash" {
            !self.check_shell_args
        } else {
            let tool = call.tool_name.as_str();
            !(READ_TOOLS.contains(&tool) || EDIT_TOOLS.contains(&tool))
        }
    }
}
