//! `tascer audit`.

use clap::{Args, Subcommand, ValueEnum};

/// `tascer audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Who allowed or denied what, when: the permission decisions of every
    /// session (or those the filters select), oldest first.
    Query(AuditQueryArgs),
}

/// A permission decision's outcome, for `--decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecisionArg {
    /// The call was allowed.
    Allow,
    /// The call was refused.
    Deny,
    /// The call was left to someone to answer (a host that asks its user).
    Ask,
}

impl DecisionArg {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionArg::Allow => "allow",
            DecisionArg::Deny => "deny",
            DecisionArg::Ask => "ask",
        }
    }
}

/// Arguments of `tascer audit query`.
#[derive(Debug, Clone, Args)]
pub struct AuditQueryArgs {
    /// Only this session's decisions.
    #[arg(long)]
    pub session: Option<String>,
    /// Only calls of this tool (`Bash`, `mcp__server__tool`, …).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only this decision.
    #[arg(long, value_enum)]
    pub decision: Option<DecisionArg>,
    /// Only decisions made by this kind of decider (rule, policy, mode, hook,
    /// callback, reviewer, user, cache, workaround, default) or this one (a rule as
    /// written, a policy's or hook's name).
    #[arg(long)]
    pub decider: Option<String>,
    /// Only decisions made since this time: RFC 3339, a date (UTC), or a span back
    /// from now (30m, 12h, 7d).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// At most this many (the most recent).
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
    /// Print the decisions as a JSON array.
    #[arg(long)]
    pub json: bool,
}
