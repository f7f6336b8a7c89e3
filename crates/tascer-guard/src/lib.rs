//! Governance of tool calls: permission modes, allow/ask/deny rules and
//! policies ([`permissions`]), Claude Code–compatible hooks ([`hooks`]),
//! validation gates ([`gates`]), the safety chain (path classes and
//! auto-approve in [`safety`], LLM reviewers in [`reviewers`]), and
//! [`admission`], the one place that puts them together in Claude Code's
//! order and decides whether a call runs.
//!
//! Every decision is data — who decided, what, why, how long it took — so
//! the session store and the ledger can record it.

pub mod admission;
pub mod gates;
pub mod hooks;
pub mod host_answer;
pub mod permissions;
pub mod reviewers;
pub mod safety;
pub mod settings;
