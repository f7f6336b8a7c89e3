//! The OS sandbox a session's commands (Bash, gate commands) run under,
//! from its options and the settings' `sandbox` section (docs/sandbox.md).

use std::path::Path;

use tascer_guard::permissions::{RuleOrigin, SandboxEscapePolicy};
use tascer_guard::settings::{LoadedSettings, SandboxSettings};
use tascer_sandbox::{CommandSandbox, Launcher, SandboxPolicy};

use crate::error::Error;
use crate::options::Options;

/// The sandbox for the session's commands (the Bash tool's, the gates'):
/// `None` when `sandbox.enabled`
/// is false, or (with a warning) when this machine cannot sandbox and
/// `sandbox.failIfUnavailable` is not set; an error when it is.
pub(crate) fn command_sandbox(
    options: &Options,
    settings: &LoadedSettings,
    cwd: &Path,
) -> Result<Option<CommandSandbox>, Error> {
    let wanted = settings
        .sandbox()
        .map_err(|e| Error::InvalidOptions(e.to_string()))?;
    if !wanted.enabled {
        return Ok(None);
    }
    let support = tascer_sandbox::support();
    let launcher = match (Launcher::find(), support.usable()) {
        (Some(launcher), true) => launcher,
        (launcher, _) => {
            let problem = match launcher {
                None => format!(
                    "no `tascer` executable to run commands through (set {})",
                    tascer_sandbox::HELPER_ENV
                ),
                Some(_) => support.missing().unwrap_or_default(),
            };
            if wanted.fail_if_unavailable {
                return Err(Error::InvalidOptions(format!(
                    "sandbox.failIfUnavailable is set and the OS sandbox is unavailable: {problem}"
                )));
            }
            tracing::warn!(
                "the OS sandbox is off: {problem}; Bash commands run unconfined (set \
                 sandbox.failIfUnavailable to refuse instead)"
            );
            return Ok(None);
        }
    };
    if let Some(missing) = support.missing() {
        tracing::warn!("the OS sandbox is partial: {missing}");
    }
    let mut policy = settings_policy(&wanted, cwd);
    for dir in &options.additional_directories {
        policy = policy.allow_write(&cwd.join(dir));
    }
    CommandSandbox::new(launcher, policy)
        .map(Some)
        .map_err(|e| {
            Error::InvalidOptions(format!(
                "cannot create the sandbox's temporary directory: {e}"
            ))
        })
}

/// The policy the settings describe for a workspace: the default one
/// ([`SandboxPolicy::for_workspace`]) with `network`, `failIfUnavailable`,
/// `allowWrite` (relative to `workspace`) and `denyRead` applied. Shared by
/// the session's commands and a host's Bash ([`crate::host_sandbox`]).
pub(crate) fn settings_policy(wanted: &SandboxSettings, workspace: &Path) -> SandboxPolicy {
    let mut policy = SandboxPolicy::for_workspace(workspace, std::env::home_dir().as_deref())
        .network(wanted.network)
        .fail_if_unavailable(wanted.fail_if_unavailable);
    for dir in &wanted.allow_write {
        policy = policy.allow_write(&workspace.join(dir));
    }
    for path in &wanted.deny_read {
        policy = policy.deny_read(path);
    }
    policy
}

/// The policy that guards the way out of the sandbox: the settings'
/// `sandbox.excludedCommands` and `sandbox.allowUnsandboxedCommands`.
pub(crate) fn escape_policy(
    settings: &LoadedSettings,
    cwd: &Path,
) -> Result<SandboxEscapePolicy, Error> {
    let wanted = settings
        .sandbox()
        .map_err(|e| Error::InvalidOptions(e.to_string()))?;
    let origin = RuleOrigin {
        source_file: Some("sandbox.excludedCommands".into()),
        project_root: Some(cwd.to_path_buf()),
    };
    SandboxEscapePolicy::new(
        &wanted.excluded_commands,
        wanted.allow_unsandboxed_commands,
        &origin,
    )
    .map_err(|e| Error::InvalidOptions(format!("sandbox.excludedCommands: {e}")))
}
