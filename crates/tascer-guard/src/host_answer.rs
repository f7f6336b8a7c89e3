//! What admission's answer means for a host that runs the tools itself and
//! has its own permission system: Claude Code (through `tascer hook`) or an
//! MCP client (through `tascer mcp serve`). The one place where a host
//! translates [`Admitted`] into its own terms, so a call gets the same
//! decision, with the same reason, whichever way it reaches Tascer.
//!
//! Tascer adds refusals to the host's own permission system and widens it
//! only where its safety chain answers for the user (low-risk auto-approve,
//! an LLM reviewer): what only Tascer's permission mode or default would
//! ask about is left to the host.

use serde_json::Value;
use tascer_core::Behavior;

use crate::admission::{Admitted, RefusedBy};
use crate::permissions::DecisionSource;
use crate::safety::AutoApprovePolicy;

/// What Tascer's admission means for a host that has its own permission
/// system. Its own type, not a [`Behavior`]: besides allow, ask and deny a
/// host needs to know whether Tascer's safety chain approved in place of
/// the user, and when only Tascer's mode or default would ask (the host's
/// own rules then decide).
#[derive(Debug, Clone, PartialEq)]
pub enum HostAnswer {
    /// Tascer lets the call run; `updated_input` when a Tascer hook or
    /// callback rewrote the input. Whether it runs is still the host's
    /// decision.
    Run {
        /// The input to run with instead of the call's own.
        updated_input: Option<Value>,
    },
    /// Tascer's safety chain (low-risk auto-approve or an LLM reviewer)
    /// approved the call in place of the user: the host need not ask.
    Approve {
        /// Why, as the host shows it ([`host_reason`]).
        reason: String,
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
            Ok(run_input) if run_input != input => {
                return HostAnswer::Run {
                    updated_input: Some(run_input.clone()),
                };
            }
            Ok(_) => {
                return match admitted
                    .decision
                    .as_ref()
                    .filter(|d| approved_by_safety_chain(&d.decided_by))
                {
                    Some(d) => HostAnswer::Approve {
                        reason: host_reason(&d.reason),
                    },
                    None => HostAnswer::Run {
                        updated_input: None,
                    },
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

/// True when an allow came from the safety chain (an LLM reviewer, or
/// low-risk auto-approve), which answers for the user.
fn approved_by_safety_chain(source: &DecisionSource) -> bool {
    match source {
        DecisionSource::Reviewer { .. } => true,
        DecisionSource::Policy { name } => name == AutoApprovePolicy::NAME,
        _ => false,
    }
}

/// A decision's message as a host shows it: `Tascer: <message>`, so the
/// model and the user see who refused or asks.
pub fn host_reason(message: &str) -> String {
    format!("Tascer: {message}")
}
