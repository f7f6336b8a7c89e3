//! The helper's one job: enter the sandbox, then become the command.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use crate::error::SandboxError;
use crate::landlock_fs::{self, Enforcement};
use crate::policy::SandboxPolicy;
use crate::{namespace, seccomp};

/// Applies `policy` to the calling process and executes `argv` in its
/// place. Returns only on failure. Call it from a single-threaded process
/// (the `tascer sandbox` helper, before any runtime starts): the user
/// namespace requires it, and the rules must cover the only thread.
///
/// A part the kernel cannot enforce is a warning on stderr, or an error
/// when the policy sets `fail_if_unavailable`.
pub fn exec_sandboxed(policy: &SandboxPolicy, argv: &[OsString]) -> SandboxError {
    let Some((program, args)) = argv.split_first() else {
        return SandboxError::NoCommand;
    };
    match enter(policy) {
        Ok(warnings) => {
            for warning in warnings {
                eprintln!("tascer sandbox: warning: {warning}");
            }
        }
        Err(err) => return err,
    }
    let source = Command::new(program).args(args).exec();
    SandboxError::Exec {
        program: PathBuf::from(program),
        source,
    }
}

/// Applies the policy to this process: `no_new_privs`, the read-only
/// mounts, Landlock, then seccomp (last: it forbids the mounts). Returns
/// the warnings for parts not enforced.
pub fn enter(policy: &SandboxPolicy) -> Result<Vec<String>, SandboxError> {
    let mut warnings = Vec::new();
    let mut degrade = |what: String| -> Result<(), SandboxError> {
        if policy.fail_if_unavailable {
            Err(SandboxError::Unavailable(what))
        } else {
            warnings.push(what);
            Ok(())
        }
    };
    nix::sys::prctl::set_no_new_privs()
        .map_err(|e| SandboxError::Unavailable(format!("PR_SET_NO_NEW_PRIVS: {e}")))?;
    if let Err(err) = namespace::protect_read_only(&policy.read_only) {
        degrade(format!("protected paths stay writable ({err})"))?;
    }
    match landlock_fs::restrict(policy)? {
        Enforcement::Full => {}
        Enforcement::Partial => degrade(
            "this kernel's Landlock is older than ABI 5: some file rights (truncate, device \
             ioctls, cross-directory links) are not restricted"
                .into(),
        )?,
        _ => {
            degrade("this kernel has no Landlock: file reads and writes are NOT restricted".into())?
        }
    }
    if let Err(err) = seccomp::restrict(policy.network) {
        degrade(format!("system calls are NOT filtered ({err})"))?;
    }
    Ok(warnings)
}
