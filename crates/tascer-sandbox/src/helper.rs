//! [`helper_main`]: the whole of the small `tascer-sandbox-exec` helper.

use std::ffi::OsString;

use crate::error::SandboxError;
use crate::launcher::parse_helper_args;

/// Exit status when the sandbox could not be set up (as `env` and
/// `timeout` use 125 for their own failures).
pub const SETUP_FAILED: u8 = 125;

/// Reads the helper's arguments (after its name), enters the sandbox and
/// becomes the command. Returns only on failure, with the exit status to
/// use, having said why on stderr.
pub fn helper_main(args: &[OsString]) -> u8 {
    let err = match parse_helper_args(args) {
        Ok((policy, command)) => run(&policy, &command),
        Err(err) => err,
    };
    eprintln!("tascer sandbox: error: {err}");
    exit_status(&err)
}

#[cfg(target_os = "linux")]
fn run(policy: &crate::SandboxPolicy, command: &[OsString]) -> SandboxError {
    crate::exec_sandboxed(policy, command)
}

#[cfg(not(target_os = "linux"))]
fn run(_policy: &crate::SandboxPolicy, _command: &[OsString]) -> SandboxError {
    SandboxError::Unavailable(format!(
        "no OS sandbox on {} yet (see docs/sandbox.md)",
        std::env::consts::OS
    ))
}

/// The exit status for a command the helper could not run: 127 when the
/// program does not exist, 126 when it cannot be executed, 2 for a usage
/// error, [`SETUP_FAILED`] when the sandbox could not be set up (as the
/// shell and `env` report them).
pub fn exit_status(err: &SandboxError) -> u8 {
    match err {
        SandboxError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
        SandboxError::Exec { .. } => 126,
        SandboxError::NoCommand => 2,
        _ => SETUP_FAILED,
    }
}
