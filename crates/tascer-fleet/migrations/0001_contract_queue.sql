-- The contract queue: one row per enqueued contract, one row per attempt.
-- Lease times come from the database's clock (now()), so hosts whose
-- clocks disagree still agree on when a lease has expired.
CREATE TABLE tascer_contract_jobs (
    id               BIGSERIAL PRIMARY KEY,
    queue            TEXT NOT NULL,
    name             TEXT NOT NULL,
    title            TEXT NOT NULL,
    contract_path    TEXT NOT NULL,
    contract         TEXT NOT NULL,
    content_sha256   TEXT NOT NULL,
    repo             TEXT NOT NULL,
    base_commit      TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'completed', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL CHECK (max_attempts >= 1),
    lease_holder     TEXT,
    lease_host       TEXT,
    lease_pid        INTEGER,
    lease_expires_at TIMESTAMPTZ,
    heartbeat_at     TIMESTAMPTZ,
    why              TEXT,
    session_id       TEXT,
    ledger_head      TEXT,
    branch           TEXT,
    commit_id        TEXT,
    archive_url      TEXT,
    result           JSONB,
    result_contract  TEXT,
    enqueued_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at       TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ,
    -- The same contract text is enqueued once per queue.
    UNIQUE (queue, contract_path, content_sha256)
);

CREATE INDEX tascer_contract_jobs_claim ON tascer_contract_jobs (queue, status, id);

CREATE TABLE tascer_contract_attempts (
    job_id     BIGINT NOT NULL REFERENCES tascer_contract_jobs (id),
    attempt    INTEGER NOT NULL,
    holder     TEXT NOT NULL,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended_at   TIMESTAMPTZ,
    -- NULL while running; `lost`: its lease expired (the worker stopped);
    -- `discarded`: the worker finished after losing its lease, its result
    -- was refused; `requeued`: it could not start (e.g. no checkout).
    outcome    TEXT CHECK (outcome IN ('completed', 'failed', 'lost', 'discarded', 'requeued')),
    why        TEXT,
    session_id TEXT,
    branch     TEXT,
    PRIMARY KEY (job_id, attempt)
);
