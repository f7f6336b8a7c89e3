-- Tascer's shared store, version 3: session titles (`tascer sessions
-- rename`), file checkpoints (`rewind_files`, kept only when file
-- checkpointing is on), and deleting one session (`tascer sessions
-- delete`). The SQLite store's tables are the same
-- (crates/tascer-store/src/schema.rs).

ALTER TABLE sessions ADD COLUMN title TEXT;

CREATE TABLE file_changes (
    session_id   TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    prompt_uuid  TEXT NOT NULL,
    path         TEXT NOT NULL,
    existed      BOOLEAN NOT NULL,
    before       BYTEA,
    after_sha256 TEXT,
    tool_use_id  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- The append-only triggers still refuse every UPDATE and TRUNCATE, and
-- every DELETE but one: the rows of the one session a transaction names
-- in `tascer.delete_session` (set locally by `tascer sessions delete`).
-- A role needs the DELETE privilege for that too, which the recommended
-- grants (docs/fleet-grants.sql) do not give the runtime role.
CREATE OR REPLACE FUNCTION tascer_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE'
        AND OLD.session_id = current_setting('tascer.delete_session', true) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'tascer: % on % refused: the table is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Tascer never changes recorded rows; see docs/fleet.md (Shared store).';
END
$$;
