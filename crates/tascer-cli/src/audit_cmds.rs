//! `tascer audit query`: who allowed or denied what, when — the
//! `permission_decisions` audit table (docs/audit.md) across sessions,
//! as a table or JSON.

use std::process::ExitCode;

use serde_json::Value;
use tascer_ledger::audit::open_ledger;
use tascer_ledger::report_audit::decision_text;
use tascer_store::{DecisionFilter, DecisionRow, parse_since};

use crate::args::AuditQueryArgs;
use crate::table::table;

/// Longest reason shown in the table, in characters.
const REASON_CHARS: usize = 60;

/// `tascer audit query [--session S] [--tool T] [--decision D] [--decider
/// K] [--since TIME] [--limit N] [--json]`.
pub fn query(args: &AuditQueryArgs) -> anyhow::Result<ExitCode> {
    let since = args
        .since
        .as_deref()
        .map(|t| parse_since(t, chrono::Utc::now()))
        .transpose()?;
    let filter = DecisionFilter {
        session: args.session.clone(),
        tool: args.tool.clone(),
        decision: args.decision.map(|d| d.as_str().to_string()),
        decider: args.decider.clone(),
        since,
        limit: Some(args.limit),
    };
    let home = tascer::tascer_home();
    let ledger = open_ledger(&home)?;
    let rows = ledger.store().decisions(&filter)?;
    if args.json {
        let rows: Vec<Value> = rows.iter().map(as_json).collect::<Result<_, _>>()?;
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        outln!("no permission decisions recorded match");
        return Ok(ExitCode::SUCCESS);
    }
    let mut lines = vec![[
        "TIME".to_string(),
        "SESSION".into(),
        "TOOL".into(),
        "CALL".into(),
        "DECISION".into(),
        "REASON".into(),
    ]];
    lines.extend(rows.iter().map(|d| {
        [
            d.ts.get(..19).unwrap_or(&d.ts).replace('T', " "),
            d.session_id.clone(),
            d.tool.clone().unwrap_or_default(),
            d.tool_use_id.clone().unwrap_or_default(),
            decision_text(d),
            reason(d),
        ]
    }));
    let mut stdout = std::io::stdout().lock();
    std::io::Write::write_all(&mut stdout, table(&lines).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The first line of a decision's reason, cut to [`REASON_CHARS`].
fn reason(d: &DecisionRow) -> String {
    let first = d.reason.as_deref().unwrap_or_default().lines().next();
    let first = first.unwrap_or_default();
    match first.char_indices().nth(REASON_CHARS) {
        Some((i, _)) => format!("{}…", &first[..i]),
        None => first.to_string(),
    }
}

/// A decision as JSON, its payload (`data`) parsed.
fn as_json(d: &DecisionRow) -> serde_json::Result<Value> {
    let mut value = serde_json::to_value(d)?;
    let data = serde_json::from_str(&d.data).unwrap_or_else(|_| Value::String(d.data.clone()));
    value["data"] = data;
    Ok(value)
}
