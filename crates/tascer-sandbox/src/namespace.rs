//! Read-only paths inside writable ones, with a user and mount namespace.
//!
//! Landlock cannot take a right back inside a tree it allowed, so the
//! protected paths of a writable workspace (`.git/hooks`, `.tascer/`…) are
//! bind-mounted read-only over themselves in a private mount namespace.
//! A caller with `CAP_SYS_ADMIN` (root) needs only the mount namespace;
//! others get a user namespace too, which maps their own ids to
//! themselves. Once seccomp is loaded, no process in the sandbox can mount,
//! unmount or enter another namespace, so the mounts hold.

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{getegid, geteuid};

use crate::error::SandboxError;

/// Makes each existing path of `paths` read-only for this process and
/// what it executes. Returns the paths protected; paths that do not
/// exist are skipped (see docs/sandbox.md).
pub fn protect_read_only(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SandboxError> {
    let existing: Vec<PathBuf> = paths.iter().filter(|p| p.exists()).cloned().collect();
    if existing.is_empty() {
        return Ok(existing);
    }
    // With CAP_SYS_ADMIN (root) a mount namespace alone will do; without
    // it, a user namespace grants the right to mount in a new one.
    if unshare(CloneFlags::CLONE_NEWNS).is_err() {
        let (uid, gid) = (geteuid().as_raw(), getegid().as_raw());
        unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
            .map_err(|e| SandboxError::Namespace(format!("unshare: {e}")))?;
        map_ids(uid, gid)?;
    }
    // Nothing mounted here propagates back to the host.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| SandboxError::Namespace(format!("make / a slave mount: {e}")))?;
    for path in &existing {
        bind_read_only(path)?;
    }
    Ok(existing)
}

/// Writes the new user namespace's id maps: the caller's own ids map to
/// themselves (a process may map no other id into a namespace it made;
/// files of other owners show as `nobody`).
fn map_ids(uid: u32, gid: u32) -> Result<(), SandboxError> {
    let write = |file: &str, text: String| {
        std::fs::write(file, text)
            .map_err(|e| SandboxError::Namespace(format!("write {file}: {e}")))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// Bind-mounts `path` over itself, then makes that mount read-only.
fn bind_read_only(path: &Path) -> Result<(), SandboxError> {
    let err = |what: &str, e: nix::Error| {
        SandboxError::Namespace(format!("{what} {}: {e}", path.display()))
    };
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|e| err("bind", e))?;
    let flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept_flags(path);
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
        .map_err(|e| err("make read-only", e))
}

/// The mount flags of `path`'s mount that a remount inside a user
/// namespace must keep (the kernel locks them: dropping one is `EPERM`).
fn kept_flags(path: &Path) -> MsFlags {
    let Ok(stat) = statvfs(path) else {
        return MsFlags::empty();
    };
    let have = stat.flags();
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(st, _)| have.contains(*st))
    .fold(MsFlags::empty(), |acc, (_, ms)| acc | ms)
}
