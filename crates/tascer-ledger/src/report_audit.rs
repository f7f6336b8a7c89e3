//! The audit tables' rows (docs/audit.md) in words, for `tascer report`,
//! `tascer sessions show` and `tascer audit query`: who decided a call,
//! which hooks ran, and what the session's model calls, tool calls and
//! hooks took and cost.

use std::collections::BTreeMap;

use tascer_store::{DecisionRow, HookRunRow, MetricKind, MetricRow};

/// `allow (rule Bash(ls:*))`, `deny (hook ./deny.sh)`, `allow (callback)`:
/// the decision and who made it.
pub fn decision_text(d: &DecisionRow) -> String {
    let decision = d.decision.as_deref().unwrap_or("?");
    match (&d.decider_kind, &d.decider) {
        (Some(kind), Some(name)) => format!("{decision} ({kind} {name})"),
        (Some(kind), None) => format!("{decision} ({kind})"),
        (None, _) => decision.to_string(),
    }
}

/// `PreToolUse ./check.sh blocked (exit 2, 12 ms)`: one hook run.
pub fn hook_text(h: &HookRunRow) -> String {
    let mut how = Vec::new();
    if let Some(code) = h.exit_code {
        how.push(format!("exit {code}"));
    }
    if let Some(ms) = h.duration_ms {
        how.push(format!("{ms} ms"));
    }
    if let Some(error) = &h.error {
        how.push(error.lines().next().unwrap_or_default().to_string());
    }
    format!(
        "{} {} {} ({})",
        h.event.as_deref().unwrap_or("?"),
        h.hook.as_deref().unwrap_or("?"),
        h.outcome.as_deref().unwrap_or("?"),
        how.join(", ")
    )
}

/// `8 (rule 3, hook 2, policy 2, mode 1)`: how many decisions, by kind of
/// decider.
pub fn decision_counts(decisions: &[DecisionRow]) -> String {
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for d in decisions {
        *by_kind
            .entry(d.decider_kind.as_deref().unwrap_or("unknown"))
            .or_default() += 1;
    }
    if by_kind.is_empty() {
        return "0".into();
    }
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    format!("{} ({})", decisions.len(), kinds.join(", "))
}

/// One line per kind of measurement: `model calls 3: 1200 in / 85 out
/// tokens, $0.0042, 2140 ms`, `tool calls 4: 310 ms`, `hooks 5: 41 ms`.
pub fn metric_lines(metrics: &[MetricRow]) -> Vec<String> {
    let of = |kind: MetricKind| metrics.iter().filter(move |m| m.kind == kind.as_str());
    let ms = |rows: &mut dyn Iterator<Item = &MetricRow>| -> (usize, i64) {
        rows.fold((0, 0), |(n, total), m| {
            (n + 1, total + m.duration_ms.unwrap_or(0))
        })
    };
    let mut out = Vec::new();
    let models: Vec<&MetricRow> = of(MetricKind::ModelCall).collect();
    if !models.is_empty() {
        let sum =
            |f: fn(&MetricRow) -> Option<i64>| models.iter().filter_map(|m| f(m)).sum::<i64>();
        let cost: f64 = models.iter().filter_map(|m| m.cost_usd).sum();
        let (n, total) = ms(&mut models.iter().copied());
        out.push(format!(
            "model calls {n}: {} in / {} out tokens ({} cache read), ${cost:.4}, {total} ms",
            sum(|m| m.input_tokens),
            sum(|m| m.output_tokens),
            sum(|m| m.cache_read_tokens),
        ));
    }
    let (n, total) = ms(&mut of(MetricKind::ToolCall));
    if n > 0 {
        out.push(format!("tool calls {n}: {total} ms"));
    }
    let (n, total) = ms(&mut of(MetricKind::Hook));
    if n > 0 {
        out.push(format!("hooks {n}: {total} ms"));
    }
    let (n, total) = ms(&mut of(MetricKind::ReviewerCall));
    if n > 0 {
        out.push(format!("reviewer calls {n}: {total} ms"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_hooks_and_metrics_read_as_words() {
        let rule = DecisionRow {
            decision: Some("allow".into()),
            decider_kind: Some("rule".into()),
            decider: Some("Bash(ls:*)".into()),
            ..DecisionRow::default()
        };
        let callback = DecisionRow {
            decision: Some("deny".into()),
            decider_kind: Some("callback".into()),
            ..DecisionRow::default()
        };
        assert_eq!(decision_text(&rule), "allow (rule Bash(ls:*))");
        assert_eq!(decision_text(&callback), "deny (callback)");
        assert_eq!(
            decision_counts(&[rule.clone(), callback, rule]),
            "3 (callback 1, rule 2)"
        );
        let hook = HookRunRow {
            event: Some("PreToolUse".into()),
            hook: Some("./check.sh".into()),
            outcome: Some("blocked".into()),
            exit_code: Some(2),
            duration_ms: Some(12),
            ..HookRunRow::default()
        };
        assert_eq!(
            hook_text(&hook),
            "PreToolUse ./check.sh blocked (exit 2, 12 ms)"
        );
        let metric = |kind: MetricKind, ms: i64| MetricRow {
            kind: kind.as_str().into(),
            duration_ms: Some(ms),
            input_tokens: Some(10),
            output_tokens: Some(2),
            cost_usd: Some(0.5),
            ..MetricRow::default()
        };
        assert_eq!(
            metric_lines(&[
                metric(MetricKind::ModelCall, 100),
                metric(MetricKind::ModelCall, 50),
                metric(MetricKind::ToolCall, 7),
                metric(MetricKind::SessionEnd, 0),
            ]),
            [
                "model calls 2: 20 in / 4 out tokens (0 cache read), $1.0000, 150 ms",
                "tool calls 1: 7 ms"
            ]
        );
    }
}
