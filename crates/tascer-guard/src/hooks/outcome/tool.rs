//! Outcomes of tool events: `PreToolUse`, `PermissionRequest`,
//! `PostToolUse`, `PostToolUseFailure`.

use serde_json::Value;
use tascer_core::{Behavior, HookEvent};

use super::{DEFAULT_BLOCK, EventOutcome, HookCommonOutcome, push_reason, specific};
use crate::hooks::effect::HookEffect;
use crate::hooks::output::{PermissionRequestDecision, TopDecision};

/// A `PreToolUse` permission decision: a [`Behavior`] with the hooks'
/// reason. Its own type because the reason's weight differs: a deny must
/// carry one (it is the tool error the model sees), an allow's or an ask's
/// is optional and for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Let the call through (deny/ask rules still apply). The reason is
    /// for the user.
    Allow {
        /// Why, if given.
        reason: Option<String>,
    },
    /// Ask the user / permission callback. The reason is for the user.
    Ask {
        /// Why, if given.
        reason: Option<String>,
    },
    /// Refuse the call; the reason goes to the model as the tool error.
    Deny {
        /// Why.
        reason: String,
    },
}

impl PreToolDecision {
    /// The decision for `behavior`; a deny without a reason gets the
    /// default block text.
    fn new(behavior: Behavior, reason: Option<String>) -> Self {
        match behavior {
            Behavior::Allow => PreToolDecision::Allow { reason },
            Behavior::Ask => PreToolDecision::Ask { reason },
            Behavior::Deny => PreToolDecision::Deny {
                reason: reason.unwrap_or_else(|| DEFAULT_BLOCK.to_string()),
            },
        }
    }

    /// Allow, ask or deny.
    pub fn behavior(&self) -> Behavior {
        match self {
            PreToolDecision::Allow { .. } => Behavior::Allow,
            PreToolDecision::Ask { .. } => Behavior::Ask,
            PreToolDecision::Deny { .. } => Behavior::Deny,
        }
    }

    /// The reason, when one was given.
    pub fn reason(&self) -> Option<&str> {
        match self {
            PreToolDecision::Allow { reason } | PreToolDecision::Ask { reason } => {
                reason.as_deref()
            }
            PreToolDecision::Deny { reason } => Some(reason),
        }
    }
}

/// Aggregated outcome of the `PreToolUse` hooks of one tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolUseOutcome {
    /// The strongest decision (deny > ask > allow); `None` = no opinion.
    pub decision: Option<PreToolDecision>,
    /// Replacement tool input (the last one given wins).
    pub updated_input: Option<Value>,
    /// Context for the model, in order.
    pub additional_context: Vec<String>,
    /// Common part (stop, system messages, errors).
    pub common: HookCommonOutcome,
}

impl PreToolUseOutcome {
    /// The deny reason when the call must not run.
    pub fn denied(&self) -> Option<&str> {
        match &self.decision {
            Some(PreToolDecision::Deny { reason }) => Some(reason),
            _ => None,
        }
    }

    fn decide(&mut self, d: PreToolDecision) {
        if self
            .decision
            .as_ref()
            .is_none_or(|cur| d.behavior().is_stricter_than(cur.behavior()))
        {
            self.decision = Some(d);
        }
    }
}

impl EventOutcome for PreToolUseOutcome {
    const EVENT: HookEvent = HookEvent::PreToolUse;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                let spec = specific::<Self>(out);
                let decision = spec
                    .and_then(|s| s.permission_decision)
                    .or(out.decision.map(TopDecision::behavior));
                let reason = spec
                    .and_then(|s| s.permission_decision_reason.clone())
                    .or_else(|| out.reason.clone());
                if let Some(behavior) = decision {
                    self.decide(PreToolDecision::new(behavior, reason));
                }
                if let Some(s) = spec {
                    if let Some(input) = &s.updated_input {
                        self.updated_input = Some(input.clone());
                    }
                    if let Some(c) = &s.additional_context {
                        self.additional_context.push(c.clone());
                    }
                }
            }
            HookEffect::Blocking(reason) | HookEffect::FailedClosed(reason) => {
                let mut r = None;
                push_reason(&mut r, reason);
                self.decide(PreToolDecision::Deny {
                    reason: r.unwrap_or_default(),
                });
            }
            HookEffect::Text(_) | HookEffect::Failed(_) => {}
        }
    }
}

/// Aggregated outcome of the `PermissionRequest` hooks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionRequestOutcome {
    /// Deny beats allow; among allows the last `updatedInput` wins and
    /// `updatedPermissions` are concatenated. `None` = no opinion (go on
    /// to the permission prompt / callback).
    pub decision: Option<PermissionRequestDecision>,
    /// Common part.
    pub common: HookCommonOutcome,
}

impl PermissionRequestOutcome {
    fn deny(&mut self, message: Option<String>, interrupt: Option<bool>) {
        if !matches!(self.decision, Some(PermissionRequestDecision::Deny { .. })) {
            self.decision = Some(PermissionRequestDecision::Deny { message, interrupt });
        }
    }
}

impl EventOutcome for PermissionRequestOutcome {
    const EVENT: HookEvent = HookEvent::PermissionRequest;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => match specific::<Self>(out).and_then(|s| s.decision.clone())
            {
                Some(PermissionRequestDecision::Deny { message, interrupt }) => {
                    self.deny(message, interrupt)
                }
                Some(PermissionRequestDecision::Allow {
                    updated_input,
                    updated_permissions,
                }) => match &mut self.decision {
                    Some(PermissionRequestDecision::Deny { .. }) => {}
                    Some(PermissionRequestDecision::Allow {
                        updated_input: cur_input,
                        updated_permissions: cur_perms,
                    }) => {
                        if updated_input.is_some() {
                            *cur_input = updated_input;
                        }
                        if let Some(p) = updated_permissions {
                            cur_perms.get_or_insert_with(Vec::new).extend(p);
                        }
                    }
                    None => {
                        self.decision = Some(PermissionRequestDecision::Allow {
                            updated_input,
                            updated_permissions,
                        })
                    }
                },
                None => {}
            },
            HookEffect::Blocking(reason) | HookEffect::FailedClosed(reason) => {
                let mut r = None;
                push_reason(&mut r, reason);
                self.deny(r, None);
            }
            HookEffect::Text(_) | HookEffect::Failed(_) => {}
        }
    }
}

/// Aggregated outcome of the `PostToolUse` hooks of one tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// Feedback for the model (the tool already ran): set when any hook
    /// blocked (`decision: "block"`, exit 2, fail-closed failure); reasons
    /// joined with newlines.
    pub block_reason: Option<String>,
    /// Context for the model, in order.
    pub additional_context: Vec<String>,
    /// Replacement tool output (`updatedToolOutput`; the last one wins).
    pub updated_tool_output: Option<Value>,
    /// Common part.
    pub common: HookCommonOutcome,
}

impl EventOutcome for PostToolUseOutcome {
    const EVENT: HookEvent = HookEvent::PostToolUse;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                if out.decision == Some(TopDecision::Block) {
                    push_reason(
                        &mut self.block_reason,
                        out.reason.as_deref().unwrap_or_default(),
                    );
                }
                if let Some(s) = specific::<Self>(out) {
                    if let Some(c) = &s.additional_context {
                        self.additional_context.push(c.clone());
                    }
                    if let Some(o) = &s.updated_tool_output {
                        self.updated_tool_output = Some(o.clone());
                    }
                }
            }
            HookEffect::Blocking(reason) | HookEffect::FailedClosed(reason) => {
                push_reason(&mut self.block_reason, reason)
            }
            HookEffect::Text(_) | HookEffect::Failed(_) => {}
        }
    }
}

/// Aggregated outcome of the `PostToolUseFailure` hooks of one tool call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseFailureOutcome {
    /// Feedback for the model; reasons joined with newlines.
    pub block_reason: Option<String>,
    /// Context for the model, in order.
    pub additional_context: Vec<String>,
    /// Common part.
    pub common: HookCommonOutcome,
}

impl EventOutcome for PostToolUseFailureOutcome {
    const EVENT: HookEvent = HookEvent::PostToolUseFailure;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                if out.decision == Some(TopDecision::Block) {
                    push_reason(
                        &mut self.block_reason,
                        out.reason.as_deref().unwrap_or_default(),
                    );
                }
                if let Some(c) = specific::<Self>(out).and_then(|s| s.additional_context.as_ref()) {
                    self.additional_context.push(c.clone());
                }
            }
            HookEffect::Blocking(reason) | HookEffect::FailedClosed(reason) => {
                push_reason(&mut self.block_reason, reason)
            }
            HookEffect::Text(_) | HookEffect::Failed(_) => {}
        }
    }
}
