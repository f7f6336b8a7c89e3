//! [`SandboxEscapePolicy`]: a Bash call that asks to run outside the OS
//! sandbox (`dangerouslyDisableSandbox: true`, Claude Code's parameter)
//! runs there only through an explicit list (`sandbox.excludedCommands`)
//! or a person's approval, in every mode.

use super::call::ToolCall;
use super::error::RuleError;
use super::facts::CallFacts;
use super::matching::{AllowCheck, allowed_by};
use super::policy::{Policy, PolicyVerdict};
use super::rule::{PermissionRule, RuleOrigin};

/// The Bash input field that asks to run outside the sandbox.
pub const DISABLE_SANDBOX_FIELD: &str = "dangerouslyDisableSandbox";

const NAME: &str = "sandbox-escape";

/// Guards the way out of the sandbox. Only installed when the session's
/// commands are sandboxed.
#[derive(Debug, Clone)]
pub struct SandboxEscapePolicy {
    /// `Bash(…)` allow rules built from `sandbox.excludedCommands`.
    excluded: Vec<PermissionRule>,
    /// `sandbox.allowUnsandboxedCommands` (default true): false refuses
    /// every request to leave the sandbox.
    allow_unsandboxed: bool,
}

impl SandboxEscapePolicy {
    /// The policy for `excluded` command patterns (in `Bash(…)` specifier
    /// syntax: `docker:*`, `npm publish`, `git push *`) and the
    /// `allowUnsandboxedCommands` switch.
    pub fn new<S: AsRef<str>>(
        excluded: &[S],
        allow_unsandboxed: bool,
        origin: &RuleOrigin,
    ) -> Result<Self, RuleError> {
        let excluded = excluded
            .iter()
            .map(|pattern| {
                PermissionRule::parse_with(&format!("Bash({})", pattern.as_ref()), origin)
            })
            .collect::<Result<_, _>>()?;
        Ok(SandboxEscapePolicy {
            excluded,
            allow_unsandboxed,
        })
    }
}

/// True when the call's input asks to run outside the sandbox.
pub fn wants_unsandboxed(call: &ToolCall) -> bool {
    call.tool_name == "Bash"
        && call
            .input
            .get(DISABLE_SANDBOX_FIELD)
            .and_then(serde_json::Value::as_bool)
            == Some(true)
}

impl Policy for SandboxEscapePolicy {
    fn name(&self) -> &str {
        NAME
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        self.check_with_facts(call, &CallFacts::of(call, std::env::home_dir().as_deref()))
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        if !wants_unsandboxed(call) {
            return PolicyVerdict::Abstain;
        }
        if !self.allow_unsandboxed {
            return PolicyVerdict::Deny {
                reason: "this command asks to run outside the OS sandbox \
                         (dangerouslyDisableSandbox), and sandbox.allowUnsandboxedCommands is \
                         false: run it sandboxed (without that field)"
                    .into(),
            };
        }
        if matches!(
            allowed_by(&self.excluded, call, facts),
            AllowCheck::Allowed(_)
        ) {
            // Listed in sandbox.excludedCommands: out of the sandbox, and
            // through the rules and the mode like any command.
            return PolicyVerdict::Abstain;
        }
        PolicyVerdict::Ask {
            reason: "this command asks to run outside the OS sandbox \
                     (dangerouslyDisableSandbox): a person must approve it, in every mode, or \
                     sandbox.excludedCommands must list it"
                .into(),
        }
    }
}
