//! The SQLite schema (connection settings: [`crate::db`]): the session
//! store's tables and the ledger's. The PostgreSQL schema is in
//! `migrations/postgres/`. A store made by a build before the audit
//! columns gets them from [`crate::sqlite_audit::migrate`].

/// The tables [`SCHEMA`] creates.
pub(crate) const TABLES: &[&str] = &[
    "sessions",
    "messages",
    "ledger_entries",
    "ledger_heads",
    "tool_calls",
    "permission_decisions",
    "hook_executions",
    "metrics",
    "ledger_evidence",
    "file_changes",
];

/// Creates the tables if they are missing.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS sessions (
            id             TEXT PRIMARY KEY,
            cwd            TEXT NOT NULL,
            model          TEXT NOT NULL,
            created_at     TEXT NOT NULL,
            updated_at     TEXT NOT NULL,
            forked_from    TEXT,
            num_turns      INTEGER NOT NULL DEFAULT 0,
            total_cost_usd REAL NOT NULL DEFAULT 0,
            status         TEXT NOT NULL DEFAULT 'open',
            first_prompt   TEXT,
            title          TEXT
        );
        CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at);
        CREATE TABLE IF NOT EXISTS messages (
            session_id TEXT NOT NULL REFERENCES sessions (id),
            seq        INTEGER NOT NULL,
            uuid       TEXT NOT NULL,
            kind       TEXT NOT NULL,
            data       TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
CREATE TABLE IF NOT EXISTS ledger_entries (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    ts         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS ledger_heads (
    session_id TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    signature  TEXT,
    key_id     TEXT,
    signed_at  TEXT
);
CREATE TABLE IF NOT EXISTS tool_calls (
    session_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    tool        TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    proof_hash  TEXT,
    record      TEXT NOT NULL,
    PRIMARY KEY (session_id, tool_use_id)
);
CREATE TABLE IF NOT EXISTS permission_decisions (
    session_id   TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    tool_use_id  TEXT,
    decision     TEXT,
    data         TEXT NOT NULL,
    ts           TEXT,
    tool         TEXT,
    decider_kind TEXT,
    decider      TEXT,
    reason       TEXT,
    mode         TEXT,
    input_digest TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS hook_executions (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    event       TEXT,
    data        TEXT NOT NULL,
    ts          TEXT,
    tool_use_id TEXT,
    matcher     TEXT,
    hook        TEXT,
    hook_kind   TEXT,
    outcome     TEXT,
    exit_code   INTEGER,
    duration_ms INTEGER,
    error       TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS metrics (
    session_id            TEXT NOT NULL,
    name                  TEXT NOT NULL,
    value                 REAL,
    data                  TEXT,
    ts                    TEXT NOT NULL,
    kind                  TEXT,
    seq                   INTEGER,
    tool_use_id           TEXT,
    duration_ms           INTEGER,
    input_tokens          INTEGER,
    output_tokens         INTEGER,
    cache_read_tokens     INTEGER,
    cache_creation_tokens INTEGER,
    cost_usd              REAL
);
CREATE INDEX IF NOT EXISTS metrics_by_session ON metrics (session_id, name);
CREATE TABLE IF NOT EXISTS ledger_evidence (
    session_id TEXT NOT NULL,
    digest     TEXT NOT NULL,
    bytes      BLOB NOT NULL,
    PRIMARY KEY (session_id, digest)
);
CREATE TABLE IF NOT EXISTS file_changes (
    session_id   TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    prompt_uuid  TEXT NOT NULL,
    path         TEXT NOT NULL,
    existed      INTEGER NOT NULL,
    before       BLOB,
    after_sha256 TEXT,
    tool_use_id  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);";
