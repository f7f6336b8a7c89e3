//! [`Launcher`]: the command line that runs a command through the helper.
//!
//! Two programs can be the helper: the small `tascer-sandbox-exec`
//! (preferred: it links little besides this crate, so starting it for
//! every command costs little) and `tascer` itself (`tascer sandbox …`).
//! Both take the same arguments after their own name: `--policy-json JSON
//! -- CMD ARGS…` ([`Launcher::args`], read back by [`parse_helper_args`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::policy::SandboxPolicy;

/// Names a helper executable (`tascer-sandbox-exec` or `tascer`) to use
/// when none is found next to the current executable (a program embedding
/// the library, the Python package).
pub const HELPER_ENV: &str = "TASCER_SANDBOX_HELPER";

/// The file name of the small helper executable.
pub const EXEC_HELPER_NAME: &str = "tascer-sandbox-exec";

/// The helper that applies a policy and then executes the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    program: PathBuf,
    /// True for `tascer` (the `sandbox` subcommand goes first).
    subcommand: bool,
}

impl Launcher {
    /// The `tascer` executable at `exe` as the helper (`tascer sandbox …`).
    pub fn tascer(exe: impl Into<PathBuf>) -> Self {
        Launcher {
            program: exe.into(),
            subcommand: true,
        }
    }

    /// The small `tascer-sandbox-exec` executable at `exe` as the helper.
    pub fn exec_helper(exe: impl Into<PathBuf>) -> Self {
        Launcher {
            program: exe.into(),
            subcommand: false,
        }
    }

    /// The helper at `exe`, of the kind its file name says.
    pub fn at(exe: impl Into<PathBuf>) -> Self {
        let exe = exe.into();
        let small = exe
            .file_stem()
            .is_some_and(|name| name == OsStr::new(EXEC_HELPER_NAME));
        if small {
            Self::exec_helper(exe)
        } else {
            Self::tascer(exe)
        }
    }

    /// Finds a helper: `$TASCER_SANDBOX_HELPER`; else, when the current
    /// executable is `tascer`, the `tascer-sandbox-exec` next to it or
    /// `tascer` itself; else either on the `PATH`.
    pub fn find() -> Option<Self> {
        if let Some(exe) = std::env::var_os(HELPER_ENV).filter(|v| !v.is_empty()) {
            return Some(Self::at(exe));
        }
        if let Ok(exe) = std::env::current_exe()
            && exe.file_stem() == Some(OsStr::new("tascer"))
        {
            return Some(Self::beside(&exe).unwrap_or_else(|| Self::tascer(exe)));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find_map(|dir| {
            let tascer = dir.join(exe_name("tascer"));
            if !tascer.is_file() {
                return None;
            }
            Some(Self::beside(&tascer).unwrap_or_else(|| Self::tascer(tascer)))
        })
    }

    /// The small helper installed next to the `tascer` at `tascer`, if any.
    fn beside(tascer: &Path) -> Option<Self> {
        let small = tascer.with_file_name(exe_name(EXEC_HELPER_NAME));
        small.is_file().then(|| Self::exec_helper(small))
    }

    /// The helper executable.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The helper's arguments to run `argv` under `policy`.
    pub fn args(&self, policy: &SandboxPolicy, argv: &[OsString]) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::with_capacity(argv.len() + 4);
        if self.subcommand {
            args.push("sandbox".into());
        }
        args.extend(["--policy-json".into(), policy.to_json().into(), "--".into()]);
        args.extend(argv.iter().cloned());
        args
    }
}

/// Reads the small helper's arguments (what [`Launcher::args`] wrote,
/// without the program name): the policy and the command to run.
pub fn parse_helper_args(
    args: &[OsString],
) -> Result<(SandboxPolicy, Vec<OsString>), SandboxError> {
    let usage = || {
        SandboxError::Policy(format!(
            "usage: {EXEC_HELPER_NAME} --policy-json JSON -- CMD ARGS… (an internal helper; \
             people use `tascer sandbox`)"
        ))
    };
    let [flag, json, separator, command @ ..] = args else {
        return Err(usage());
    };
    if flag != "--policy-json" || separator != "--" {
        return Err(usage());
    }
    let json = json
        .to_str()
        .ok_or_else(|| SandboxError::Policy("the policy is not UTF-8".into()))?;
    let policy = SandboxPolicy::from_json(json)?;
    if command.is_empty() {
        return Err(SandboxError::NoCommand);
    }
    Ok((policy, command.to_vec()))
}

/// `name` with the platform's executable suffix.
fn exe_name(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_helpers_read_back_what_the_launcher_writes() {
        let policy = SandboxPolicy::for_workspace(Path::new("/srv/space"), None);
        let argv: Vec<OsString> = vec!["bash".into(), "-c".into(), "echo hi".into()];
        let small = Launcher::at("/opt/bin/tascer-sandbox-exec").args(&policy, &argv);
        let (read, command) = parse_helper_args(&small).unwrap();
        assert_eq!(read, policy);
        assert_eq!(command, argv);
        let full = Launcher::at("/opt/bin/tascer").args(&policy, &argv);
        assert_eq!(full[0], "sandbox");
        assert_eq!(&full[1..], &small[..]);
    }

    #[test]
    fn malformed_helper_arguments_are_refused_with_the_usage() {
        let none: Vec<OsString> = vec!["--policy-json".into(), "{}".into()];
        let err = parse_helper_args(&none).unwrap_err().to_string();
        assert!(err.contains("usage: tascer-sandbox-exec"), "{err}");
        let policy = SandboxPolicy::for_workspace(Path::new("/w"), None).to_json();
        let no_command: Vec<OsString> = vec!["--policy-json".into(), policy.into(), "--".into()];
        assert!(matches!(
            parse_helper_args(&no_command),
            Err(SandboxError::NoCommand)
        ));
    }
}
