//! The audit tables (docs/audit.md) on both store backends, as the backend
//! suite runs them: the SQLite file and a real PostgreSQL server
//! (`tascer_testkit::postgres::PgServer`; `NAME::postgres` prints
//! `SKIPPED` without one). Decisions, hook runs and metrics projected from
//! ledger entries, queried across sessions with filters; and stores made
//! before the audit columns, migrated with their rows filled in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::under::Under;
use serde_json::json;
use tascer_ledger::{EntryKind, Ledger, SessionStart, ToolRecord, ToolStatus};
use tascer_store::DecisionFilter;

both!(
    decisions_hook_runs_and_metrics_are_typed_and_queryable,
    a_store_made_before_the_audit_columns_is_migrated_with_its_rows_filled,
);

fn start(ledger: &Ledger, session: &str) {
    ledger
        .start_session(
            session,
            &SessionStart {
                model: "claude-test".into(),
                options_digest: tascer_ledger::sha256_ref(b"{}"),
                system_prompt_digest: tascer_ledger::sha256_ref(b"s"),
                signing_key_id: None,
                context: json!({}),
            },
        )
        .unwrap();
}

fn decision(ledger: &Ledger, session: &str, id: &str, tool: &str, behavior: &str, by: &str) {
    let decided_by = match by {
        "rule" => json!({"type": "rule", "rule": format!("{tool}(ls:*)")}),
        "hook" => json!({"type": "hook", "name": "./deny.sh"}),
        "policy" => json!({"type": "policy", "name": "file_access"}),
        "mode" => json!({"type": "mode", "mode": "bypassPermissions"}),
        other => json!({"type": other}),
    };
    let input = json!({"id": id});
    ledger
        .append(
            session,
            EntryKind::PermissionDecision,
            json!({"behavior": behavior, "decided_by": decided_by, "reason": format!("{by} said so"),
                   "tool": tool, "tool_use_id": id, "mode": "default",
                   "input_digest": tascer_ledger::input_digest(&input)}),
        )
        .unwrap();
}

fn decisions_hook_runs_and_metrics_are_typed_and_queryable(under: Under) {
    let ledger = under.ledger(None);
    start(&ledger, "a");
    decision(&ledger, "a", "t1", "Bash", "allow", "rule");
    decision(&ledger, "a", "t2", "Write", "deny", "hook");
    decision(&ledger, "a", "t3", "Read", "allow", "callback");
    decision(&ledger, "a", "t4", "Read", "deny", "policy");
    ledger
        .append(
            "a",
            EntryKind::HookExecution,
            json!({"hook_name": "./deny.sh", "event": "PreToolUse", "matcher": "Write",
                   "kind": "command", "outcome": "blocked", "exit_code": 2, "duration_ms": 15,
                   "error": null, "tool_use_id": "t2"}),
        )
        .unwrap();
    ledger
        .append(
            "a",
            EntryKind::ModelResponse,
            json!({"content_digest": tascer_ledger::sha256_ref(b"x"), "model": "claude-test",
                   "usage": {"input_tokens": 100, "output_tokens": 20,
                             "cache_read_input_tokens": 5},
                   "duration_ms": 340, "cost_usd": 0.002}),
        )
        .unwrap();
    let mut record = ToolRecord::open(
        "t1",
        "Bash",
        json!({"command": "ls"}),
        "2026-01-01T00:00:00.000Z",
    );
    ledger.open_tool_call("a", &record).unwrap();
    record.finished_at = Some("2026-01-01T00:00:00.420Z".into());
    record.status = ToolStatus::Validated;
    ledger.close_tool_call("a", &mut record).unwrap();
    start(&ledger, "b");
    decision(&ledger, "b", "u1", "Bash", "allow", "mode");

    // Another process reads.
    let store = under.ledger(None);
    let store = store.store();
    let all = store.decisions(&DecisionFilter::default()).unwrap();
    assert_eq!(all.len(), 5, "{all:#?}");
    assert!(all.windows(2).all(|w| w[0].ts <= w[1].ts), "oldest first");
    let query = |filter: DecisionFilter| -> Vec<(String, String)> {
        store
            .decisions(&filter)
            .unwrap()
            .into_iter()
            .map(|d| (d.session_id, d.tool_use_id.unwrap()))
            .collect()
    };
    let pair = |s: &str, t: &str| (s.to_string(), t.to_string());
    let session = |s: &str| Some(s.to_string());
    assert_eq!(
        query(DecisionFilter {
            session: session("a"),
            ..Default::default()
        }),
        [
            pair("a", "t1"),
            pair("a", "t2"),
            pair("a", "t3"),
            pair("a", "t4")
        ]
    );
    assert_eq!(
        query(DecisionFilter {
            tool: session("Read"),
            decision: session("deny"),
            ..Default::default()
        }),
        [pair("a", "t4")]
    );
    assert_eq!(
        query(DecisionFilter {
            decider: session("Bash(ls:*)"),
            ..Default::default()
        }),
        [pair("a", "t1")]
    );
    assert_eq!(
        query(DecisionFilter {
            decider: session("mode"),
            ..Default::default()
        }),
        [pair("b", "u1")]
    );
    assert_eq!(
        query(DecisionFilter {
            session: session("a"),
            limit: Some(2),
            ..Default::default()
        }),
        [pair("a", "t3"), pair("a", "t4")],
        "the most recent, in time order"
    );
    assert!(
        query(DecisionFilter {
            since: session("2999-01-01"),
            ..Default::default()
        })
        .is_empty()
    );
    let hook = all.iter().find(|d| d.tool_use_id.as_deref() == Some("t2"));
    let hook = hook.unwrap();
    assert_eq!(
        (
            hook.decision.as_deref(),
            hook.decider_kind.as_deref(),
            hook.decider.as_deref(),
            hook.reason.as_deref(),
            hook.mode.as_deref()
        ),
        (
            Some("deny"),
            Some("hook"),
            Some("./deny.sh"),
            Some("hook said so"),
            Some("default")
        )
    );
    assert_eq!(
        hook.input_digest.as_deref(),
        Some(tascer_ledger::input_digest(&json!({"id": "t2"})).as_str())
    );
    assert!(hook.ts.starts_with("20") && hook.seq == 3, "{hook:?}");

    let runs = store.hook_runs("a").unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        (
            run.event.as_deref(),
            run.matcher.as_deref(),
            run.hook.as_deref(),
            run.hook_kind.as_deref(),
            run.outcome.as_deref(),
            run.exit_code,
            run.duration_ms,
            run.tool_use_id.as_deref()
        ),
        (
            Some("PreToolUse"),
            Some("Write"),
            Some("./deny.sh"),
            Some("command"),
            Some("blocked"),
            Some(2),
            Some(15),
            Some("t2")
        )
    );
    assert!(store.hook_runs("b").unwrap().is_empty());

    let metrics = store.metrics("a").unwrap();
    let kinds: Vec<(&str, &str, Option<i64>)> = metrics
        .iter()
        .map(|m| (m.kind.as_str(), m.name.as_str(), m.duration_ms))
        .collect();
    assert_eq!(
        kinds,
        [
            ("hook", "./deny.sh", Some(15)),
            ("model_call", "claude-test", Some(340)),
            ("tool_call", "Bash", Some(420)),
        ]
    );
    let model = &metrics[1];
    assert_eq!(
        (
            model.input_tokens,
            model.output_tokens,
            model.cache_read_tokens,
            model.cost_usd
        ),
        (Some(100), Some(20), Some(5), Some(0.002))
    );
    assert_eq!(metrics[2].tool_use_id.as_deref(), Some("t1"));
}

/// The permission decision, hook run and metric rows of a store made by a
/// build before the audit columns, as that build wrote them.
const OLD_DECISION: &str = r#"{"behavior":"deny","decided_by":{"name":"file_access","type":"policy"},"mode":"default","reason":"outside the workspace","tool":"Read","tool_use_id":"t9"}"#;
const OLD_HOOK: &str = r#"{"duration_ms":7,"event":"PostToolUse","exit_code":0,"hook_name":"./log.sh","kind":"command","matcher":null,"outcome":"success","tool_use_id":"t9"}"#;
const OLD_END: &str =
    r#"{"cost_usd":0.5,"status":"success","usage":{"input_tokens":9,"output_tokens":3}}"#;

fn a_store_made_before_the_audit_columns_is_migrated_with_its_rows_filled(under: Under) {
    let old_rows = format!(
        "INSERT INTO ledger_entries VALUES ('old', 1, '2025-05-05T00:00:00.000Z', 'x', '{{}}', '0', 'h1');
         INSERT INTO ledger_entries VALUES ('old', 2, '2025-05-05T00:00:01.000Z', 'x', '{{}}', 'h1', 'h2');
         INSERT INTO permission_decisions (session_id, seq, tool_use_id, decision, data)
             VALUES ('old', 1, 't9', 'deny', '{OLD_DECISION}');
         INSERT INTO hook_executions (session_id, seq, event, data)
             VALUES ('old', 2, 'PostToolUse', '{OLD_HOOK}');
         INSERT INTO metrics (session_id, name, value, data, ts)
             VALUES ('old', 'session_end', 0.5, '{OLD_END}', '2025-05-05T00:00:02.000Z');"
    );
    match &under.pg {
        None => {
            let conn = rusqlite::Connection::open(&under.target).unwrap();
            conn.execute_batch(&format!("{OLD_SQLITE_SCHEMA}{old_rows}"))
                .unwrap();
        }
        Some((server, db)) => {
            let init = tascer_store::postgres::migrate::MIGRATIONS[0];
            server.psql(db, init.sql).unwrap();
            server
                .psql(
                    db,
                    &format!(
                        "CREATE TABLE tascer_schema_migrations (version INTEGER PRIMARY KEY,
                             name TEXT NOT NULL, checksum TEXT NOT NULL,
                             applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
                         INSERT INTO tascer_schema_migrations (version, name, checksum)
                             VALUES (1, 'init', '{}');
                         INSERT INTO sessions (id, cwd, model, created_at, updated_at)
                             VALUES ('old', '/w', 'm', 'x', 'x');
                         {}",
                        init.checksum(),
                        old_rows.replace(
                            "INSERT INTO ledger_entries VALUES",
                            "INSERT INTO ledger_entries \
                             (session_id, seq, ts, kind, payload, prev_hash, hash) VALUES"
                        )
                    ),
                )
                .unwrap();
        }
    }
    let store = under.ledger(None);
    let store = store.store();
    let decisions = store
        .decisions(&DecisionFilter {
            decider: Some("file_access".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    let d = &decisions[0];
    assert_eq!(
        (
            d.ts.as_str(),
            d.tool.as_deref(),
            d.decision.as_deref(),
            d.decider_kind.as_deref(),
            d.reason.as_deref()
        ),
        (
            "2025-05-05T00:00:00.000Z",
            Some("Read"),
            Some("deny"),
            Some("policy"),
            Some("outside the workspace")
        )
    );
    let runs = store.hook_runs("old").unwrap();
    assert_eq!(
        (
            runs[0].ts.as_str(),
            runs[0].hook.as_deref(),
            runs[0].outcome.as_deref(),
            runs[0].duration_ms
        ),
        (
            "2025-05-05T00:00:01.000Z",
            Some("./log.sh"),
            Some("success"),
            Some(7)
        )
    );
    let metrics = store.metrics("old").unwrap();
    assert_eq!(
        (
            metrics[0].kind.as_str(),
            metrics[0].cost_usd,
            metrics[0].input_tokens
        ),
        ("session_end", Some(0.5), Some(9))
    );
    // Opening it again changes nothing.
    drop(under.open());
    assert_eq!(store.hook_runs("old").unwrap(), runs);
}

/// The three audit tables as a build before the audit columns made them
/// (SQLite), and the ledger table their rows refer to.
const OLD_SQLITE_SCHEMA: &str = "
CREATE TABLE ledger_entries (session_id TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL,
    kind TEXT NOT NULL, payload TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (session_id, seq));
CREATE TABLE permission_decisions (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
    tool_use_id TEXT, decision TEXT, data TEXT NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE hook_executions (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT,
    data TEXT NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE metrics (session_id TEXT NOT NULL, name TEXT NOT NULL, value REAL, data TEXT,
    ts TEXT NOT NULL);
CREATE INDEX metrics_by_session ON metrics (session_id, name);
";
