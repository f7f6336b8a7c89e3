//! `tascer sandbox`: runs a command under the OS sandbox (the library
//! `tascer-sandbox` does the work; this reads the arguments and reports).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;
use tascer_sandbox::SandboxPolicy;

use crate::args::{SandboxArgs, SandboxCli};

use tascer_sandbox::SETUP_FAILED;

/// True when this process is `tascer sandbox …`.
pub fn is_invocation() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == "sandbox")
}

/// Parses `tascer sandbox`'s arguments, enters the sandbox and becomes the
/// command; returns only when that fails.
pub fn main() -> ExitCode {
    let cli = SandboxCli::parse_from(std::env::args_os().skip(1));
    let args = cli.args;
    let policy = match policy_of(&args) {
        Ok(policy) => policy,
        Err(err) => {
            eprintln!("tascer sandbox: error: {err:#}");
            return ExitCode::from(SETUP_FAILED);
        }
    };
    if args.print_policy {
        println!("{}", policy.to_json());
        return ExitCode::SUCCESS;
    }
    if args.command.is_empty() {
        eprintln!(
            "tascer sandbox: error: no command (usage: tascer sandbox [OPTIONS] -- CMD ARGS…)"
        );
        return ExitCode::from(2);
    }
    run(&policy, &args)
}

#[cfg(target_os = "linux")]
fn run(policy: &SandboxPolicy, args: &SandboxArgs) -> ExitCode {
    let err = tascer_sandbox::exec_sandboxed(policy, &args.command);
    eprintln!("tascer sandbox: error: {err}");
    ExitCode::from(tascer_sandbox::exit_status(&err))
}

#[cfg(not(target_os = "linux"))]
fn run(_policy: &SandboxPolicy, _args: &SandboxArgs) -> ExitCode {
    eprintln!(
        "tascer sandbox: error: no OS sandbox on {} yet (see docs/sandbox.md)",
        std::env::consts::OS
    );
    ExitCode::from(SETUP_FAILED)
}

/// The policy the arguments describe: `--policy` whole, or the default
/// one for the workspace; then the flags on top.
fn policy_of(args: &SandboxArgs) -> anyhow::Result<SandboxPolicy> {
    let mut policy = match &args.policy {
        Some(text) if text.trim_start().starts_with('{') => SandboxPolicy::from_json(text)?,
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the policy file {file}"))?;
            SandboxPolicy::from_json(&text).with_context(|| format!("in {file}"))?
        }
        None => {
            let workspace = match &args.workspace {
                Some(dir) => dir.clone(),
                None => std::env::current_dir().context("no current directory")?,
            };
            let home = std::env::home_dir();
            SandboxPolicy::for_workspace(&workspace, home.as_deref())
        }
    };
    for dir in &args.add_dir {
        policy = policy.allow_write(&canonical(dir));
    }
    for path in &args.deny_read {
        policy = policy.deny_read(path);
    }
    if args.network {
        policy = policy.network(true);
    }
    if args.fail_if_unavailable {
        policy = policy.fail_if_unavailable(true);
    }
    Ok(policy)
}

/// `dir` with symbolic links resolved when it exists (Landlock rules land
/// on the real directory either way).
fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}
