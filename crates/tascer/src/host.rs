//! Tascer's decision for a host that runs the tools itself: Claude Code
//! (through `tascer hook`) or an MCP client (through `tascer mcp serve`).
//!
//! Both build the same [`Admission`] from Tascer's settings for the call's
//! directory ([`HostGovernance::load`]) and read its answer the same way
//! ([`HostAnswer`]), so a call gets the same decision, with the same
//! reason, whichever way it reaches Tascer. Tascer adds refusals to the
//! host's own permission system and never widens it: what only Tascer's
//! permission mode or default would ask about is left to the host.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tascer_core::ToolCall;
use tascer_guard::admission::{Admission, Admitted, CallRequest, RefusedBy};
use tascer_guard::hooks::HookCommon;
use tascer_guard::permissions::{Behavior, DecisionSource, PermissionEngine, PermissionMode};
use tascer_guard::settings::SettingsSource;

use crate::error::Error;
use crate::options::Options;
use crate::setup;

/// Which step of a call the host asks about; each builds only what it
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStep {
    /// Before the call runs: hooks, the permission decision (rules, mode,
    /// policies, workaround detection) and pre-gates.
    Admit,
    /// After the call ran: post-gates and hooks. No permission engine is
    /// built (no rules, no policies): review does not decide permissions.
    Review,
}

/// The admission of a host's calls in one directory, from Tascer's
/// settings there: `$TASCER_HOME/settings.json` (user),
/// `.tascer/settings.json` (project) and `.tascer/settings.local.json`
/// (local), with asks deferred to the host.
pub struct HostGovernance {
    admission: Admission,
}

impl HostGovernance {
    /// Reads Tascer's settings for `cwd` (user settings from `home`) and
    /// builds what `step` needs, in `mode` (`None`: the settings' default
    /// mode).
    pub fn load(
        cwd: &Path,
        home: &Path,
        mode: Option<PermissionMode>,
        step: HostStep,
    ) -> Result<Self, Error> {
        let mut options = Options::new();
        options.permission_mode = mode;
        options.setting_sources = vec![
            SettingsSource::User,
            SettingsSource::Project,
            SettingsSource::Local,
        ];
        let settings = setup::load_settings(&options, cwd, home)?;
        let admission = match step {
            HostStep::Admit => setup::build(&options, &settings, cwd, Vec::new())?.admission,
            HostStep::Review => {
                let permissions = Arc::new(PermissionEngine::builder().build()?);
                setup::admission_over(&options, &settings, cwd, permissions)?
            }
        };
        Ok(HostGovernance {
            admission: admission.defer_asks(true),
        })
    }

    /// The admission (for review, redaction and the recorded input).
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// Admits `call` as Tascer would in a session of its own, and says
    /// what that means for the host.
    pub async fn admit(&self, call: &ToolCall, hook_common: HookCommon) -> (Admitted, HostAnswer) {
        let admitted = self
            .admission
            .admit(CallRequest {
                call,
                hook_common,
                agent_id: None,
            })
            .await;
        let answer = HostAnswer::of(&admitted, &call.input);
        (admitted, answer)
    }
}

/// What Tascer's admission means for a host that has its own permission
/// system.
#[derive(Debug, Clone, PartialEq)]
pub enum HostAnswer {
    /// Tascer lets the call run; `updated_input` when a Tascer hook or
    /// callback rewrote the input. Whether it runs is still the host's
    /// decision.
    Run {
        /// The input to run with instead of the call's own.
        updated_input: Option<Value>,
    },
    /// Only Tascer's permission mode or default would ask: the host's own
    /// rules and mode decide.
    HostDecides,
    /// A Tascer rule, policy or workaround escalation asks: the host asks
    /// its user (a host that cannot ask must not run the call).
    Ask {
        /// Why, as the host shows it ([`host_reason`]).
        reason: String,
    },
    /// Refused: by a rule, a policy, a hook or a gate.
    Deny {
        /// Why, as the host shows it ([`host_reason`]).
        reason: String,
    },
}

impl HostAnswer {
    /// The answer for `admitted`, a call whose input was `input`.
    pub fn of(admitted: &Admitted, input: &Value) -> Self {
        let refusal = match &admitted.verdict {
            Ok(run_input) => {
                return HostAnswer::Run {
                    updated_input: (run_input != input).then(|| run_input.clone()),
                };
            }
            Err(refusal) => refusal,
        };
        let asked = refusal.by == RefusedBy::Permission
            && admitted
                .decision
                .as_ref()
                .is_some_and(|d| d.behavior == Behavior::Ask);
        if !asked {
            return HostAnswer::Deny {
                reason: host_reason(&refusal.message),
            };
        }
        let explicit = admitted.decision.as_ref().is_some_and(|d| {
            matches!(
                d.decided_by,
                DecisionSource::Rule { .. }
                    | DecisionSource::Policy { .. }
                    | DecisionSource::Workaround
            )
        });
        if explicit {
            HostAnswer::Ask {
                reason: host_reason(&refusal.message),
            }
        } else {
            HostAnswer::HostDecides
        }
    }
}

/// A decision's message as a host shows it: `Tascer: <message>`, so the
/// model and the user see who refused or asks.
pub fn host_reason(message: &str) -> String {
    format!("Tascer: {message}")
}
