//! [`BashSandbox`]: the OS sandbox the Bash tool runs its commands under.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use tascer_sandbox::{Launcher, SandboxPolicy};

/// How the Bash tool sandboxes its commands: the helper that applies the
/// policy ([`Launcher`]), the policy, and the session's private temporary
/// directory (writable, `TMPDIR` for every command, removed with the last
/// clone).
#[derive(Debug, Clone)]
pub struct BashSandbox {
    launcher: Launcher,
    policy: SandboxPolicy,
    temp: Arc<tempfile::TempDir>,
}

impl BashSandbox {
    /// Commands run through `launcher` under `policy`, plus a fresh
    /// private temporary directory.
    pub fn new(launcher: Launcher, policy: SandboxPolicy) -> std::io::Result<Self> {
        let temp = tempfile::Builder::new().prefix("tascer-tmp-").tempdir()?;
        let real = std::fs::canonicalize(temp.path())?;
        Ok(BashSandbox {
            launcher,
            policy: policy.allow_write(&real),
            temp: Arc::new(temp),
        })
    }

    /// The policy commands run under (the temporary directory included).
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The private temporary directory.
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    /// `bash -c script` run through the helper, with `TMPDIR` set to the
    /// private temporary directory.
    pub(crate) fn bash(&self, script: &str) -> tokio::process::Command {
        let argv: Vec<OsString> = vec!["bash".into(), "-c".into(), script.into()];
        let mut cmd = tokio::process::Command::new(self.launcher.program());
        cmd.args(self.launcher.args(&self.policy, &argv))
            .env("TMPDIR", self.temp.path());
        cmd
    }

    /// The note for a failed command's output: what the sandbox refused
    /// and what it allows; `None` when the output shows no refusal.
    pub(crate) fn explain(&self, output: &str) -> Option<String> {
        tascer_sandbox::explain_refusal(output, &self.policy)
    }
}
