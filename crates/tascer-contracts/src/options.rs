//! Constraints → session [`Options`]: what a contract may do, enforced.

use std::path::Path;
use std::sync::Arc;

use tascer_guard::permissions::{PermissionMode, WriteScopePolicy};

use crate::error::ContractError;
use crate::parse::Contract;
use tascer::{Options, SystemPrompt};

/// The name of the tool that runs contracts for a manager session (see
/// [`with_execute_contracts`](crate::with_execute_contracts)).
pub const EXECUTE_CONTRACTS_TOOL_NAME: &str = "ExecuteContracts";

/// The turn budget of a contract that names none.
pub const DEFAULT_MAX_TURNS: u32 = 30;

/// What the executor tells a contract's agent (after Tascer's default
/// system prompt) when it runs in the caller's working tree (`tascer
/// contracts run`, `ExecuteContracts`): nothing is committed for it.
pub const CONTRACT_SYSTEM_PROMPT: &str = "You are executing a contract: a self-contained task, \
given to you in full as the user's message. Work in the current directory. Only modify files; \
do not use git (git commands that write are refused): nothing is committed for you, your \
changes stay in the working tree for whoever runs the contracts to review. Stay within the \
contract's constraints; writes outside the files it allows are refused. When you are done, \
reply with a short summary of what you changed and anything left undone.";

/// What the executor tells a contract's agent when it runs in a checkout
/// of its own whose branch Tascer commits (`--parallel`, workers).
pub const CONTRACT_SYSTEM_PROMPT_COMMITTED: &str = "You are executing a contract: a \
self-contained task, given to you in full as the user's message. You work in a checkout of \
your own, on the contract's branch. Only modify files; do not use git (git commands that \
write are refused): when you finish, Tascer commits your changes on the contract's branch. \
Stay within the contract's constraints; writes outside the files it allows are refused. When \
you are done, reply with a short summary of what you changed and anything left undone.";

/// The tools a contract's agent gets when neither the contract's
/// Constraints nor the base options name any: the unattended coding set
/// (no questions to a user, no plan mode).
pub const DEFAULT_CONTRACTOR_TOOLS: [&str; 8] = [
    "Read",
    "Edit",
    "Write",
    "Bash",
    "Glob",
    "Grep",
    "WebSearch",
    "WebFetch",
];

/// Deny rules that refuse git commands which write (the repository, its
/// refs, its index or the working tree).
pub const GIT_WRITE_DENY_RULES: &[&str] = &[
    "Bash(git add:*)",
    "Bash(git am:*)",
    "Bash(git apply:*)",
    "Bash(git branch:*)",
    "Bash(git checkout:*)",
    "Bash(git cherry-pick:*)",
    "Bash(git clean:*)",
    "Bash(git commit:*)",
    "Bash(git config:*)",
    "Bash(git fetch:*)",
    "Bash(git gc:*)",
    "Bash(git init:*)",
    "Bash(git merge:*)",
    "Bash(git mv:*)",
    "Bash(git notes:*)",
    "Bash(git pull:*)",
    "Bash(git push:*)",
    "Bash(git rebase:*)",
    "Bash(git remote:*)",
    "Bash(git reset:*)",
    "Bash(git restore:*)",
    "Bash(git revert:*)",
    "Bash(git rm:*)",
    "Bash(git stash:*)",
    "Bash(git submodule:*)",
    "Bash(git switch:*)",
    "Bash(git tag:*)",
    "Bash(git update-ref:*)",
    "Bash(git worktree:*)",
];

/// The options of `contract`'s session: `base` (provider, home, key,
/// settings…) with the contract's constraints applied, run in `cwd`.
///
/// * files → a [`WriteScopePolicy`] (writes elsewhere are refused); with no
///   file constraint, writes are still limited to `cwd`;
/// * `protected` directories (the contract directories) refuse every write;
/// * tools → `tools` (default: `base`'s, else [`DEFAULT_CONTRACTOR_TOOLS`]); turns → `max_turns` (default [`DEFAULT_MAX_TURNS`]);
///   `$` → `max_budget_usd`; model → `model`;
/// * the mode is `bypassPermissions` unless `base` sets one (deny rules,
///   policies and gates still apply), and git commands that write are
///   denied by rule;
/// * the `ExecuteContracts` tool, when `base` has it, is removed.
pub fn contract_options(
    contract: &Contract,
    base: &Options,
    cwd: &Path,
    protected: &[&Path],
    system_prompt: &str,
) -> Result<Options, ContractError> {
    let c = &contract.constraints;
    let mut o = base.clone();
    o.cwd = Some(cwd.to_path_buf());
    o.system_prompt = with_text(&base.system_prompt, system_prompt);
    o.max_turns = Some(c.max_turns.or(base.max_turns).unwrap_or(DEFAULT_MAX_TURNS));
    o.max_budget_usd = c.max_budget_usd.or(base.max_budget_usd);
    if let Some(model) = &c.model {
        o.model = Some(model.clone());
    }
    match &c.tools {
        Some(tools) => o.tools = Some(tools.clone()),
        None if o.tools.is_none() => {
            o.tools = Some(DEFAULT_CONTRACTOR_TOOLS.map(String::from).to_vec());
        }
        None => {}
    }
    if o.permission_mode.is_none() {
        o.permission_mode = Some(PermissionMode::BypassPermissions);
    }
    o.disallowed_tools
        .extend(GIT_WRITE_DENY_RULES.iter().map(|r| r.to_string()));
    let patterns: Vec<String> = if c.files.is_empty() {
        vec!["**".to_string()]
    } else {
        c.files.clone()
    };
    let mut scope =
        WriteScopePolicy::new(&patterns).map_err(|message| ContractError::Malformed {
            path: contract.path.clone(),
            line: 1,
            message,
        })?;
    for dir in protected {
        scope = scope.protected(dir.to_path_buf());
    }
    o.policies.push(Arc::new(scope));
    without_execute_contracts(&mut o);
    o.session_id = None;
    o.resume = None;
    o.continue_conversation = false;
    Ok(o)
}

/// `prompt` with `text` added after it (after Tascer's default prompt
/// when `prompt` is the default).
pub(crate) fn with_text(prompt: &SystemPrompt, text: &str) -> SystemPrompt {
    match prompt {
        SystemPrompt::Replace(p) => SystemPrompt::Replace(format!("{p}\n\n{text}")),
        SystemPrompt::Append(p) => SystemPrompt::Append(format!("{p}\n\n{text}")),
        SystemPrompt::Default => SystemPrompt::Append(text.to_string()),
    }
}

/// Removes the `ExecuteContracts` tool from `options`: contractors never
/// get it.
pub(crate) fn without_execute_contracts(options: &mut Options) {
    options
        .custom_tools
        .retain(|t| t.name() != EXECUTE_CONTRACTS_TOOL_NAME);
}

/// The first prompt of a contract's session: the contract file's full
/// text (every section, notes for the contractor included), as read.
pub fn contract_prompt(contract: &Contract) -> String {
    contract.text.clone()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::parse::parse_str;

    #[test]
    fn constraints_become_options() {
        let c = parse_str(
            "# Contract: T\n## Status\npending\n## Task\nDo.\n## Constraints\n- Files: a.txt\n- Tools: Write\n- Budget: 4 turns, $0.10\n- Model: m-1\n- Be brief\n",
            Path::new("t.md"),
        )
        .unwrap();
        let o = contract_options(&c, &Options::new(), Path::new("/w"), &[], "P").unwrap();
        assert_eq!(o.max_turns, Some(4));
        assert_eq!(o.max_budget_usd, Some(0.10));
        assert_eq!(o.model.as_deref(), Some("m-1"));
        assert_eq!(o.tools, Some(vec!["Write".to_string()]));
        assert_eq!(o.permission_mode, Some(PermissionMode::BypassPermissions));
        assert!(o.disallowed_tools.iter().any(|r| r == "Bash(git commit:*)"));
        assert_eq!(o.policies.len(), 1);
        assert_eq!(o.system_prompt, SystemPrompt::Append("P".into()));
        assert_eq!(contract_prompt(&c), c.text);
        let o = contract_options(&c, &Options::new(), Path::new("/w"), &[], "P").unwrap();
        assert_eq!(o.tools, Some(vec!["Write".to_string()]));
    }

    #[test]
    fn the_default_turn_budget_is_thirty() {
        let c = parse_str(
            "# Contract: T\n## Status\npending\n## Task\nDo.\n",
            Path::new("t.md"),
        )
        .unwrap();
        let o = contract_options(&c, &Options::new(), Path::new("/w"), &[], "P").unwrap();
        assert_eq!(o.max_turns, Some(30));
        assert_eq!(
            o.tools,
            Some(DEFAULT_CONTRACTOR_TOOLS.map(String::from).to_vec())
        );
    }

    #[test]
    fn the_prompt_is_the_whole_contract() {
        let text = "# Contract: T\n\n## Status\npending\n\n## Task\nDo.\n\n## Notes for the contractor\nUse tabs.\n";
        let c = parse_str(text, Path::new("t.md")).unwrap();
        assert_eq!(contract_prompt(&c), text);
    }
}
