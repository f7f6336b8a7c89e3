//! [`Launcher`]: the command line that runs a command through the helper.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::policy::SandboxPolicy;

/// Names a `tascer` executable to use as the sandbox helper when the
/// current executable is not one (a program embedding the library, the
/// Python package).
pub const HELPER_ENV: &str = "TASCER_SANDBOX_HELPER";

/// The helper that applies a policy and then executes the command:
/// `tascer sandbox --policy-json JSON -- CMD ARGS…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    program: PathBuf,
}

impl Launcher {
    /// The `tascer` executable at `exe` as the helper.
    pub fn tascer(exe: impl Into<PathBuf>) -> Self {
        Launcher {
            program: exe.into(),
        }
    }

    /// Finds a helper: `$TASCER_SANDBOX_HELPER`, else the current
    /// executable when it is `tascer`, else `tascer` on the `PATH`.
    pub fn find() -> Option<Self> {
        if let Some(exe) = std::env::var_os(HELPER_ENV).filter(|v| !v.is_empty()) {
            return Some(Self::tascer(exe));
        }
        if let Ok(exe) = std::env::current_exe()
            && exe.file_name() == Some(OsStr::new("tascer"))
        {
            return Some(Self::tascer(exe));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("tascer"))
            .find(|p| p.is_file())
            .map(Self::tascer)
    }

    /// The helper executable.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The helper's arguments to run `argv` under `policy`.
    pub fn args(&self, policy: &SandboxPolicy, argv: &[OsString]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "sandbox".into(),
            "--policy-json".into(),
            policy.to_json().into(),
            "--".into(),
        ];
        args.extend(argv.iter().cloned());
        args
    }
}
