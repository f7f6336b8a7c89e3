//! The file-system half of the sandbox, with Landlock.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
};

use crate::error::SandboxError;
use crate::policy::SandboxPolicy;
use crate::read_grants::read_grants;

/// The newest Landlock ABI whose file-system rights this policy uses
/// (`Refer` from 2, `Truncate` from 3, `IoctlDev` from 5); older kernels
/// get the rights they know (best effort) and say so.
const ABI_USED: ABI = ABI::V5;

/// Device files every command may write (`2>/dev/null` and the like).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// How far Landlock enforced the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Enforcement {
    /// Every right the policy handles is enforced.
    Full,
    /// An older kernel: some rights (say `Truncate`) are not handled.
    Partial,
    /// The kernel has no Landlock: nothing is enforced.
    None,
}

/// True when the running kernel accepts a Landlock ruleset (ABI 1 or newer).
pub fn available() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.create())
        .is_ok()
}

/// Restricts the calling thread (and what it executes) to the policy's
/// file-system rules.
pub fn restrict(policy: &SandboxPolicy) -> Result<Enforcement, SandboxError> {
    let err = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_USED))
        .map_err(err)?
        .create()
        .map_err(err)?;
    // Listing directories is allowed everywhere (names are not secrets;
    // see docs/sandbox.md); reading and executing files is not.
    ruleset = add(ruleset, Path::new("/"), AccessFs::ReadDir.into())?;
    let read = AccessFs::ReadFile | AccessFs::Execute;
    for path in read_grants(Path::new("/"), &policy.deny_read) {
        ruleset = add(ruleset, &path, read)?;
    }
    let write = AccessFs::from_write(ABI_USED);
    let writable = policy
        .writable
        .iter()
        .cloned()
        .chain(WRITABLE_DEVICES.iter().map(PathBuf::from));
    for path in writable {
        ruleset = add(ruleset, &path, write)?;
    }
    let status = ruleset.restrict_self().map_err(err)?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        _ => Enforcement::None,
    })
}

/// Adds a rule for `path` (skipped when it does not exist); a file gets
/// only the rights that apply to files.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let access = if path.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI_USED)
    };
    if access.is_empty() {
        return Ok(ruleset);
    }
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| SandboxError::Landlock(format!("{}: {e}", path.display())))
}
