//! The session's [`Observer`] (if any) and what the loop tells it: the
//! session opened, each agent invocation, model call and tool call, from
//! data the loop already has. Nothing here waits: an observer queues.

use std::sync::Arc;
use std::time::SystemTime;

use tascer_core::Usage;
use tascer_core::observe::{AgentEndFacts, AgentFacts, ModelCallFacts, Observer, SessionFacts};
use tascer_guard::reviewers::ReviewRecord;
use tascer_ledger::ToolRecord;
use tascer_model::{ModelError, ModelResponse};

/// The observer of a session and the facts every report carries.
#[derive(Clone, Default)]
pub(crate) struct Observed {
    /// Where the facts go; `None`: nowhere (nothing is computed).
    pub observer: Option<Arc<dyn Observer>>,
    /// `anthropic` or `openai`.
    pub provider: &'static str,
    /// The digest of the options and settings that govern the session.
    pub policy_digest: String,
}

/// How a turn ended, for [`Observed::agent_ended`].
pub(crate) struct TurnEnd<'a> {
    /// `success` or `error`.
    pub status: &'a str,
    /// The result's subtype.
    pub subtype: &'a str,
    /// Model calls made.
    pub num_turns: u32,
    /// Tokens used.
    pub usage: Usage,
    /// The turn's cost, USD.
    pub cost_usd: f64,
}

impl Observed {
    /// Tells the observer the session `session_id` of `model` is open.
    pub fn session_opened(&self, session_id: &str, model: &str) {
        if let Some(observer) = &self.observer {
            observer.session_opened(&SessionFacts {
                session_id: session_id.to_string(),
                host: "tascer".into(),
                model: model.to_string(),
                provider: self.provider.to_string(),
            });
        }
    }

    /// Tells the observer a prompt starts running.
    pub fn agent_started(&self, session_id: &str, model: &str) {
        if let Some(observer) = &self.observer {
            observer.agent_started(&AgentFacts {
                session_id: session_id.to_string(),
                model: model.to_string(),
                provider: self.provider.to_string(),
                policy_digest: Some(self.policy_digest.clone()),
                parent_tool_use_id: None,
                start: Some(SystemTime::now()),
            });
        }
    }

    /// Tells the observer the prompt's turn ended.
    pub fn agent_ended(&self, session_id: &str, end: TurnEnd<'_>) {
        if let Some(observer) = &self.observer {
            observer.agent_ended(&AgentEndFacts {
                session_id: session_id.to_string(),
                status: end.status.to_string(),
                subtype: end.subtype.to_string(),
                num_turns: end.num_turns,
                usage: end.usage,
                cost_usd: end.cost_usd,
                start: None,
                end: Some(SystemTime::now()),
            });
        }
    }

    /// Tells the observer how a model call of `model` that started at
    /// `start` ended; `cost_usd` is its priced cost.
    pub fn model_call(
        &self,
        session_id: &str,
        model: &str,
        start: SystemTime,
        response: &Result<ModelResponse, ModelError>,
        cost_usd: Option<f64>,
    ) {
        let Some(observer) = &self.observer else {
            return;
        };
        let mut facts = ModelCallFacts {
            session_id: session_id.to_string(),
            provider: self.provider.to_string(),
            request_model: model.to_string(),
            start: Some(start),
            end: Some(SystemTime::now()),
            ..ModelCallFacts::default()
        };
        match response {
            Ok(r) => {
                facts.response_model = r.model.clone();
                facts.response_id = r.id.clone();
                facts.usage = r.usage;
                facts.cost_usd = cost_usd;
                facts.attempts = r.attempts;
                facts.finish_reason = r.stop_reason.as_ref().map(|s| {
                    serde_json::to_value(s)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                });
            }
            Err(ModelError::Cancelled) => facts.error = Some("cancelled".into()),
            Err(err) => facts.error = Some(err.to_string()),
        }
        observer.model_call(&facts);
    }

    /// Tells the observer a tool call's record was closed by the ledger
    /// entry `hash`.
    pub fn tool_call(
        &self,
        session_id: &str,
        record: &ToolRecord,
        hash: Option<String>,
        reviews: &[ReviewRecord],
    ) {
        if let Some(observer) = &self.observer {
            let mut facts = crate::observe::tool_facts(session_id, record, hash, reviews);
            facts.policy_digest = Some(self.policy_digest.clone());
            observer.tool_call(&facts);
        }
    }
}
