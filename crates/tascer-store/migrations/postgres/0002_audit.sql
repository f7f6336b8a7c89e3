-- Tascer's shared store, version 2: the audit tables get typed, indexed
-- columns (the same as the SQLite store's: crates/tascer-store/src/schema.rs;
-- docs/audit.md describes them). Rows written before are filled from their
-- payload (`data`) and their ledger entry's time.

ALTER TABLE permission_decisions
    ADD COLUMN ts           TEXT,
    ADD COLUMN tool         TEXT,
    ADD COLUMN decider_kind TEXT,
    ADD COLUMN decider      TEXT,
    ADD COLUMN reason       TEXT,
    ADD COLUMN mode         TEXT,
    ADD COLUMN input_digest TEXT;

ALTER TABLE hook_executions
    ADD COLUMN ts          TEXT,
    ADD COLUMN tool_use_id TEXT,
    ADD COLUMN matcher     TEXT,
    ADD COLUMN hook        TEXT,
    ADD COLUMN hook_kind   TEXT,
    ADD COLUMN outcome     TEXT,
    ADD COLUMN exit_code   BIGINT,
    ADD COLUMN duration_ms BIGINT,
    ADD COLUMN error       TEXT;

ALTER TABLE metrics
    ADD COLUMN kind                  TEXT,
    ADD COLUMN seq                   BIGINT,
    ADD COLUMN tool_use_id           TEXT,
    ADD COLUMN duration_ms           BIGINT,
    ADD COLUMN input_tokens          BIGINT,
    ADD COLUMN output_tokens         BIGINT,
    ADD COLUMN cache_read_tokens     BIGINT,
    ADD COLUMN cache_creation_tokens BIGINT,
    ADD COLUMN cost_usd              DOUBLE PRECISION;

-- Payloads are canonical JSON written by Tascer; one that does not parse is
-- left with empty columns rather than failing the migration.
CREATE FUNCTION tascer_json_or_null(text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN $1::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$;

UPDATE permission_decisions p SET ts = e.ts
    FROM ledger_entries e WHERE e.session_id = p.session_id AND e.seq = p.seq;
UPDATE permission_decisions SET
        tool = j ->> 'tool',
        decision = COALESCE(decision, j ->> 'behavior'),
        decider_kind = j -> 'decided_by' ->> 'type',
        decider = COALESCE(j -> 'decided_by' ->> 'rule', j -> 'decided_by' ->> 'name',
                           j -> 'decided_by' ->> 'mode'),
        reason = j ->> 'reason',
        mode = j ->> 'mode',
        input_digest = j ->> 'input_digest'
    FROM (SELECT session_id AS sid, seq AS sq, tascer_json_or_null(data) AS j
          FROM permission_decisions) parsed
    WHERE parsed.sid = session_id AND parsed.sq = seq AND parsed.j IS NOT NULL;

UPDATE hook_executions h SET ts = e.ts
    FROM ledger_entries e WHERE e.session_id = h.session_id AND e.seq = h.seq;
UPDATE hook_executions SET
        tool_use_id = j ->> 'tool_use_id',
        matcher = j ->> 'matcher',
        hook = j ->> 'hook_name',
        hook_kind = j ->> 'kind',
        outcome = j ->> 'outcome',
        exit_code = (j ->> 'exit_code')::bigint,
        duration_ms = (j ->> 'duration_ms')::bigint,
        error = j ->> 'error'
    FROM (SELECT session_id AS sid, seq AS sq, tascer_json_or_null(data) AS j
          FROM hook_executions) parsed
    WHERE parsed.sid = session_id AND parsed.sq = seq AND parsed.j IS NOT NULL;

UPDATE metrics SET kind = name;
UPDATE metrics SET cost_usd = value,
        input_tokens = (j -> 'usage' ->> 'input_tokens')::bigint,
        output_tokens = (j -> 'usage' ->> 'output_tokens')::bigint,
        cache_read_tokens = (j -> 'usage' ->> 'cache_read_input_tokens')::bigint,
        cache_creation_tokens = (j -> 'usage' ->> 'cache_creation_input_tokens')::bigint
    FROM (SELECT id AS mid, tascer_json_or_null(data) AS j FROM metrics) parsed
    WHERE parsed.mid = id AND kind = 'session_end' AND parsed.j IS NOT NULL;

DROP FUNCTION tascer_json_or_null(text);

CREATE INDEX permission_decisions_by_ts ON permission_decisions (ts);
CREATE INDEX permission_decisions_by_call ON permission_decisions (session_id, tool_use_id);
CREATE INDEX permission_decisions_by_tool ON permission_decisions (tool, ts);
CREATE INDEX permission_decisions_by_decider ON permission_decisions (decider_kind, ts);
CREATE INDEX permission_decisions_by_decision ON permission_decisions (decision, ts);
CREATE INDEX hook_executions_by_call ON hook_executions (session_id, tool_use_id);
CREATE INDEX hook_executions_by_event ON hook_executions (event, ts);
CREATE INDEX metrics_by_call ON metrics (session_id, tool_use_id);
CREATE INDEX metrics_by_kind ON metrics (kind, ts);
