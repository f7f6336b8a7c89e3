//! Writes a session's events to the tamper-evident ledger.
//!
//! Every event the design names goes in: session start (model, options
//! digest, system prompt digest, signing key id), each prompt, each model
//! response (digest + evidence), each tool call (opened before it runs,
//! closed after with its record), each hook run, and each turn's end.
//! A ledger write that fails (after the database's own waiting and
//! retries) is recorded in the session's [`WriteFailure`]: no tool runs
//! after it and the turn stops with an error naming the database.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tascer_core::{ContentBlock, ToolOutput, Usage};
use tascer_ledger::{
    EntryKind, Evidence, Ledger, LedgerError, ModelResponsePayload, SessionEnd, SessionStart,
    ToolRecord, ToolStatus, sha256_hex,
};
use tascer_store::AttachedMessage;

use crate::records::verdict_entries;
use crate::write_failure::WriteFailure;

/// The ledger of one session.
///
/// Writes are grouped to keep a governed call cheap (one SQLite
/// transaction costs more than all the hashing): evidence is staged when
/// its digest is taken ([`evidence`](Self::evidence)) and stored in the
/// same transaction as the entry that refers to it. The model response is
/// staged and written with its assistant message
/// ([`flush_with_message`](Self::flush_with_message)); `tool_call_opened`
/// and the permission decision are staged and committed together by
/// [`flush`](Self::flush), which the pipeline calls before a tool runs.
/// Every other entry is appended at once, with whatever is staged before
/// it, so the chain's order is the order of events.
#[derive(Clone)]
pub(crate) struct Proof {
    inner: Arc<Inner>,
}

/// What one session's [`Proof`]s share.
struct Inner {
    ledger: Arc<Ledger>,
    session_id: String,
    staged: Mutex<Staged>,
    failure: WriteFailure,
    /// Whether tool records are sealed with their proof hash.
    seal: AtomicBool,
}

/// Entries and evidence not yet written.
#[derive(Default)]
struct Staged {
    entries: Vec<(EntryKind, Value)>,
    evidence: Vec<Evidence>,
}

impl Inner {
    /// Writes everything staged, then `entry` if given, in one
    /// transaction. False when the write failed (the failure is recorded).
    fn commit(&self, entry: Option<(EntryKind, Value)>) -> bool {
        self.commit_hash(entry).is_some()
    }

    /// [`commit`](Self::commit), returning the hash of the last entry
    /// written (`Some("")` when there was nothing to write); `None` when
    /// the write failed.
    fn commit_hash(&self, entry: Option<(EntryKind, Value)>) -> Option<String> {
        self.commit_with(entry, None)
    }

    /// [`commit_hash`](Self::commit_hash) that also stores `message` in
    /// the same transaction, when given.
    fn commit_with(
        &self,
        entry: Option<(EntryKind, Value)>,
        message: Option<AttachedMessage<'_>>,
    ) -> Option<String> {
        let Staged {
            mut entries,
            evidence,
        } = std::mem::take(&mut *self.staged.lock());
        entries.extend(entry);
        if entries.is_empty() && evidence.is_empty() && message.is_none() {
            return Some(String::new());
        }
        let first = entries.first().map(|(kind, _)| *kind);
        let written = match message {
            Some(message) => {
                self.ledger
                    .append_batch_with_message(&self.session_id, entries, &evidence, message)
            }
            None => self
                .ledger
                .append_batch(&self.session_id, entries, &evidence),
        };
        match written {
            Ok(written) => Some(written.last().map(|e| e.hash.clone()).unwrap_or_default()),
            Err(err) => {
                let what = match (first, message) {
                    (Some(kind), Some(message)) => format!(
                        "the ledger entry {} and its {} message",
                        kind.as_str(),
                        message.row.kind
                    ),
                    (Some(kind), None) => format!("the ledger entry {}", kind.as_str()),
                    (None, Some(message)) => format!("a {} message", message.row.kind),
                    (None, None) => "ledger evidence".to_string(),
                };
                self.failure.record(
                    &self.session_id,
                    &what,
                    self.ledger.store().location(),
                    &err,
                );
                None
            }
        }
    }
}

impl Drop for Inner {
    /// Nothing staged is lost when the session goes away mid-call.
    fn drop(&mut self) {
        let _ = self.commit(None);
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Proof {
    /// The ledger of `session_id`; failed writes are recorded in
    /// `failure`.
    pub fn new(ledger: Arc<Ledger>, session_id: String, failure: WriteFailure) -> Self {
        Proof {
            inner: Arc::new(Inner {
                ledger,
                session_id,
                staged: Mutex::default(),
                failure,
                seal: AtomicBool::new(true),
            }),
        }
    }

    /// Turns the sealing of tool records with their proof hash on (the
    /// default) or off (validation `generate_proofs`).
    pub fn set_sealing(&self, on: bool) {
        self.inner.seal.store(on, Ordering::Relaxed);
    }

    /// True when tool records are sealed with their proof hash.
    pub fn seals(&self) -> bool {
        self.inner.seal.load(Ordering::Relaxed)
    }

    /// Where a failed write is recorded (the session's store writes record
    /// theirs there too).
    pub fn failure(&self) -> &WriteFailure {
        &self.inner.failure
    }

    /// The underlying ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.inner.ledger
    }

    fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    /// Appends an entry now, after everything staged.
    fn append(&self, kind: EntryKind, payload: Value) {
        let _ = self.inner.commit(Some((kind, payload)));
    }

    /// Stages an entry for the next write.
    fn stage(&self, kind: EntryKind, payload: Value) {
        self.inner.staged.lock().entries.push((kind, payload));
    }

    /// Appends a `checkpoint` naming a child session and its head (see
    /// [`tascer_ledger::child_link_payload`]).
    pub fn child_session(&self, payload: Value) {
        self.append(EntryKind::Checkpoint, payload);
    }

    /// Writes every staged entry (and its evidence) now. False when the
    /// write failed: the caller must not act as if it were recorded.
    #[must_use]
    pub fn flush(&self) -> bool {
        self.inner.commit(None)
    }

    /// Writes every staged entry (the model response, say) and, in the
    /// same transaction, stores `message` in the session store, which
    /// shares this ledger's backend: a process killed at any point leaves
    /// both or neither. False when the write failed (the failure is
    /// recorded).
    #[must_use]
    pub fn flush_with_message(&self, message: AttachedMessage<'_>) -> bool {
        self.inner.commit_with(None, Some(message)).is_some()
    }

    /// Stages bytes as evidence of the next entry written; returns their
    /// `sha256:` digest.
    pub fn evidence(&self, bytes: &[u8]) -> String {
        let evidence = Evidence::new(bytes.to_vec());
        let digest = evidence.digest().to_string();
        self.inner.staged.lock().evidence.push(evidence);
        digest
    }

    /// Appends `session_start` unless the chain already has entries (a
    /// resumed session continues its chain). An error means the session
    /// must not start.
    pub fn start(
        &self,
        model: &str,
        options: &Value,
        system_prompt: &str,
        context: Value,
    ) -> Result<(), LedgerError> {
        if self.ledger().head(self.session_id())?.is_some() {
            return Ok(());
        }
        let start = SessionStart {
            model: model.to_string(),
            options_digest: tascer_ledger::input_digest(options),
            system_prompt_digest: format!("sha256:{}", sha256_hex(system_prompt.as_bytes())),
            signing_key_id: None,
            context,
        };
        self.ledger().start_session(self.session_id(), &start)?;
        Ok(())
    }

    /// Appends a user prompt (its text is kept as evidence).
    pub fn prompt(&self, text: &str, parent_tool_use_id: Option<&str>) {
        let evidence = self.evidence(text.as_bytes());
        self.append(
            EntryKind::UserPrompt,
            json!({
                "text_digest": evidence,
                "evidence": [evidence],
                "parent_tool_use_id": parent_tool_use_id,
            }),
        );
    }

    /// Stages a model response: digest of its content (kept as evidence),
    /// usage, model, the Task call it belongs to for a subagent, how long
    /// the provider took and what the call cost (when known). It is
    /// written with the response's assistant message
    /// ([`flush_with_message`](Self::flush_with_message)).
    pub fn model_response(
        &self,
        model: &str,
        content: &[ContentBlock],
        usage: &Usage,
        parent_tool_use_id: Option<&str>,
        timing: (std::time::Duration, Option<f64>),
    ) {
        let mut payload = self.response_payload(model, content, usage, timing);
        payload.parent_tool_use_id = parent_tool_use_id.map(str::to_string);
        self.stage_response(&payload);
    }

    /// Stages the response to an MCP server's sampling request, as
    /// [`model_response`](Self::model_response) with the server's name:
    /// not a turn of the session, and no assistant message follows (it is
    /// written with the next entry).
    pub fn sampling_response(
        &self,
        server: &str,
        model: &str,
        content: &[ContentBlock],
        usage: &Usage,
        timing: (std::time::Duration, Option<f64>),
    ) {
        let mut payload = self.response_payload(model, content, usage, timing);
        payload.mcp_sampling_server = Some(server.to_string());
        self.stage_response(&payload);
    }

    /// A response's entry, its content staged as evidence.
    fn response_payload(
        &self,
        model: &str,
        content: &[ContentBlock],
        usage: &Usage,
        (api_duration, cost_usd): (std::time::Duration, Option<f64>),
    ) -> ModelResponsePayload {
        let value = serde_json::to_value(content).unwrap_or(Value::Null);
        let bytes = tascer_ledger::jcs::canonicalize(&value)
            .unwrap_or_else(|_| value.to_string().into_bytes());
        let evidence = self.evidence(&bytes);
        ModelResponsePayload {
            content_digest: evidence.clone(),
            usage: *usage,
            model: model.to_string(),
            evidence: vec![evidence],
            parent_tool_use_id: None,
            duration_ms: Some(u64::try_from(api_duration.as_millis()).unwrap_or(u64::MAX)),
            cost_usd,
            mcp_sampling_server: None,
        }
    }

    fn stage_response(&self, payload: &ModelResponsePayload) {
        match payload.to_payload() {
            Ok(p) => self.stage(EntryKind::ModelResponse, p),
            Err(err) => tracing::error!("cannot encode model response entry: {err}"),
        }
    }

    /// Appends one hook run.
    pub fn hook_run(&self, run: &Value) {
        self.append(EntryKind::HookExecution, run.clone());
    }

    /// Stages LLM reviewer verdicts (written by the next append or
    /// [`flush`](Self::flush), ahead of what they led to).
    pub fn reviews(&self, records: &[tascer_guard::reviewers::ReviewRecord]) {
        for (kind, payload) in verdict_entries(records) {
            self.stage(kind, payload);
        }
    }

    /// Stages a permission decision (written by the next append or
    /// [`flush`](Self::flush)).
    pub fn permission(&self, decision: &Value) {
        self.stage(EntryKind::PermissionDecision, decision.clone());
    }

    /// Opens a tool record: `tool_call_opened` is staged, and written
    /// before the tool runs ([`flush`](Self::flush)) or with the record
    /// that closes a call that never ran.
    pub fn open_tool(
        &self,
        tool_use_id: &str,
        tool: &str,
        input: &Value,
        context: Value,
    ) -> ToolRecord {
        let mut record = ToolRecord::open(tool_use_id, tool, input.clone(), now());
        record.context = context;
        match record.to_payload() {
            Ok(payload) => self.stage(EntryKind::ToolCallOpened, payload),
            Err(err) => tracing::error!("cannot encode tool_call_opened entry: {err}"),
        }
        record
    }

    /// Closes a tool record with the call's output and status; returns
    /// the closed record and the hash of the ledger entry that holds it
    /// (`None` when it could not be written).
    pub fn close_tool(
        &self,
        mut record: ToolRecord,
        output: &ToolOutput,
        status: ToolStatus,
    ) -> (ToolRecord, Option<String>) {
        let text = output.content.to_text();
        let digest = self.evidence(text.as_bytes());
        record.finish(output, text, digest, status);
        let sealed = if self.seals() { record.seal() } else { Ok(()) };
        let payload = sealed.and_then(|()| record.to_payload());
        let hash = match payload {
            Ok(payload) => self
                .inner
                .commit_hash(Some((EntryKind::ToolRecord, payload))),
            Err(err) => {
                tracing::error!("cannot encode tool_record entry: {err}");
                None
            }
        };
        (record, hash)
    }

    /// Appends a compaction: the conversation so far was replaced by
    /// `summary` (kept as evidence), as a `checkpoint` entry.
    pub fn compaction(&self, trigger: &str, pre_tokens: u64, summary: &str) {
        let evidence = self.evidence(summary.as_bytes());
        self.append(
            EntryKind::Checkpoint,
            json!({
                "event": "compaction",
                "trigger": trigger,
                "pre_tokens": pre_tokens,
                "summary_digest": evidence,
                "evidence": [evidence],
            }),
        );
    }

    /// Records a file rewind (what it restores and removes) as a
    /// `checkpoint` entry, written now. False when it could not be
    /// written: the rewind must not run.
    #[must_use]
    pub fn rewind(&self, payload: Value) -> bool {
        self.stage(EntryKind::Checkpoint, payload);
        self.flush()
    }

    /// Appends the end of a turn: usage, cost, status.
    pub fn turn_end(&self, usage: &Usage, cost_usd: f64, status: &str, num_turns: u32) {
        let end = SessionEnd {
            usage: *usage,
            cost_usd,
            status: status.to_string(),
            num_turns,
        };
        match end.to_payload() {
            Ok(p) => self.append(EntryKind::SessionEnd, p),
            Err(err) => tracing::error!("cannot encode session end entry: {err}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(dir: &tempfile::TempDir) -> Arc<Ledger> {
        Arc::new(Ledger::open_in_home(dir.path(), None).unwrap())
    }

    fn kinds(ledger: &Ledger, session: &str) -> Vec<EntryKind> {
        ledger
            .store()
            .entries(session)
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    #[test]
    fn staged_entries_are_written_in_order_by_flush_and_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = ledger(&dir);
        let proof = Proof::new(Arc::clone(&ledger), "s".into(), WriteFailure::default());
        proof.start("m", &json!({}), "system", json!({})).unwrap();
        proof.model_response(
            "m",
            &[ContentBlock::text("hi")],
            &Usage::default(),
            None,
            (std::time::Duration::ZERO, None),
        );
        let record = proof.open_tool("t1", "Noop", &json!({}), json!({"cwd": "/w"}));
        proof.permission(&json!({"decision": "allow", "tool_use_id": "t1"}));
        assert_eq!(
            kinds(&ledger, "s"),
            [EntryKind::SessionStart],
            "still staged"
        );
        assert!(proof.flush());
        assert_eq!(
            kinds(&ledger, "s"),
            [
                EntryKind::SessionStart,
                EntryKind::ModelResponse,
                EntryKind::ToolCallOpened,
                EntryKind::PermissionDecision
            ]
        );
        let _ = proof.close_tool(record, &ToolOutput::text("ok"), ToolStatus::Validated);
        let entries = ledger.store().entries("s").unwrap();
        let closed = entries.last().unwrap();
        assert_eq!(closed.kind, EntryKind::ToolRecord);
        let digest = closed.payload["output_digest"].as_str().unwrap();
        assert_eq!(ledger.get_evidence("s", digest).unwrap(), b"ok");
        assert!(ledger.verify("s", None).unwrap().ok);
    }

    #[test]
    fn what_is_staged_is_written_when_the_session_goes_away() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = ledger(&dir);
        let proof = Proof::new(Arc::clone(&ledger), "s".into(), WriteFailure::default());
        proof.start("m", &json!({}), "system", json!({})).unwrap();
        let clone = proof.clone();
        proof.model_response(
            "m",
            &[ContentBlock::text("bye")],
            &Usage::default(),
            None,
            (std::time::Duration::ZERO, None),
        );
        drop(proof);
        assert_eq!(kinds(&ledger, "s").len(), 1, "a clone still holds it");
        drop(clone);
        assert_eq!(
            kinds(&ledger, "s"),
            [EntryKind::SessionStart, EntryKind::ModelResponse]
        );
        assert!(ledger.verify("s", None).unwrap().ok);
    }
}
