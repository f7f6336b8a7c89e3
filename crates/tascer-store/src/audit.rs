//! The audit tables' rows: every permission decision
//! (`permission_decisions`), every hook run (`hook_executions`) and the
//! measurements of model calls, tool calls and hooks (`metrics`), with
//! typed, indexed columns on both backends (docs/audit.md has the schema).
//!
//! They are projections of ledger entries: `tascer-ledger` derives them
//! from each entry it appends and the backend writes them in the append's
//! transaction, so a decision or hook run is in the audit tables exactly
//! when it is in the ledger. The full payload stays in each row's `data`
//! column (canonical JSON); the typed columns are what queries filter on.

use serde::{Deserialize, Serialize};

/// One permission decision (`permission_decisions`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionRow {
    /// The session (set when read; an append writes its own session).
    pub session_id: String,
    /// Seq of the ledger entry that records it.
    pub seq: u64,
    /// When it was recorded (the entry's time, RFC 3339 UTC, ms).
    pub ts: String,
    /// The call it decided.
    pub tool_use_id: Option<String>,
    /// The tool.
    pub tool: Option<String>,
    /// `allow`, `deny` or `ask` (a deferred ask: the host asks its user).
    pub decision: Option<String>,
    /// Who decided: `rule`, `policy`, `mode`, `hook`, `callback`,
    /// `reviewer`, `user`, `cache`, `workaround`, `default`.
    pub decider_kind: Option<String>,
    /// Which one: the rule as written, the policy's, mode's, reviewer's or
    /// hook's name (none for the callback, the user, the default).
    pub decider: Option<String>,
    /// Why, in the decider's words.
    pub reason: Option<String>,
    /// The permission mode in force.
    pub mode: Option<String>,
    /// `sha256:<hex>` of the canonical JSON (RFC 8785) of the call's input
    /// as its `tool_call_opened` record stores it.
    pub input_digest: Option<String>,
    /// The whole payload (canonical JSON).
    pub data: String,
}

/// One hook run (`hook_executions`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookRunRow {
    /// The session (set when read).
    pub session_id: String,
    /// Seq of the ledger entry that records it.
    pub seq: u64,
    /// When it was recorded (the entry's time).
    pub ts: String,
    /// The tool call it ran for (none for session, prompt and stop events).
    pub tool_use_id: Option<String>,
    /// The hook event (`PreToolUse`, …).
    pub event: Option<String>,
    /// The matcher it was registered under (none: every tool).
    pub matcher: Option<String>,
    /// The command line of a command hook, or the callback's name.
    pub hook: Option<String>,
    /// `command`, `in_process` (an SDK callback or a Rust hook).
    pub hook_kind: Option<String>,
    /// `success`, `blocked`, `error` or `timeout`.
    pub outcome: Option<String>,
    /// A command hook's exit code.
    pub exit_code: Option<i64>,
    /// Wall time, milliseconds.
    pub duration_ms: Option<i64>,
    /// The error of an `error` or `timeout` run.
    pub error: Option<String>,
    /// The whole payload (canonical JSON).
    pub data: String,
}

/// One measurement (`metrics`): of a model call, a tool call, a hook run,
/// or a turn's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// The session (set when read).
    pub session_id: String,
    /// `model_call`, `tool_call`, `hook`, `reviewer_call` or
    /// `session_end` (see [`MetricKind`]).
    pub kind: String,
    /// What was measured: the model, the tool, the hook's command or
    /// callback, `session_end`.
    pub name: String,
    /// Seq of the ledger entry it was derived from, if any.
    pub seq: Option<u64>,
    /// When.
    pub ts: String,
    /// The tool call it belongs to (a tool call, its hooks, a subagent's
    /// model call).
    pub tool_use_id: Option<String>,
    /// Wall time, milliseconds.
    pub duration_ms: Option<i64>,
    /// Input tokens (model calls, turn ends).
    pub input_tokens: Option<i64>,
    /// Output tokens.
    pub output_tokens: Option<i64>,
    /// Tokens read from the prompt cache.
    pub cache_read_tokens: Option<i64>,
    /// Tokens written to the prompt cache.
    pub cache_creation_tokens: Option<i64>,
    /// Cost, USD (model calls, turn ends), when known.
    pub cost_usd: Option<f64>,
    /// A named measurement's value (kept for the rows of older builds).
    pub value: Option<f64>,
    /// More data (canonical JSON).
    pub data: Option<String>,
}

/// The kinds of [`MetricRow`] Tascer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// One model call: tokens, cost, API time.
    ModelCall,
    /// One tool call: wall time from open to close.
    ToolCall,
    /// One hook run: wall time.
    Hook,
    /// One LLM reviewer's model call: tokens, time (its verdict is a
    /// `reviewer_verdict` entry; a cached verdict made no call).
    ReviewerCall,
    /// A turn's end: the turn's usage and the session's cost.
    SessionEnd,
}

impl MetricKind {
    /// The name stored in `metrics.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricKind::ModelCall => "model_call",
            MetricKind::ToolCall => "tool_call",
            MetricKind::Hook => "hook",
            MetricKind::ReviewerCall => "reviewer_call",
            MetricKind::SessionEnd => "session_end",
        }
    }
}

/// Which decisions [`Backend::decisions`](crate::Backend::decisions)
/// returns: every field set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecisionFilter {
    /// Only this session's.
    pub session: Option<String>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only this decision (`allow`, `deny`, `ask`).
    pub decision: Option<String>,
    /// Only decisions made by this decider kind (`rule`, `hook`, …) or
    /// this decider (a rule as written, a policy's name).
    pub decider: Option<String>,
    /// Only decisions recorded at or after this time (RFC 3339 UTC, as
    /// stored; a date `2026-11-27` works too).
    pub since: Option<String>,
    /// At most this many (the most recent ones); none: all.
    pub limit: Option<usize>,
}

/// A `--since` that is neither a time, a date nor a span.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot read {0:?} as a time: give an RFC 3339 time (2026-11-27T09:30:00Z), a date \
     (2026-11-27, UTC) or a span back from now (90s, 30m, 12h, 7d)"
)]
pub struct SinceError(pub String);

/// The stored form (RFC 3339 UTC, milliseconds, as the `ts` columns hold
/// it) of a [`DecisionFilter::since`] given as an RFC 3339 time (any
/// offset), a date (midnight UTC) or a span back from `now` (`90s`, `30m`,
/// `12h`, `7d`).
pub fn parse_since(text: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String, SinceError> {
    let text = text.trim();
    let stored =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(stored(t.with_timezone(&chrono::Utc)));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(stored(day.and_time(chrono::NaiveTime::MIN).and_utc()));
    }
    let bad = || SinceError(text.to_string());
    let (split, _) = text.char_indices().last().ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let n: i64 = number.parse().map_err(|_| bad())?;
    let span = match unit {
        "s" => chrono::Duration::try_seconds(n),
        "m" => chrono::Duration::try_minutes(n),
        "h" => chrono::Duration::try_hours(n),
        "d" => chrono::Duration::try_days(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    now.checked_sub_signed(span).map(stored).ok_or_else(bad)
}

/// The `WHERE` clause and its parameters' order for a [`DecisionFilter`],
/// shared by both backends: `placeholder(n)` writes the n-th (from 1)
/// parameter's placeholder (`?n` or `$n`). Returns the clause (empty when
/// nothing is filtered) and the values in placeholder order.
pub(crate) fn decision_where(
    filter: &DecisionFilter,
    placeholder: impl Fn(usize) -> String,
) -> (String, Vec<String>) {
    let mut clauses = Vec::new();
    let mut values = Vec::new();
    let mut add = |clause: &dyn Fn(&str) -> String, value: &Option<String>| {
        if let Some(value) = value {
            values.push(value.clone());
            clauses.push(clause(&placeholder(values.len())));
        }
    };
    add(&|p| format!("session_id = {p}"), &filter.session);
    add(&|p| format!("tool = {p}"), &filter.tool);
    add(&|p| format!("decision = {p}"), &filter.decision);
    add(
        &|p| format!("(decider_kind = {p} OR decider = {p})"),
        &filter.decider,
    );
    add(&|p| format!("ts >= {p}"), &filter.since);
    if clauses.is_empty() {
        (String::new(), values)
    } else {
        (format!("WHERE {}", clauses.join(" AND ")), values)
    }
}

/// The columns a decision query selects, in [`DecisionRow`]'s order.
pub(crate) const DECISION_COLUMNS: &str = "session_id, seq, ts, tool_use_id, tool, decision,
     decider_kind, decider, reason, mode, input_digest, data";

/// The columns a hook-run query selects, in [`HookRunRow`]'s order.
pub(crate) const HOOK_COLUMNS: &str = "session_id, seq, ts, tool_use_id, event, matcher, hook,
     hook_kind, outcome, exit_code, duration_ms, error, data";

/// The columns a metrics query selects, in [`MetricRow`]'s order.
pub(crate) const METRIC_COLUMNS: &str = "session_id, kind, name, seq, ts, tool_use_id,
     duration_ms, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
     cost_usd, value, data";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_where_clause_numbers_its_parameters_in_order() {
        let filter = DecisionFilter {
            tool: Some("Bash".into()),
            decider: Some("rule".into()),
            since: Some("2026-01-01".into()),
            ..DecisionFilter::default()
        };
        let (clause, values) = decision_where(&filter, |n| format!("${n}"));
        assert_eq!(
            clause,
            "WHERE tool = $1 AND (decider_kind = $2 OR decider = $2) AND ts >= $3"
        );
        assert_eq!(values, ["Bash", "rule", "2026-01-01"]);
        let (clause, values) = decision_where(&DecisionFilter::default(), |n| format!("?{n}"));
        assert!(clause.is_empty() && values.is_empty());
    }

    #[test]
    fn since_takes_a_time_a_date_or_a_span() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-27T12:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let since = |t: &str| parse_since(t, now);
        assert_eq!(
            since("2026-11-27T13:30:00+02:00").unwrap(),
            "2026-11-27T11:30:00.000Z"
        );
        assert_eq!(since("2026-11-20").unwrap(), "2026-11-20T00:00:00.000Z");
        assert_eq!(since("90m").unwrap(), "2026-11-27T10:30:00.000Z");
        assert_eq!(since("2d").unwrap(), "2026-11-25T12:00:00.000Z");
        for bad in ["", "yesterday", "5w", "m", "2026-13-01", "5µ"] {
            assert!(since(bad).is_err(), "{bad}");
        }
    }
}
