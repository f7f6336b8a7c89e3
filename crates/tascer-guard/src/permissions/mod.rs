//! Permission modes, rules, settings-driven rule lists and policies.
//!
//! [`PermissionEngine::decide`] is the single entry point: it takes a
//! [`ToolCall`] and returns a [`PermissionDecision`] saying allow, deny or
//! ask, who decided and why. The order follows Claude Code (deny rules →
//! ask rules → mode → allow rules → `can_use_tool`), with [`Policy`]
//! verdicts slotted in next to the rules of the same strength; see
//! `docs/permissions.md`.

mod cache;
mod call;
mod callback;
mod command_pattern;
mod danger;
mod decision;
mod engine;
mod error;
mod evaluate;
mod facts;
mod file_policy;
mod hardlinks;
mod headless;
mod matching;
mod mcp_policy;
mod mode;
mod path_pattern;
pub mod paths;
mod policy;
mod read_only;
mod rule;
mod sandbox_escape;
mod search_access;
mod sensitive;
pub mod shell;
mod shell_policy;
mod suggest;
mod update;
mod wildcard;
mod workaround;
mod write_scope;

pub use call::ToolCall;
pub use callback::{AskAnswer, Asker, CanUseTool, CanUseToolRequest, CanUseToolResult};
pub use command_pattern::{CommandMatch, CommandPattern};
pub use decision::{DecisionSource, HookPermission, PermissionDecision};
pub use engine::{PermissionEngine, PermissionEngineBuilder};
pub use error::{PermissionError, RuleError};
pub use facts::{CallFacts, url_host};
pub use file_policy::{FileAccessConfig, FileAccessPolicy};
pub use headless::{NO_ONE_TO_ANSWER, is_unanswered_ask};
pub use mcp_policy::{McpPolicy, split_mcp_name};
pub use mode::{EDIT_TOOLS, PermissionMode, READ_TOOLS, ToolClass, UnknownPermissionMode};
pub use path_pattern::{PathAnchor, PathPattern};
pub use policy::{Policy, PolicyVerdict};
pub use rule::{PermissionRule, PermissionRules, RuleOrigin, RuleSpecifier};
pub use sandbox_escape::{DISABLE_SANDBOX_FIELD, SandboxEscapePolicy, wants_unsandboxed};
pub use search_access::SearchAccess;
pub use sensitive::{DEFAULT_SENSITIVE, SensitivePatterns};
pub use shell_policy::{CommandRule, ShellCommandPolicy};
/// Allow, ask or deny: the one type for it, from `tascer-core`.
pub use tascer_core::Behavior;
pub use update::{
    PermissionRuleValue, PermissionUpdate, UpdateDestination, allow_suggestions, parse_updates,
};
pub use wildcard::wildcard_match;
pub use workaround::{DenialHistory, Escalation, WorkaroundConfig};
pub use write_scope::WriteScopePolicy;
