//! `tascer install` and `tascer uninstall`.

use clap::Args;

/// Arguments of `tascer install` / `tascer uninstall`.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// The tool: `claude-code`.
    #[arg(value_parser = ["claude-code"])]
    pub tool: String,
    /// This project's `.claude/settings.json` and `.mcp.json` (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's `~/.claude/settings.json` and `~/.claude.json`.
    #[arg(long)]
    pub user: bool,
}
