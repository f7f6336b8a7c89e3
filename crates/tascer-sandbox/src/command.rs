//! [`CommandSandbox`]: a session's sandbox for the commands it starts.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use crate::launcher::Launcher;
use crate::policy::SandboxPolicy;

/// How a session sandboxes the commands it starts on the model's behalf
/// (the Bash tool, gate commands): the helper that applies the policy
/// ([`Launcher`]), the policy, and the session's private temporary
/// directory (writable, `TMPDIR` for every command, removed with the last
/// clone).
#[derive(Debug, Clone)]
pub struct CommandSandbox {
    launcher: Launcher,
    policy: SandboxPolicy,
    temp: Arc<tempfile::TempDir>,
}

impl PartialEq for CommandSandbox {
    fn eq(&self, other: &Self) -> bool {
        self.launcher == other.launcher
            && self.policy == other.policy
            && self.temp.path() == other.temp.path()
    }
}

impl CommandSandbox {
    /// Commands run through `launcher` under `policy`, plus a fresh
    /// private temporary directory.
    pub fn new(launcher: Launcher, policy: SandboxPolicy) -> std::io::Result<Self> {
        let temp = tempfile::Builder::new().prefix("tascer-tmp-").tempdir()?;
        let real = std::fs::canonicalize(temp.path())?;
        Ok(CommandSandbox {
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

    /// `argv` run through the helper, with `TMPDIR` set to the private
    /// temporary directory.
    pub fn command(&self, argv: &[OsString]) -> std::process::Command {
        let mut cmd = std::process::Command::new(self.launcher.program());
        cmd.args(self.launcher.args(&self.policy, argv))
            .env("TMPDIR", self.temp.path());
        cmd
    }

    /// `shell -c script` run through the helper (see [`Self::command`]).
    pub fn shell(&self, shell: &str, script: &str) -> std::process::Command {
        self.command(&[shell.into(), "-c".into(), script.into()])
    }

    /// The note for a failed command's output: what the sandbox refused
    /// and what it allows; `None` when the output shows no refusal.
    pub fn explain(&self, output: &str) -> Option<String> {
        crate::explain_refusal(output, &self.policy)
    }
}
