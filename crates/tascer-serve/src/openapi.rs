//! The API's OpenAPI 3.1 document, served at `/api/openapi.json` and
//! committed as `docs/openapi.json` (a test keeps the two identical).

use serde_json::{Value, json};

/// A `$ref` to a schema of `components.schemas`.
fn schema(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A 200 answer whose JSON body is `body`.
fn ok_json(description: &str, body: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": body}}})
}

/// The error answers every API route may give, and `extra` ones.
fn responses(ok: Value, extra: &[(&str, &str)]) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("200".into(), ok);
    let error = |what: &str| {
        json!({"description": what,
               "content": {"application/json": {"schema": schema("Error")}}})
    };
    map.insert("401".into(), error("No or wrong access token."));
    map.insert(
        "403".into(),
        error("The Host header names a host that is not a loopback name."),
    );
    for (code, what) in extra {
        map.insert((*code).into(), error(what));
    }
    map.insert(
        "500".into(),
        error("The store or the ledger could not be read."),
    );
    Value::Object(map)
}

/// A query parameter.
fn query(name: &str, description: &str, ty: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": ty})
}

/// The `{id}` path parameter.
fn id_param() -> Value {
    json!({"name": "id", "in": "path", "required": true,
           "description": "The session id.", "schema": {"type": "string"}})
}

fn sessions_path() -> Value {
    json!({"get": {
        "operationId": "listSessions",
        "summary": "The stored sessions, most recently updated first: searched, filtered, paged.",
        "parameters": [
            query("q", "Words that must all appear (any case) in the id, title, first prompt, working directory or model.", json!({"type": "string"})),
            query("status", "The status: open, success, error, …", json!({"type": "string"})),
            query("model", "The model, exactly.", json!({"type": "string"})),
            query("since", "Created at or after: an RFC 3339 time, a date (UTC) or a span back from now (90s, 30m, 12h, 7d).", json!({"type": "string"})),
            query("until", "Created before: an RFC 3339 time or a date (UTC).", json!({"type": "string"})),
            query("offset", "Sessions to skip.", json!({"type": "integer", "minimum": 0})),
            query("limit", "Sessions to return (default 50).", json!({"type": "integer", "minimum": 1, "maximum": 500}))
        ],
        "responses": responses(ok_json("One page of sessions.", schema("SessionPage")),
                               &[("400", "A parameter is not understood.")])
    }})
}

fn session_paths() -> Vec<(&'static str, Value)> {
    vec![
        (
            "/api/sessions/{id}",
            json!({"get": {
                "operationId": "getSession",
                "summary": "One session as a timeline: messages, and each tool call with its decision (and who made it), gates, hooks, reviewer verdicts, timing and evidence (diffs).",
                "parameters": [id_param()],
                "responses": responses(ok_json("The timeline.", schema("Timeline")),
                                       &[("404", "No such session.")])
            }}),
        ),
        (
            "/api/sessions/{id}/verify",
            json!({"get": {
                "operationId": "verifySession",
                "summary": "The session's ledger verified as `tascer verify` does it: hashes, chain, evidence, head signature (with the home's key), child sessions.",
                "parameters": [id_param()],
                "responses": responses(ok_json("The verification; `ok` is false for a broken ledger, and `report.first_broken` names the first broken entry.", schema("Verification")),
                                       &[("404", "The session has no ledger entries.")])
            }}),
        ),
        (
            "/api/sessions/{id}/attestation",
            json!({"get": {
                "operationId": "getAttestation",
                "summary": "The session's attestation, as `tascer export --attestation` writes it: an in-toto Statement in a DSSE envelope, signed with the home's key, one JSON line.",
                "parameters": [id_param()],
                "responses": responses(
                    json!({"description": "The DSSE envelope (sent as an attachment named SESSION.intoto.jsonl).",
                           "content": {"application/json": {"schema": schema("Envelope")}}}),
                    &[("404", "The session has no ledger entries."),
                      ("409", "The home has no signing key, or the ledger is broken (a broken ledger is never attested).")])
            }}),
        ),
    ]
}

fn other_paths() -> Vec<(&'static str, Value)> {
    vec![
        (
            "/api/live",
            json!({"get": {
                "operationId": "liveSessions",
                "summary": "The sessions still open (running, or stopped without closing); the page polls it.",
                "responses": responses(ok_json("The open sessions.", json!({
                    "type": "object", "required": ["now", "sessions"],
                    "properties": {"now": {"type": "string", "format": "date-time"},
                                   "sessions": {"type": "array", "items": schema("Session")}}})), &[])
            }}),
        ),
        (
            "/api/contracts",
            json!({"get": {
                "operationId": "contracts",
                "summary": "The contracts directory's contracts with their status and, with a queue configured, the queue's jobs and the workers holding them.",
                "responses": responses(ok_json("The contracts.", schema("Contracts")), &[])
            }}),
        ),
        (
            "/api/openapi.json",
            json!({"get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": responses(ok_json("The OpenAPI 3.1 document.", json!({"type": "object"})), &[])
            }}),
        ),
    ]
}

fn object(required: &[&str], properties: Value) -> Value {
    json!({"type": "object", "required": required, "properties": properties})
}

fn schemas() -> Value {
    let text = json!({"type": "string"});
    let opt_text = json!({"type": ["string", "null"]});
    json!({
        "Error": object(&["error"], json!({"error": text})),
        "Session": object(&["id", "cwd", "model", "created_at", "updated_at", "num_turns", "total_cost_usd", "status", "message_count"], json!({
            "id": text, "cwd": text, "model": text,
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"},
            "forked_from": opt_text, "num_turns": {"type": "integer"},
            "total_cost_usd": {"type": "number"}, "status": text,
            "first_prompt": opt_text, "title": opt_text, "message_count": {"type": "integer"}})),
        "SessionPage": object(&["total", "offset", "limit", "sessions"], json!({
            "total": {"type": "integer"}, "offset": {"type": "integer"}, "limit": {"type": "integer"},
            "sessions": {"type": "array", "items": schema("Session")}})),
        "Decision": object(&["session_id", "seq", "ts"], json!({
            "session_id": text, "seq": {"type": "integer"}, "ts": text,
            "tool_use_id": opt_text, "tool": opt_text,
            "decision": {"description": "allow, deny or ask", "type": ["string", "null"]},
            "decider_kind": {"description": "rule, policy, mode, hook, callback, reviewer, user, cache, workaround, default", "type": ["string", "null"]},
            "decider": opt_text, "reason": opt_text, "mode": opt_text, "input_digest": opt_text,
            "data": {"description": "The decision's payload (canonical JSON text).", "type": "string"}})),
        "Call": object(&["tool_use_id", "tool", "input", "status", "started_at", "pre_gates", "post_gates", "hooks", "reviews", "evidence", "entry_hash", "proof_valid"], json!({
            "tool_use_id": text, "tool": text, "input": {},
            "status": {"description": "pending, validated, failed, blocked, …", "type": "string"},
            "started_at": text, "finished_at": opt_text,
            "duration_ms": {"type": ["integer", "null"]},
            "decision": {"oneOf": [schema("Decision"), {"type": "null"}]},
            "pre_gates": {"type": "array", "items": {"type": "object"}},
            "post_gates": {"type": "array", "items": {"type": "object"}},
            "hooks": {"type": "array", "items": {"type": "object"}},
            "reviews": {"type": "array", "items": {"type": "object"}},
            "output": {},
            "evidence": {"type": "array", "items": object(&["kind", "digest", "truncated"], json!({
                "kind": {"description": "diff, stdout, stderr or file", "type": "string"},
                "digest": text, "text": opt_text, "truncated": {"type": "boolean"}, "error": opt_text}))},
            "entry_hash": text, "proof_valid": {"type": "boolean"}})),
        "Timeline": object(&["session", "messages", "calls", "reviews", "session_hooks", "metrics"], json!({
            "session": schema("Session"),
            "messages": {"description": "The session's messages in Claude Code's stream-json shape.", "type": "array", "items": {"type": "object"}},
            "ledger": {"oneOf": [{"type": "null"}, object(&["entries"], json!({
                "entries": {"type": "integer"}, "started_at": opt_text, "ended_at": opt_text,
                "status": opt_text, "cost_usd": {"type": ["number", "null"]}, "head": opt_text,
                "tool_status_counts": {"type": "object", "additionalProperties": {"type": "integer"}}}))]},
            "calls": {"type": "array", "items": schema("Call")},
            "reviews": {"type": "array", "items": {"type": "object"}},
            "session_hooks": {"type": "array", "items": {"type": "object"}},
            "metrics": {"type": "array", "items": {"type": "object"}}})),
        "Verification": object(&["session_id", "ok", "lines"], json!({
            "session_id": text, "ok": {"type": "boolean"},
            "report": {"description": "As `tascer verify --json` prints it: ok, entries_checked, first_broken {seq, reason, …}, signed, warnings, children.", "type": ["object", "null"]},
            "lines": {"description": "The lines `tascer verify` prints.", "type": "array", "items": text}})),
        "Envelope": object(&["payloadType", "payload", "signatures"], json!({
            "payloadType": {"const": "application/vnd.in-toto+json"},
            "payload": {"description": "The in-toto Statement, base64.", "type": "string"},
            "signatures": {"type": "array", "items": object(&["keyid", "sig"], json!({"keyid": text, "sig": text}))}})),
        "Contracts": object(&["dir", "completed_dir", "contracts"], json!({
            "dir": text, "completed_dir": text,
            "contracts": {"type": "array", "items": object(&["name", "title", "status", "path"], json!({
                "name": text, "title": text,
                "status": {"description": "pending, in_progress, completed, failed or malformed", "type": "string"},
                "path": text, "error": opt_text, "session": opt_text, "outcome": opt_text}))},
            "queue": {"oneOf": [{"type": "null"}, object(&["name", "server", "jobs", "workers"], json!({
                "name": text, "server": text,
                "jobs": {"description": "As `tascer contracts status --queue --json` prints them.", "type": "array", "items": {"type": "object"}},
                "workers": {"type": "array", "items": object(&["holder", "host", "pid", "job", "contract", "expires_at"], json!({
                    "holder": text, "host": text, "pid": {"type": "integer"}, "job": {"type": "integer"},
                    "contract": text, "expires_at": text, "heartbeat_at": opt_text}))}}))]}}))
    })
}

/// The document.
pub fn document() -> Value {
    let mut paths = serde_json::Map::new();
    paths.insert("/api/sessions".into(), sessions_path());
    for (path, item) in session_paths().into_iter().chain(other_paths()) {
        paths.insert(path.into(), item);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Tascer viewer API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The read-only API of `tascer serve` over a Tascer home's store (docs/viewer.md). Every request needs `Authorization: Bearer <token>` (the token `tascer serve` prints) and a Host header naming localhost, 127.0.0.1 or [::1]."
        },
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "8421"}}}],
        "security": [{"token": []}],
        "paths": Value::Object(paths),
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas()
        }
    })
}
