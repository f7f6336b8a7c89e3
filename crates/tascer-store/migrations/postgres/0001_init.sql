-- Tascer's shared store, version 1: the same tables as the SQLite store
-- (crates/tascer-store/src/schema.rs), with the same text in the same
-- columns, so a ledger verifies from the same canonical bytes.

CREATE TABLE sessions (
    id             TEXT PRIMARY KEY,
    -- Insertion order, the tie-break of listings (SQLite's rowid).
    row_no         BIGINT GENERATED ALWAYS AS IDENTITY,
    cwd            TEXT NOT NULL,
    model          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    forked_from    TEXT,
    num_turns      BIGINT NOT NULL DEFAULT 0,
    total_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    status         TEXT NOT NULL DEFAULT 'open',
    first_prompt   TEXT
);
CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at);
CREATE INDEX sessions_by_update ON sessions (updated_at);

CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq        BIGINT NOT NULL,
    uuid       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE ledger_entries (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    ts         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE ledger_heads (
    session_id TEXT PRIMARY KEY,
    seq        BIGINT NOT NULL,
    hash       TEXT NOT NULL,
    signature  TEXT,
    key_id     TEXT,
    signed_at  TEXT
);

CREATE TABLE tool_calls (
    session_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    -- Seq of the entry that opened the call: the listing order.
    opened_seq  BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    tool        TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    proof_hash  TEXT,
    record      TEXT NOT NULL,
    PRIMARY KEY (session_id, tool_use_id)
);

CREATE TABLE permission_decisions (
    session_id  TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    tool_use_id TEXT,
    decision    TEXT,
    data        TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE hook_executions (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    event      TEXT,
    data       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE metrics (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      DOUBLE PRECISION,
    data       TEXT,
    ts         TEXT NOT NULL
);
CREATE INDEX metrics_by_session ON metrics (session_id, name);

-- All of a session's evidence, whatever its size: a session is complete
-- in the shared store.
CREATE TABLE ledger_evidence (
    session_id TEXT NOT NULL,
    digest     TEXT NOT NULL,
    bytes      BYTEA NOT NULL,
    PRIMARY KEY (session_id, digest)
);

-- Append-only: Tascer never updates or deletes a ledger entry, an
-- evidence blob or a message. These triggers refuse it from anyone (the
-- grants in docs/fleet.md keep a runtime role from trying); an owner who
-- must remove data (retention) disables them explicitly, and `tascer
-- verify` shows whatever was changed.
CREATE FUNCTION tascer_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'tascer: % on % refused: the table is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Tascer never changes recorded rows; see docs/fleet.md (Shared store).';
END
$$;

CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION tascer_refuse_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION tascer_refuse_change();
CREATE TRIGGER ledger_evidence_append_only BEFORE UPDATE OR DELETE ON ledger_evidence
    FOR EACH ROW EXECUTE FUNCTION tascer_refuse_change();
CREATE TRIGGER ledger_evidence_no_truncate BEFORE TRUNCATE ON ledger_evidence
    FOR EACH STATEMENT EXECUTE FUNCTION tascer_refuse_change();
CREATE TRIGGER messages_append_only BEFORE UPDATE OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION tascer_refuse_change();
CREATE TRIGGER messages_no_truncate BEFORE TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION tascer_refuse_change();
