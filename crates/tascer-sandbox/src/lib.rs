//! The OS sandbox under every process Tascer starts on the model's behalf.
//!
//! A [`SandboxPolicy`] says what a command may do: read anywhere but the
//! secret locations, write only in the workspace, the extra directories
//! and a private temporary directory, keep protected paths inside the
//! workspace (`.git/hooks`, `.git/config`, `.tascer/`, `.claude/`)
//! read-only, and reach the network only when allowed.
//!
//! The policy is applied by a helper process right before it executes the
//! command ([`exec_sandboxed`]), never between `fork` and `exec` of a
//! multi-threaded parent: the parent starts `tascer-sandbox-exec --policy-json
//! … -- CMD ARGS…` (or `tascer sandbox …`; built by [`Launcher::args`]), and
//! the helper ([`helper_main`]), still
//! single-threaded, enters the sandbox and replaces itself with `CMD`. On
//! Linux the helper uses:
//!
//! - a user and mount namespace in which the protected paths are bind-mounted
//!   read-only ([`namespace`]),
//! - Landlock for the file system ([`landlock_fs`]): read rights on every
//!   path except the denied ones (enumerated, since Landlock only allows),
//!   write rights under the writable roots,
//! - seccomp for system calls ([`seccomp`]): no `ptrace`, `mount`,
//!   `unshare`, `setns`, `chroot`, `pivot_root`, `bpf`, `kexec_*`, module
//!   loading, new namespaces through `clone`; no `socket` other than
//!   `AF_UNIX` while the network is off,
//! - `PR_SET_NO_NEW_PRIVS`, so setuid binaries gain nothing.
//!
//! Other platforms get no sandbox yet: [`support`] says so, and callers
//! warn (or refuse, with `failIfUnavailable`).

mod command;
mod env_files;
mod error;
mod helper;
mod launcher;
mod policy;
mod refusal;
mod support;

#[cfg(target_os = "linux")]
mod exec;
#[cfg(target_os = "linux")]
pub mod landlock_fs;
#[cfg(target_os = "linux")]
pub mod namespace;
pub mod read_grants;
#[cfg(target_os = "linux")]
pub mod seccomp;

pub use command::CommandSandbox;
pub use env_files::{env_files_outside, is_env_file};
pub use error::SandboxError;
#[cfg(target_os = "linux")]
pub use exec::exec_sandboxed;
pub use helper::{SETUP_FAILED, exit_status, helper_main};
pub use launcher::{EXEC_HELPER_NAME, HELPER_ENV, Launcher, parse_helper_args};
pub use policy::{SandboxPolicy, default_secret_paths};
pub use refusal::explain_refusal;
pub use support::{Support, support};
