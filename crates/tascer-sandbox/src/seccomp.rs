//! The system-call half of the sandbox, with seccomp-bpf.
//!
//! Two filters: the first refuses with `EPERM` the calls that could leave
//! or weaken the sandbox (and `socket` for anything but `AF_UNIX` while the
//! network is off); the second answers `clone3` with `ENOSYS`, since its
//! flags sit in memory a filter cannot read, so the C library falls back
//! to `clone`, whose namespace flags the first filter checks.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::SandboxError;

/// System calls refused outright: debugging other processes, changing
/// mounts or namespaces, changing the root, BPF programs, kernel images
/// and modules, the kernel's key store, io_uring (which runs file and
/// socket operations this filter would not see).
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_chroot,
    libc::SYS_pivot_root,
    libc::SYS_bpf,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_io_uring_setup,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
];

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The architecture this binary runs on, as seccompiler names it.
fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(format!("unsupported architecture: {e}")))
}

fn seccomp_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

/// One rule: argument `arg` compared with `op` to `value`.
fn rule(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompRule, SandboxError> {
    let cond =
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(seccomp_err)?;
    SeccompRule::new(vec![cond]).map_err(seccomp_err)
}

/// The `EPERM` filter for a policy with or without network.
pub fn refusal_filter(network: bool) -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        REFUSED.iter().map(|nr| (*nr, Vec::new())).collect();
    let mut clone_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        clone_rules.push(rule(0, SeccompCmpOp::MaskedEq(flag), flag)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    if !network {
        let unix = u64::from(libc::AF_UNIX.unsigned_abs());
        rules.insert(libc::SYS_socket, vec![rule(0, SeccompCmpOp::Ne, unix)?]);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.unsigned_abs()),
        arch()?,
    )
    .map_err(seccomp_err)?;
    filter.try_into().map_err(seccomp_err)
}

/// The filter answering `clone3` with `ENOSYS`.
pub fn clone3_filter() -> Result<BpfProgram, SandboxError> {
    let rules = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS.unsigned_abs()),
        arch()?,
    )
    .map_err(seccomp_err)?;
    filter.try_into().map_err(seccomp_err)
}

/// Loads both filters into the calling thread (which must have
/// `no_new_privs` set or `CAP_SYS_ADMIN`); they stay for everything it
/// executes.
pub fn restrict(network: bool) -> Result<(), SandboxError> {
    let refusal = refusal_filter(network)?;
    let clone3 = clone3_filter()?;
    seccompiler::apply_filter(&clone3).map_err(seccomp_err)?;
    seccompiler::apply_filter(&refusal).map_err(seccomp_err)
}
