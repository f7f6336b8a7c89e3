//! [`OtelObserver`]: the facts the loop and the hosts report, as spans
//! following the GenAI semantic conventions (`invoke_agent`, `chat
//! {model}`, `execute_tool {name}`) with Tascer's facts as attributes and
//! span events; metrics and log events go through [`Signals`].

use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::trace::{
    Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _,
};
use opentelemetry::{Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use parking_lot::Mutex;
use tascer_core::observe::{
    AgentEndFacts, AgentFacts, ModelCallFacts, Observer, SessionFacts, ToolCallFacts,
};

use super::ids;
use super::signals::{Signals, to_i64};
use crate::names::*;

/// A running agent invocation: its span and what its children carry.
struct LiveAgent {
    span: Span,
    context: SpanContext,
    policy_digest: Option<String>,
}

/// Spans, metrics and log events from the facts of sessions.
pub(crate) struct OtelObserver {
    tracer: Option<SdkTracer>,
    signals: Signals,
    /// `tascer` or `claude-code`.
    host: String,
    agents: Mutex<HashMap<String, LiveAgent>>,
}

impl OtelObserver {
    pub(crate) fn new(tracer: Option<SdkTracer>, signals: Signals, host: &str) -> Self {
        OtelObserver {
            tracer,
            signals,
            host: host.to_string(),
            agents: Mutex::default(),
        }
    }

    /// The parent of a session's model and tool spans: its running
    /// `invoke_agent` span, else the one derived from its id (a host
    /// that reports the invocation at its end), and the policy digest.
    fn parent(&self, session_id: &str) -> (Context, Option<String>) {
        let agents = self.agents.lock();
        let (context, digest) = match agents.get(session_id) {
            Some(agent) => (agent.context.clone(), agent.policy_digest.clone()),
            None => (ids::derived_parent(session_id), None),
        };
        (Context::new().with_remote_span_context(context), digest)
    }

    fn common(&self, session_id: &str) -> Vec<KeyValue> {
        vec![
            KeyValue::new(SESSION_ID, session_id.to_string()),
            KeyValue::new(GEN_AI_CONVERSATION_ID, session_id.to_string()),
            KeyValue::new(TASCER_HOST, self.host.clone()),
        ]
    }
}

impl Observer for OtelObserver {
    fn session_opened(&self, session: &SessionFacts) {
        self.signals.session_opened(session, &self.host);
    }

    fn agent_started(&self, agent: &AgentFacts) {
        let Some(tracer) = &self.tracer else {
            return;
        };
        let mut attributes = self.common(&agent.session_id);
        attributes.extend([
            KeyValue::new(GEN_AI_OPERATION_NAME, SPAN_INVOKE_AGENT),
            KeyValue::new(GEN_AI_AGENT_NAME, "tascer"),
            KeyValue::new(GEN_AI_PROVIDER_NAME, agent.provider.clone()),
            KeyValue::new(GEN_AI_SYSTEM, agent.provider.clone()),
            KeyValue::new(GEN_AI_REQUEST_MODEL, agent.model.clone()),
        ]);
        if let Some(digest) = &agent.policy_digest {
            attributes.push(KeyValue::new(TASCER_POLICY_DIGEST, digest.clone()));
        }
        let span = tracer
            .span_builder(SPAN_INVOKE_AGENT)
            .with_kind(SpanKind::Internal)
            .with_start_time(agent.start.unwrap_or_else(SystemTime::now))
            .with_attributes(attributes)
            .start_with_context(tracer, &Context::new());
        let context = span.span_context().clone();
        let live = LiveAgent {
            span,
            context,
            policy_digest: agent.policy_digest.clone(),
        };
        // A session runs one prompt at a time; a new one replaces (and
        // ends) a span left open.
        if let Some(mut old) = self.agents.lock().insert(agent.session_id.clone(), live) {
            old.span.end();
        }
    }

    fn agent_ended(&self, agent: &AgentEndFacts) {
        let Some(tracer) = &self.tracer else {
            return;
        };
        let live = self.agents.lock().remove(&agent.session_id);
        let mut span = match live {
            Some(live) => live.span,
            // Reported only at its end: the span takes the derived ids its
            // children already name as their parent.
            None => ids::with_ids(ids::derived(&agent.session_id), || {
                let mut attributes = self.common(&agent.session_id);
                attributes.extend([
                    KeyValue::new(GEN_AI_OPERATION_NAME, SPAN_INVOKE_AGENT),
                    KeyValue::new(GEN_AI_AGENT_NAME, "tascer"),
                ]);
                tracer
                    .span_builder(SPAN_INVOKE_AGENT)
                    .with_kind(SpanKind::Internal)
                    .with_start_time(agent.start.or(agent.end).unwrap_or_else(SystemTime::now))
                    .with_attributes(attributes)
                    .start_with_context(tracer, &Context::new())
            }),
        };
        span.set_attributes([
            KeyValue::new(GEN_AI_USAGE_INPUT_TOKENS, to_i64(agent.usage.input_tokens)),
            KeyValue::new(
                GEN_AI_USAGE_OUTPUT_TOKENS,
                to_i64(agent.usage.output_tokens),
            ),
            KeyValue::new(TASCER_COST_USD, agent.cost_usd),
            KeyValue::new("tascer.result.subtype", agent.subtype.clone()),
            KeyValue::new("tascer.num_turns", i64::from(agent.num_turns)),
        ]);
        if agent.status == "error" {
            span.set_attribute(KeyValue::new(ERROR_TYPE, agent.subtype.clone()));
            span.set_status(Status::error(agent.subtype.clone()));
        }
        span.end_with_timestamp(agent.end.unwrap_or_else(SystemTime::now));
    }

    fn model_call(&self, call: &ModelCallFacts) {
        self.signals.model_call(call);
        let Some(tracer) = &self.tracer else {
            return;
        };
        let (parent, _) = self.parent(&call.session_id);
        let mut attributes = self.common(&call.session_id);
        attributes.extend([
            KeyValue::new(GEN_AI_OPERATION_NAME, SPAN_CHAT),
            KeyValue::new(GEN_AI_PROVIDER_NAME, call.provider.clone()),
            KeyValue::new(GEN_AI_SYSTEM, call.provider.clone()),
            KeyValue::new(GEN_AI_REQUEST_MODEL, call.request_model.clone()),
            KeyValue::new(GEN_AI_USAGE_INPUT_TOKENS, to_i64(call.usage.input_tokens)),
            KeyValue::new(GEN_AI_USAGE_OUTPUT_TOKENS, to_i64(call.usage.output_tokens)),
            KeyValue::new(
                "gen_ai.usage.cache_read.input_tokens",
                to_i64(call.usage.cache_read_input_tokens),
            ),
            KeyValue::new(
                "gen_ai.usage.cache_creation.input_tokens",
                to_i64(call.usage.cache_creation_input_tokens),
            ),
        ]);
        if !call.response_model.is_empty() {
            attributes.push(KeyValue::new(
                GEN_AI_RESPONSE_MODEL,
                call.response_model.clone(),
            ));
            attributes.push(KeyValue::new(GEN_AI_RESPONSE_ID, call.response_id.clone()));
        }
        if let Some(reason) = &call.finish_reason {
            attributes.push(KeyValue::new(
                GEN_AI_RESPONSE_FINISH_REASONS,
                Value::Array(vec![StringValue::from(reason.clone())].into()),
            ));
        }
        if let Some(cost) = call.cost_usd {
            attributes.push(KeyValue::new(TASCER_COST_USD, cost));
        }
        let mut span = tracer
            .span_builder(format!("{SPAN_CHAT} {}", call.request_model))
            .with_kind(SpanKind::Client)
            .with_start_time(call.start.unwrap_or_else(SystemTime::now))
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        if let Some(error) = &call.error {
            span.set_attribute(KeyValue::new(ERROR_TYPE, "api_error"));
            span.set_status(Status::error(error.clone()));
        }
        span.end_with_timestamp(call.end.unwrap_or_else(SystemTime::now));
    }

    fn tool_call(&self, call: &ToolCallFacts) {
        self.signals.tool_call(call);
        let Some(tracer) = &self.tracer else {
            return;
        };
        let (parent, digest) = self.parent(&call.session_id);
        let mut attributes = self.common(&call.session_id);
        attributes.extend(tool_attributes(call));
        if let Some(digest) = call.policy_digest.clone().or(digest) {
            attributes.push(KeyValue::new(TASCER_POLICY_DIGEST, digest));
        }
        let mut span = tracer
            .span_builder(format!("{SPAN_EXECUTE_TOOL} {}", call.tool_name))
            .with_kind(SpanKind::Internal)
            .with_start_time(call.start.unwrap_or_else(SystemTime::now))
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        let at = call.end.unwrap_or_else(SystemTime::now);
        for gate in &call.gates {
            span.add_event_with_timestamp(
                EVENT_GATE,
                at,
                vec![
                    KeyValue::new("tascer.gate.name", gate.name.clone()),
                    KeyValue::new("tascer.gate.phase", gate.phase.clone()),
                    KeyValue::new("tascer.gate.passed", gate.passed),
                    KeyValue::new("tascer.gate.message", gate.message.clone()),
                ],
            );
        }
        for verdict in &call.verdicts {
            span.add_event_with_timestamp(
                EVENT_REVIEWER,
                at,
                vec![
                    KeyValue::new("tascer.reviewer.name", verdict.reviewer.clone()),
                    KeyValue::new("tascer.reviewer.passed", verdict.passed),
                    KeyValue::new("tascer.reviewer.reason", verdict.reason.clone()),
                ],
            );
        }
        for hook in &call.hooks {
            span.add_event_with_timestamp(
                EVENT_HOOK,
                at,
                vec![
                    KeyValue::new("tascer.hook.event", hook.event.clone()),
                    KeyValue::new("tascer.hook.outcome", hook.outcome.clone()),
                    KeyValue::new("tascer.hook.duration_ms", to_i64(hook.duration_ms)),
                ],
            );
        }
        if call.is_error {
            let kind = if call.ran { "tool_error" } else { "blocked" };
            span.set_attribute(KeyValue::new(ERROR_TYPE, kind));
            span.set_status(Status::error(call.error.clone().unwrap_or_default()));
        }
        span.end_with_timestamp(at);
    }
}

/// The `execute_tool` span's attributes: the GenAI ones and Tascer's
/// decision, status, gates, reviewers and ledger hash.
fn tool_attributes(call: &ToolCallFacts) -> Vec<KeyValue> {
    let mut out = vec![
        KeyValue::new(GEN_AI_OPERATION_NAME, SPAN_EXECUTE_TOOL),
        KeyValue::new(GEN_AI_TOOL_NAME, call.tool_name.clone()),
        KeyValue::new(GEN_AI_TOOL_CALL_ID, call.tool_use_id.clone()),
        KeyValue::new(GEN_AI_TOOL_TYPE, call.tool_type.clone()),
        KeyValue::new(TASCER_TOOL_STATUS, call.status.clone()),
    ];
    if let Some(decision) = &call.decision {
        out.push(KeyValue::new(TASCER_DECISION, decision.behavior.clone()));
        out.push(KeyValue::new(
            TASCER_DECISION_SOURCE,
            decision.source.clone(),
        ));
        out.push(KeyValue::new(
            TASCER_DECISION_REASON,
            decision.reason.clone(),
        ));
        if let Some(name) = &decision.source_name {
            out.push(KeyValue::new(TASCER_DECISION_SOURCE_NAME, name.clone()));
        }
    }
    let names = |passed: bool| -> Vec<StringValue> {
        call.gates
            .iter()
            .filter(|g| g.passed == passed)
            .map(|g| StringValue::from(format!("{}:{}", g.phase, g.name)))
            .collect()
    };
    for (key, passed) in [(TASCER_GATES_PASSED, true), (TASCER_GATES_FAILED, false)] {
        let list = names(passed);
        if !list.is_empty() {
            out.push(KeyValue::new(key, Value::Array(list.into())));
        }
    }
    if !call.verdicts.is_empty() {
        let verdicts: Vec<StringValue> = call
            .verdicts
            .iter()
            .map(|v| {
                let verdict = if v.passed { "pass" } else { "fail" };
                StringValue::from(format!("{}={verdict}", v.reviewer))
            })
            .collect();
        out.push(KeyValue::new(
            TASCER_REVIEWERS,
            Value::Array(verdicts.into()),
        ));
    }
    if let Some(hash) = &call.ledger_hash {
        out.push(KeyValue::new(TASCER_LEDGER_HASH, hash.clone()));
    }
    out
}
