//! `tascer install claude-code` / `tascer uninstall claude-code`: what is
//! written and removed is [`tascer_claude::install`]'s; here, where it
//! goes (the scope, the home, this executable) and what is printed.

use std::process::ExitCode;

use anyhow::Context;
use tascer_claude::install::{SERVER, Target};

/// `tascer install claude-code [--project|--user]`.
pub fn install(user: bool) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = tascer::tascer_home();
    let target = Target::new(user, &cwd, &home)?;
    let exe = std::env::current_exe().context("cannot find the tascer executable")?;
    let installed = tascer_claude::install::install(&target, &home, &exe)?;
    let commands = tascer_claude::commands::install_commands(&target.commands)?;
    let what = |changed: bool| if changed { "updated" } else { "already set up" };
    println!(
        "Claude Code ({} scope): hooks in {} {}; MCP server \"{SERVER}\" in {} {}.",
        target.scope,
        target.settings.display(),
        what(installed.settings_changed),
        target.mcp.display(),
        what(installed.mcp_changed)
    );
    println!(
        "Safe profile (auto permission mode; reviewers tool-approve, tool-appeal, \
         plan-validate, style-drift, claude-md-validate) in {} {}.",
        target.profile.display(),
        what(installed.profile_changed)
    );
    for (file, outcome) in commands {
        println!("Slash command {}: {outcome}.", file.display());
    }
    println!(
        "Undo with: tascer uninstall claude-code{}",
        if user { " --user" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `tascer uninstall claude-code [--project|--user]`.
pub fn uninstall(user: bool) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = tascer::tascer_home();
    let target = Target::new(user, &cwd, &home)?;
    for file in [&target.settings, &target.mcp, &target.profile] {
        let outcome = tascer_claude::install::uninstall(&home, file)?;
        println!("{}: {outcome}", file.display());
    }
    for (file, outcome) in tascer_claude::commands::uninstall_commands(&target.commands)? {
        println!("{}: {outcome}", file.display());
    }
    Ok(ExitCode::SUCCESS)
}
