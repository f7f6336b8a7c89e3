//! Outcomes of prompt and lifecycle events: `UserPromptSubmit`, `Stop`,
//! `SubagentStop`, `PreCompact`, `SessionStart`, `SessionEnd`,
//! `Notification`.

use tascer_core::HookEvent;

use super::{EventOutcome, HookCommonOutcome, push_reason, specific};
use crate::hooks::effect::HookEffect;
use crate::hooks::output::{HookOutput, TopDecision};

/// Records a fail-closed failure on an event that cannot block as a stop.
fn stop_closed(common: &mut HookCommonOutcome, msg: &str) {
    if common.stop.is_none() {
        common.stop = Some(msg.to_string());
    }
}

fn block_reason(out: &HookOutput) -> Option<&str> {
    (out.decision == Some(TopDecision::Block)).then(|| out.reason.as_deref().unwrap_or_default())
}

/// Aggregated outcome of the `UserPromptSubmit` hooks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserPromptSubmitOutcome {
    /// Set when the prompt must not reach the model (and is erased); the
    /// reason is for the user. Reasons joined with newlines.
    pub block: Option<String>,
    /// Context for the model (JSON `additionalContext` and plain stdout of
    /// command hooks), in order.
    pub additional_context: Vec<String>,
    /// Common part.
    pub common: HookCommonOutcome,
}

impl EventOutcome for UserPromptSubmitOutcome {
    const EVENT: HookEvent = HookEvent::UserPromptSubmit;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                if let Some(r) = block_reason(out) {
                    push_reason(&mut self.block, r);
                }
                if let Some(c) = specific::<Self>(out).and_then(|s| s.additional_context.as_ref()) {
                    self.additional_context.push(c.clone());
                }
            }
            HookEffect::Text(t) => self.additional_context.push(t.clone()),
            HookEffect::Blocking(r) | HookEffect::FailedClosed(r) => {
                push_reason(&mut self.block, r)
            }
            HookEffect::Failed(_) => {}
        }
    }
}

macro_rules! stop_outcome {
    ($(#[$doc:meta])* $name:ident, $event:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            /// Set when a hook blocks the stop: the agent must go on, with
            /// this text (for the model) as the continuation. Reasons joined
            /// with newlines.
            pub block: Option<String>,
            /// Context for the model, in order.
            pub additional_context: Vec<String>,
            /// Common part. A fail-closed failure sets `stop` (forcing a
            /// continuation could loop forever).
            pub common: HookCommonOutcome,
        }

        impl EventOutcome for $name {
            const EVENT: HookEvent = $event;

            fn common_mut(&mut self) -> &mut HookCommonOutcome {
                &mut self.common
            }

            fn apply(&mut self, effect: &HookEffect) {
                match effect {
                    HookEffect::Output(out) => {
                        if let Some(r) = block_reason(out) {
                            push_reason(&mut self.block, r);
                        }
                        if let Some(c) =
                            specific::<Self>(out).and_then(|s| s.additional_context.as_ref())
                        {
                            self.additional_context.push(c.clone());
                        }
                    }
                    HookEffect::Blocking(r) => push_reason(&mut self.block, r),
                    HookEffect::FailedClosed(m) => stop_closed(&mut self.common, m),
                    HookEffect::Text(_) | HookEffect::Failed(_) => {}
                }
            }
        }
    };
}

stop_outcome!(
    /// Aggregated outcome of the `Stop` hooks.
    StopOutcome,
    HookEvent::Stop
);
stop_outcome!(
    /// Aggregated outcome of the `SubagentStop` hooks.
    SubagentStopOutcome,
    HookEvent::SubagentStop
);

/// Aggregated outcome of the `PreCompact` hooks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreCompactOutcome {
    /// Set when compaction must not happen; reasons joined with newlines.
    pub block: Option<String>,
    /// Common part.
    pub common: HookCommonOutcome,
}

impl EventOutcome for PreCompactOutcome {
    const EVENT: HookEvent = HookEvent::PreCompact;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                if let Some(r) = block_reason(out) {
                    push_reason(&mut self.block, r);
                }
            }
            HookEffect::Blocking(r) | HookEffect::FailedClosed(r) => {
                push_reason(&mut self.block, r)
            }
            HookEffect::Text(_) | HookEffect::Failed(_) => {}
        }
    }
}

/// Aggregated outcome of the `SessionStart` hooks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStartOutcome {
    /// Context for the model (JSON `additionalContext` and plain stdout of
    /// command hooks), in order.
    pub additional_context: Vec<String>,
    /// Common part. Exit 2 stderr goes to `errors` (user only); a
    /// fail-closed failure sets `stop`.
    pub common: HookCommonOutcome,
}

impl EventOutcome for SessionStartOutcome {
    const EVENT: HookEvent = HookEvent::SessionStart;

    fn common_mut(&mut self) -> &mut HookCommonOutcome {
        &mut self.common
    }

    fn apply(&mut self, effect: &HookEffect) {
        match effect {
            HookEffect::Output(out) => {
                if let Some(c) = specific::<Self>(out).and_then(|s| s.additional_context.as_ref()) {
                    self.additional_context.push(c.clone());
                }
            }
            HookEffect::Text(t) => self.additional_context.push(t.clone()),
            HookEffect::Blocking(r) => self.common.errors.push(r.clone()),
            HookEffect::FailedClosed(m) => stop_closed(&mut self.common, m),
            HookEffect::Failed(_) => {}
        }
    }
}

macro_rules! notify_outcome {
    ($(#[$doc:meta])* $name:ident, $event:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            /// Common part. Exit 2 stderr and fail-closed failures go to
            /// `errors` (user only): there is nothing to block.
            pub common: HookCommonOutcome,
        }

        impl EventOutcome for $name {
            const EVENT: HookEvent = $event;

            fn common_mut(&mut self) -> &mut HookCommonOutcome {
                &mut self.common
            }

            fn apply(&mut self, effect: &HookEffect) {
                if let HookEffect::Blocking(r) | HookEffect::FailedClosed(r) = effect {
                    self.common.errors.push(r.clone());
                }
            }
        }
    };
}

notify_outcome!(
    /// Aggregated outcome of the `PostCompact` hooks.
    PostCompactOutcome,
    HookEvent::PostCompact
);
notify_outcome!(
    /// Aggregated outcome of the `SessionEnd` hooks.
    SessionEndOutcome,
    HookEvent::SessionEnd
);
notify_outcome!(
    /// Aggregated outcome of the `Notification` hooks.
    NotificationOutcome,
    HookEvent::Notification
);

/// The outcome of hooks that answer an MCP server's question (`action`,
/// `content`): the last hook that answers wins.
macro_rules! answer_outcome {
    ($(#[$doc:meta])* $name:ident, $event:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            /// Common part.
            pub common: HookCommonOutcome,
            /// `accept`, `decline` or `cancel`; `None` when no hook answered.
            pub action: Option<String>,
            /// The fields of an `accept`.
            pub content: Option<serde_json::Value>,
        }

        impl EventOutcome for $name {
            const EVENT: HookEvent = $event;

            fn common_mut(&mut self) -> &mut HookCommonOutcome {
                &mut self.common
            }

            fn apply(&mut self, effect: &HookEffect) {
                match effect {
                    HookEffect::Output(out) => {
                        if let Some(spec) = specific::<Self>(out)
                            && let Some(action) = &spec.action
                        {
                            self.action = Some(action.clone());
                            self.content = spec.content.clone();
                        }
                    }
                    HookEffect::Blocking(r) | HookEffect::FailedClosed(r) => {
                        self.common.errors.push(r.clone());
                    }
                    _ => {}
                }
            }
        }
    };
}

answer_outcome!(
    /// Aggregated outcome of the `Elicitation` hooks: the last hook that
    /// answers (`action`) wins.
    ElicitationOutcome,
    HookEvent::Elicitation
);
answer_outcome!(
    /// Aggregated outcome of the `ElicitationResult` hooks: the last hook
    /// that overrides the answer (`action`) wins.
    ElicitationResultOutcome,
    HookEvent::ElicitationResult
);
