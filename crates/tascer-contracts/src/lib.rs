//! Contracts: markdown task files run as governed agent sessions.
//!
//! A contract is a markdown file (`# Contract: <title>`, `## Status`,
//! `## Task`, `## Constraints`, `## Result`). [`run_all`] runs the pending
//! contracts of a directory, each as a session of the `tascer` loop whose
//! constraints are enforced (files → a write scope, tools → the tool list,
//! turns → `max_turns`, `$` → `max_budget_usd`, time → a wall-clock
//! limit), and writes Status and Result back into the file atomically.
//! With `parallel` above 1 each contract runs in its own git worktree on
//! its own branch; [`merge_branches`] brings them back. A manager session
//! gets the `ExecuteContracts` tool through [`with_execute_contracts`].
//! See `docs/contracts.md`.
//!
//! This crate is built on the loop (`tascer`); the loop knows nothing of
//! contracts.
//!
//! ```no_run
//! # async fn run() -> Result<(), tascer_contracts::ContractError> {
//! use tascer_contracts::{RunOptions, run_all};
//! let summary = run_all(&RunOptions::new("contracts")).await?;
//! println!("{}", summary.to_markdown());
//! # Ok(()) }
//! ```

mod archive;
mod constraints;
mod error;
mod init;
mod lease;
mod manager;
mod options;
mod parse;
mod progress;
mod queue;
mod report;
mod roles;
mod runner;
mod session;
mod status;
mod tool;
mod worktree;
mod writeback;

pub use archive::SessionArchiver;
pub use constraints::Constraints;
pub use error::ContractError;
pub use init::{CONTRACT_TEMPLATE, Created, TEMPLATE_NAME, init};
pub use lease::MAX_ATTEMPTS;
pub use manager::{MANAGER_SYSTEM_PROMPT, ManagerWatch};
pub use options::{
    CONTRACT_SYSTEM_PROMPT, CONTRACT_SYSTEM_PROMPT_COMMITTED, DEFAULT_CONTRACTOR_TOOLS,
    DEFAULT_MAX_TURNS, EXECUTE_CONTRACTS_TOOL_NAME, GIT_WRITE_DENY_RULES, contract_options,
    contract_prompt,
};
pub use parse::{Contract, Status, contract_files, parse, parse_str};
pub use progress::{Progress, ProgressFn};
pub use queue::{DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE};
pub use report::{ContractReport, RunStatus, RunSummary, SessionOutcome, result_markdown};
pub use roles::{
    CONTRACTOR_MODEL_VAR, CONTRACTOR_PREFIX, CONTRACTOR_PROVIDER_VAR, Role, RoleChoice,
    RoleProvider, choices_from_settings, choose_provider, contractor_base,
    contractor_choice_from_env, contractor_env,
};
pub use runner::{RunOptions, run_all, run_in_checkout};
pub use status::{ContractStatus, read_statuses};
pub use tascer_store::{HEARTBEAT_EVERY, STALE_AFTER, host_name};
pub use tool::with_execute_contracts;
pub use worktree::{
    BRANCH_PREFIX, MergeOutcome, Worktree, add as add_worktree, branch_name, commit_message,
    completed_branches, git, merge_branches, repo_root,
};
pub use writeback::{move_into, render, write_atomic, write_back};
