//! Metrics and log events under Claude Code's names
//! (`claude_code.token.usage`, `claude_code.tool_result`, …) with its
//! attribute names (`session.id`, `model`, `type`, `tool_name`, …), so
//! dashboards built for Claude Code read Tascer's sessions too.

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
use opentelemetry::metrics::{Counter, Meter};
use opentelemetry_sdk::logs::SdkLogger;
use tascer_core::observe::{ModelCallFacts, SessionFacts, ToolCallFacts};

use crate::names::*;

/// The edit tools Claude Code's `code_edit_tool.decision` counts.
const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// The instruments and the logger (either may be off).
pub(crate) struct Signals {
    metrics: Option<Instruments>,
    logger: Option<SdkLogger>,
}

struct Instruments {
    sessions: Counter<u64>,
    tokens: Counter<u64>,
    cost: Counter<f64>,
    lines: Counter<u64>,
    edit_decisions: Counter<u64>,
}

impl Signals {
    pub(crate) fn new(meter: Option<Meter>, logger: Option<SdkLogger>) -> Self {
        let metrics = meter.map(|meter| Instruments {
            sessions: meter
                .u64_counter(METRIC_SESSION_COUNT)
                .with_description("Sessions started")
                .with_unit("count")
                .build(),
            tokens: meter
                .u64_counter(METRIC_TOKEN_USAGE)
                .with_description("Tokens used")
                .with_unit("tokens")
                .build(),
            cost: meter
                .f64_counter(METRIC_COST_USAGE)
                .with_description("Cost of the model calls")
                .with_unit("USD")
                .build(),
            lines: meter
                .u64_counter(METRIC_LINES_OF_CODE)
                .with_description("Lines of code added or removed by the edit tools")
                .with_unit("count")
                .build(),
            edit_decisions: meter
                .u64_counter(METRIC_CODE_EDIT_DECISION)
                .with_description("Permission decisions on the edit tools")
                .with_unit("count")
                .build(),
        });
        Signals { metrics, logger }
    }

    pub(crate) fn session_opened(&self, session: &SessionFacts, host: &str) {
        if let Some(m) = &self.metrics {
            m.sessions.add(
                1,
                &[
                    KeyValue::new(SESSION_ID, session.session_id.clone()),
                    KeyValue::new(TASCER_HOST, host.to_string()),
                ],
            );
        }
    }

    pub(crate) fn model_call(&self, call: &ModelCallFacts) {
        let model = if call.response_model.is_empty() {
            &call.request_model
        } else {
            &call.response_model
        };
        let duration = duration_ms(call.start, call.end);
        if let Some(m) = &self.metrics
            && call.error.is_none()
        {
            let usage = &call.usage;
            for (kind, count) in [
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
                ("cacheRead", usage.cache_read_input_tokens),
                ("cacheCreation", usage.cache_creation_input_tokens),
            ] {
                m.tokens
                    .add(count, &metric_attrs(&call.session_id, model, kind));
            }
            if let Some(cost) = call.cost_usd {
                let attrs = [
                    KeyValue::new(SESSION_ID, call.session_id.clone()),
                    KeyValue::new("model", model.clone()),
                ];
                m.cost.add(cost, &attrs);
            }
        }
        let mut attrs = vec![
            ("session.id", AnyValue::from(call.session_id.clone())),
            ("model", AnyValue::from(model.clone())),
            ("duration_ms", AnyValue::from(duration)),
        ];
        match &call.error {
            None => {
                attrs.extend([
                    ("cost_usd", AnyValue::from(call.cost_usd.unwrap_or(0.0))),
                    (
                        "input_tokens",
                        AnyValue::from(to_i64(call.usage.input_tokens)),
                    ),
                    (
                        "output_tokens",
                        AnyValue::from(to_i64(call.usage.output_tokens)),
                    ),
                    (
                        "cache_read_tokens",
                        AnyValue::from(to_i64(call.usage.cache_read_input_tokens)),
                    ),
                    (
                        "cache_creation_tokens",
                        AnyValue::from(to_i64(call.usage.cache_creation_input_tokens)),
                    ),
                ]);
                self.event(EVENT_API_REQUEST, "api_request", attrs, call.end);
            }
            Some(error) => {
                attrs.extend([
                    ("error", AnyValue::from(error.clone())),
                    ("attempt", AnyValue::from(i64::from(call.attempts.max(1)))),
                ]);
                self.event(EVENT_API_ERROR, "api_error", attrs, call.end);
            }
        }
    }

    pub(crate) fn tool_call(&self, call: &ToolCallFacts) {
        let (decision, source) = claude_decision(call);
        if let Some(m) = &self.metrics
            && EDIT_TOOLS.contains(&call.tool_name.as_str())
        {
            if call.decision.is_some() {
                m.edit_decisions.add(
                    1,
                    &[
                        KeyValue::new(SESSION_ID, call.session_id.clone()),
                        KeyValue::new("tool_name", call.tool_name.clone()),
                        KeyValue::new("decision", decision),
                        KeyValue::new("source", source),
                        KeyValue::new("language", language(&call.input)),
                    ],
                );
            }
            if call.status == "validated" {
                let (added, removed) = lines_changed(&call.tool_name, &call.input);
                for (kind, count) in [("added", added), ("removed", removed)] {
                    let attrs = [
                        KeyValue::new(SESSION_ID, call.session_id.clone()),
                        KeyValue::new("type", kind),
                    ];
                    m.lines.add(count, &attrs);
                }
            }
        }
        let common = || {
            vec![
                ("session.id", AnyValue::from(call.session_id.clone())),
                ("tool_name", AnyValue::from(call.tool_name.clone())),
                ("tool_use_id", AnyValue::from(call.tool_use_id.clone())),
                ("decision", AnyValue::from(decision)),
                ("source", AnyValue::from(source)),
            ]
        };
        if call.decision.is_some() {
            self.event(EVENT_TOOL_DECISION, "tool_decision", common(), call.start);
        }
        let mut attrs = common();
        attrs.extend([
            (
                "success",
                AnyValue::from(if call.is_error { "false" } else { "true" }),
            ),
            (
                "duration_ms",
                AnyValue::from(duration_ms(call.start, call.end)),
            ),
        ]);
        if let Some(error) = &call.error {
            attrs.push(("error", AnyValue::from(error.clone())));
        }
        if let Some(hash) = &call.ledger_hash {
            attrs.push((TASCER_LEDGER_HASH, AnyValue::from(hash.clone())));
        }
        self.event(EVENT_TOOL_RESULT, "tool_result", attrs, call.end);
    }

    /// One log event: body and event name `name` (`claude_code.…`),
    /// attribute `event.name` the short name, as Claude Code sends them.
    fn event(
        &self,
        name: &'static str,
        short: &'static str,
        attrs: Vec<(&'static str, AnyValue)>,
        at: Option<SystemTime>,
    ) {
        let Some(logger) = &self.logger else {
            return;
        };
        let at = at.unwrap_or_else(SystemTime::now);
        let mut record = logger.create_log_record();
        record.set_event_name(name);
        record.set_body(AnyValue::from(name));
        record.set_timestamp(at);
        record.set_observed_timestamp(SystemTime::now());
        record.set_severity_number(Severity::Info);
        record.set_severity_text("INFO");
        record.add_attribute("event.name", short);
        record.add_attribute("event.timestamp", rfc3339(at));
        record.add_attributes(attrs);
        logger.emit(record);
    }
}

fn metric_attrs(session_id: &str, model: &str, kind: &'static str) -> [KeyValue; 3] {
    [
        KeyValue::new(SESSION_ID, session_id.to_string()),
        KeyValue::new("model", model.to_string()),
        KeyValue::new("type", kind),
    ]
}

/// Claude Code's `decision` (`accept`, `reject`) and `source` (`config`
/// for settings, rules, modes, policies, hooks and reviewers;
/// `user_temporary` for a person or the SDK's callback answering once).
fn claude_decision(call: &ToolCallFacts) -> (&'static str, &'static str) {
    let decision = if call.ran { "accept" } else { "reject" };
    let source = match call.decision.as_ref().map(|d| d.source.as_str()) {
        Some("user" | "callback") => {
            if call.ran {
                "user_temporary"
            } else {
                "user_reject"
            }
        }
        _ => "config",
    };
    (decision, source)
}

/// Lines added and removed by an edit tool, from its input (what it was
/// asked to write; the file's own diff is in the ledger's evidence).
fn lines_changed(tool: &str, input: &serde_json::Value) -> (u64, u64) {
    let lines = |key: &str, v: &serde_json::Value| {
        v.get(key)
            .and_then(serde_json::Value::as_str)
            .map_or(0, |s| s.lines().count() as u64)
    };
    match tool {
        "Write" => (lines("content", input), 0),
        "Edit" => (lines("new_string", input), lines("old_string", input)),
        "MultiEdit" => input
            .get("edits")
            .and_then(serde_json::Value::as_array)
            .map_or((0, 0), |edits| {
                edits.iter().fold((0, 0), |(a, r), e| {
                    (a + lines("new_string", e), r + lines("old_string", e))
                })
            }),
        "NotebookEdit" => (lines("new_source", input), 0),
        _ => (0, 0),
    }
}

/// The language of the file an edit tool names, by its extension.
fn language(input: &serde_json::Value) -> String {
    let path = ["file_path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(serde_json::Value::as_str))
        .unwrap_or_default();
    let ext = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match ext {
        "rs" => "Rust",
        "py" => "Python",
        "ts" | "tsx" => "TypeScript",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "go" => "Go",
        "java" => "Java",
        "c" | "h" => "C",
        "cc" | "cpp" | "hpp" => "C++",
        "md" => "Markdown",
        "json" => "JSON",
        "toml" => "TOML",
        "yaml" | "yml" => "YAML",
        "sh" => "Shell",
        "ipynb" => "Jupyter Notebook",
        _ => "unknown",
    }
    .to_string()
}

fn duration_ms(start: Option<SystemTime>, end: Option<SystemTime>) -> i64 {
    match (start, end) {
        (Some(s), Some(e)) => {
            i64::try_from(e.duration_since(s).unwrap_or(Duration::ZERO).as_millis()).unwrap_or(0)
        }
        _ => 0,
    }
}

/// A time as RFC 3339, UTC, milliseconds.
fn rfc3339(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A count as OpenTelemetry's integer.
pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
