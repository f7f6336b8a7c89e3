//! Contracts: markdown task files run as governed agent sessions.
//!
//! A contract is a markdown file (`# Contract: <title>`, `## Status`,
//! `## Task`, `## Constraints`, `## Result`). [`run_all`] runs the pending
//! contracts of a directory, each as a session whose constraints are
//! enforced (files → a write scope, tools → the tool list, turns →
//! `max_turns`, `$` → `max_budget_usd`, time → a wall-clock limit), and
//! writes Status and Result back into the file atomically. See
//! `docs/contracts.md`.
//!
//! ```no_run
//! # async fn run() -> Result<(), tascer::contracts::ContractError> {
//! use tascer::contracts::{RunOptions, run_all};
//! let summary = run_all(&RunOptions::new("contracts")).await?;
//! println!("{}", summary.to_markdown());
//! # Ok(()) }
//! ```

mod archive;
mod constraints;
mod error;
pub(crate) mod lease;
mod options;
mod parse;
mod progress;
mod runner;
mod session;
mod tool;
mod worktree;
mod writeback;

pub use archive::SessionArchiver;
pub use constraints::Constraints;
pub use error::ContractError;
pub use lease::MAX_ATTEMPTS;
pub use options::{
    CONTRACT_SYSTEM_PROMPT, DEFAULT_MAX_TURNS, GIT_WRITE_DENY_RULES, contract_options,
    contract_prompt,
};
pub use parse::{Contract, Status, parse, parse_str};
pub use progress::{Progress, ProgressFn};
pub use runner::{
    ContractReport, RunOptions, RunStatus, RunSummary, contract_files, result_markdown, run_all,
    run_in_checkout,
};
pub use session::SessionOutcome;
pub use tascer_store::{HEARTBEAT_EVERY, STALE_AFTER, host_name};
pub use tool::EXECUTE_CONTRACTS_TOOL_NAME;
pub(crate) use tool::ExecuteContractsTool;
pub use worktree::{
    BRANCH_PREFIX, MergeOutcome, Worktree, add as add_worktree, branch_name, commit_message,
    completed_branches, git, merge_branches, repo_root,
};
pub use writeback::{move_into, render, write_atomic, write_back};
