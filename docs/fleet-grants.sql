-- Recommended grants for the role Tascer runs as on a shared PostgreSQL
-- store (docs/fleet.md, "Shared store"). Replace tascer_app with the
-- runtime role and tascer_db with the database.
--
-- The tables belong to an owner role: run any tascer command once as the
-- owner (TASCER_STORE=postgres://tascer_owner@…) to create them; later
-- releases' migrations are applied the same way. The runtime role can
-- record sessions and read them, and cannot rewrite what was recorded:
-- no UPDATE, DELETE or TRUNCATE on ledger entries, evidence or messages
-- (and, not owning the tables, it cannot disable their append-only
-- triggers either).

GRANT CONNECT ON DATABASE tascer_db TO tascer_app;
GRANT USAGE ON SCHEMA public TO tascer_app;

-- The schema version, checked when a store is opened.
GRANT SELECT ON tascer_schema_migrations TO tascer_app;

-- The record: appended and read, never changed.
GRANT SELECT, INSERT ON ledger_entries, ledger_evidence, messages, metrics, file_changes
    TO tascer_app;

-- Rewritten as a session goes on: its row (totals, status), the signed
-- head of its ledger, and the query tables derived from the entries.
GRANT SELECT, INSERT, UPDATE ON sessions, ledger_heads, tool_calls,
    permission_decisions, hook_executions TO tascer_app;
