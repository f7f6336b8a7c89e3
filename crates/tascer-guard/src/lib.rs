//! Governance of tool calls: permission modes, allow/ask/deny rules and
//! policies ([`permissions`]), and Claude Code–compatible hooks ([`hooks`]).
//!
//! Every decision is data — who decided, what, why, how long it took — so
//! the session store and the ledger can record it.

pub mod gates;
pub mod hooks;
pub mod permissions;
pub mod settings;
