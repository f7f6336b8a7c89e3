//! Tascer as a Claude Code command hook (`tascer hook`).
//!
//! Claude Code runs a command hook as a new process per event, with the
//! event's JSON on standard input (claude-compat §5.3, §6.2). For tool calls
//! the answer comes from the same [`Admission`](tascer_guard::admission::Admission)
//! a Tascer session uses — Tascer's settings, rules, policies, workaround
//! detection and gates, built by [`HostGovernance`] — and every event lands
//! in one ledger session per Claude Code `session_id`: the call is opened at
//! `PreToolUse` and closed with its result at `PostToolUse`, so `tascer
//! verify`, `report` and `export` work on a Claude Code session as on a
//! Tascer one.
//!
//! Tascer adds refusals to Claude Code's own permission system and widens
//! it only where its settings say so: a call Tascer denies is denied
//! (`permissionDecision: deny` with Tascer's reason); one a Tascer ask rule
//! or policy asks about is asked; one its safety chain approves — low-risk
//! auto-approve, or an LLM reviewer answering in place of the user — is
//! allowed (docs/reviewers.md); everything else is left to Claude Code's
//! own rules and mode. `Stop` may be blocked by `intent-validate`, and
//! every event goes to the configured webhooks (`claude_hook_safety.rs`
//! has those parts).
//!
//! Each event has its own function below and builds only what it needs,
//! because the process runs on every tool call: `PreToolUse` builds the
//! permission engine and pre-gates, `PostToolUse` only the post-gates,
//! the other events only open the ledger (and read the settings only when
//! they need the reviewers or the webhooks).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use tascer_core::{ToolCall, ToolOutput};
use tascer_guard::admission::CallRequest;
use tascer_guard::hooks::HookCommon;
use tascer_guard::permissions::PermissionMode;
use tascer_guard::settings::LoadedSettings;
use tascer_ledger::{
    EntryKind, Evidence, Ledger, SessionStart, ToolRecord, ToolStatus, sha256_hex,
};

use crate::call_context::{decision_record, gate_outcomes};
use crate::host::{HostAnswer, HostGovernance, HostStep, host_options};
use crate::options::DEFAULT_CONTEXT_ENV;
use crate::setup;

/// What the hook process answers (exit code, standard output and error).
pub use tascer_hook_client::Reply as HookReply;

/// Answers one Claude Code hook event. `stdin` is the event's JSON,
/// `home` Tascer's home (`$TASCER_HOME`: the ledger and user settings).
///
/// A `PreToolUse` event Tascer cannot decide (unreadable settings, a
/// ledger that cannot be written) is refused (exit 2, fail closed); other
/// events report such errors without blocking (exit 1).
pub async fn answer(stdin: &str, home: &Path) -> HookReply {
    answer_with(stdin, home, None).await
}

/// [`answer`] with the home's ledger already open ([`open_ledger`]), as
/// the hook server keeps it between events; `None` opens it for this
/// event.
pub async fn answer_with(stdin: &str, home: &Path, ledger: Option<Arc<Ledger>>) -> HookReply {
    let input: Value = match serde_json::from_str(stdin) {
        Ok(v) => v,
        Err(e) => {
            return HookReply::error(
                1,
                format!(
                    "tascer hook: the hook input is not JSON ({e}); expected Claude Code's hook event on standard input"
                ),
            );
        }
    };
    let event = text(&input, "hook_event_name");
    // A PreToolUse that cannot be decided is refused; anything else only
    // reports the problem.
    let error_code = if event == "PreToolUse" { 2 } else { 1 };
    let Some(session_id) = input.get("session_id").and_then(Value::as_str) else {
        return HookReply::error(
            error_code,
            format!("tascer hook: the {event} hook input has no session_id"),
        );
    };
    let session = match HookSession::open(&input, session_id, home, ledger) {
        Ok(session) => session,
        Err(message) => return HookReply::error(error_code, format!("tascer hook: {message}")),
    };
    let result = session.answer(&input, &event).await;
    let mut reply = result
        .unwrap_or_else(|message| HookReply::error(error_code, format!("tascer hook: {message}")));
    reply.webhooks_queued = session.webhook(&input, &event, &reply);
    session.close();
    reply
}

#[path = "claude_hook_safety.rs"]
mod claude_hook_safety;

/// One event's view of its Claude Code session: where it runs, its ledger
/// session, and what it read once (the settings, the local database).
struct HookSession {
    session_id: String,
    cwd: PathBuf,
    home: PathBuf,
    ledger: Arc<Ledger>,
    hook_common: HookCommon,
    settings: OnceLock<Result<LoadedSettings, String>>,
    local_db: OnceLock<Result<Arc<tascer_store::Db>, String>>,
}

impl HookSession {
    /// Opens the ledger (starting the session's ledger session on its
    /// first event).
    fn open(
        input: &Value,
        session_id: &str,
        home: &Path,
        ledger: Option<Arc<Ledger>>,
    ) -> Result<Self, String> {
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .ok_or("no cwd in the hook input and no current directory")?;
        let ledger = match ledger {
            Some(ledger) => ledger,
            None => Arc::new(open_ledger(home)?),
        };
        let session = HookSession {
            session_id: session_id.to_string(),
            hook_common: HookCommon {
                session_id: session_id.to_string(),
                transcript_path: text(input, "transcript_path"),
                cwd: cwd.display().to_string(),
                permission_mode: None,
            },
            cwd,
            home: home.to_path_buf(),
            ledger,
            settings: OnceLock::new(),
            local_db: OnceLock::new(),
        };
        session.start_if_new(input)?;
        Ok(session)
    }

    /// Answers `event`: each event has its own function.
    async fn answer(&self, input: &Value, event: &str) -> Result<HookReply, String> {
        match event {
            "PreToolUse" => self.pre_tool_use(input).await,
            "PostToolUse" | "PostToolUseFailure" => self.post_tool_use(input, event).await,
            "UserPromptSubmit" => self.user_prompt_submit(input),
            "SessionEnd" => self.session_end(input),
            "Stop" => self.stop(input).await,
            "SessionStart" | "SubagentStop" | "PreCompact" | "Notification" => {
                self.checkpoint(input, event)
            }
            other => Ok(HookReply::error(
                1,
                format!("tascer hook: the {other} event is not handled; nothing recorded"),
            )),
        }
    }

    /// Ends this process's use of the database. The connection closes
    /// without a checkpoint (see [`leave_wal_on_close`]); once the WAL has
    /// grown past [`WAL_TRUNCATE_BYTES`], this process first checkpoints it
    /// into the database and truncates it. That keeps the WAL bounded: a
    /// process that opens the database alone recovers the WAL and no longer
    /// knows which frames were checkpointed, so without a truncation every
    /// process would append to it. If other processes hold the database,
    /// the truncation is left to a later hook (or to their own close).
    fn close(self) {
        let Some(db) = self.ledger.store().sqlite_db() else {
            return; // A PostgreSQL store: nothing to truncate here.
        };
        let mut wal = db.path().as_os_str().to_owned();
        wal.push("-wal");
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size <= WAL_TRUNCATE_BYTES {
            return;
        }
        let truncated = db.read(|conn| {
            conn.busy_timeout(WAL_TRUNCATE_WAIT)?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                row.get::<_, i64>(0)
            })
        });
        match truncated {
            Ok(0) => {}
            Ok(_) => tracing::debug!("the WAL is in use; a later process truncates it"),
            Err(e) => tracing::debug!("cannot truncate the WAL: {e}"),
        }
    }

    /// The session's first event opens its ledger session.
    fn start_if_new(&self, input: &Value) -> Result<(), String> {
        let head = self
            .ledger
            .head(&self.session_id)
            .map_err(|e| format!("cannot read the ledger: {e}"))?;
        if head.is_some() {
            return Ok(());
        }
        let start = SessionStart {
            model: input
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("claude-code")
                .to_string(),
            options_digest: format!("sha256:{}", sha256_hex(b"{}")),
            system_prompt_digest: format!("sha256:{}", sha256_hex(b"")),
            signing_key_id: None,
            context: json!({
                "cwd": self.cwd.display().to_string(),
                "host": "claude-code",
                "transcript_path": text(input, "transcript_path"),
                "tascer_version": crate::VERSION,
            }),
        };
        self.ledger
            .start_session(&self.session_id, &start)
            .map(|_| ())
            .map_err(|e| format!("cannot write the ledger: {e}"))
    }

    /// Appends `entries` with the evidence they refer to, in one
    /// transaction.
    fn write(&self, entries: Vec<(EntryKind, Value)>, evidence: &[Evidence]) -> Result<(), String> {
        self.ledger
            .append_batch(&self.session_id, entries, evidence)
            .map(|_| ())
            .map_err(|e| format!("cannot write the ledger: {e}"))
    }

    /// Tascer's settings for `cwd` (read once per event).
    fn settings(&self) -> Result<&LoadedSettings, String> {
        self.settings
            .get_or_init(|| {
                setup::load_settings(&host_options(None), &self.cwd, &self.home)
                    .map_err(|e| format!("cannot read Tascer's settings: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Tascer's governance for this event's step, in the event's
    /// permission mode, with the reviewers the settings turn on.
    fn governance(&self, input: &Value, step: HostStep) -> Result<HostGovernance, String> {
        let mode = input
            .get("permission_mode")
            .and_then(Value::as_str)
            .and_then(|m| m.parse::<PermissionMode>().ok());
        let governance = HostGovernance::from_settings(self.settings()?, &self.cwd, mode, step)
            .map_err(|e| format!("cannot build Tascer's governance from its settings: {e}"))?;
        let reviewers = self.reviewers(governance.safety(), &self.hook_common.transcript_path);
        Ok(governance.with_reviewers(reviewers))
    }

    /// `PreToolUse`: admission; the call's record is opened (and closed
    /// at once when refused).
    async fn pre_tool_use(&self, input: &Value) -> Result<HookReply, String> {
        let governance = self.governance(input, HostStep::Admit)?;
        let admission = governance.admission();
        let denials = self.restore_denials(admission);
        if admission
            .reviewer_chain()
            .is_some_and(|r| r.checks_failures())
            && let Some(failure) = self.take_failure()
        {
            admission.note_failure(failure);
        }
        let call = tool_call(input, &self.session_id, &self.cwd);
        let mut record = ToolRecord::open(
            &call.tool_use_id,
            &call.tool_name,
            admission.recorded_input(&call.tool_name, &call.input),
            now(),
        );
        record.context = head_context(&self.cwd);
        let (admitted, answer) = governance.admit(&call, self.hook_common.clone()).await;
        self.keep_denials(admission, &denials);
        record.hooks = admitted
            .hooks
            .runs
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
            .collect();
        if let Some(decision) = &admitted.decision {
            record.permission = decision_record(
                decision,
                &call.tool_name,
                &call.tool_use_id,
                admission.mode(),
            );
        }
        record.pre_gates = gate_outcomes(&admitted.pre_gates);
        let opened = record
            .to_payload()
            .map_err(|e| format!("cannot encode the record: {e}"))?;
        let mut entries = vec![(EntryKind::ToolCallOpened, opened)];
        entries.extend(crate::reviewer::verdict_entries(&admitted.reviews));
        if admitted.decision.is_some() {
            entries.push((EntryKind::PermissionDecision, record.permission.clone()));
        }
        let reply = match answer {
            HostAnswer::Deny { reason } => {
                // Refused: the record is closed in the same transaction.
                let message = match &admitted.verdict {
                    Err(refusal) => refusal.message.clone(),
                    Ok(_) => reason.clone(),
                };
                let output = ToolOutput::error(message);
                let evidence = close_record(&mut record, &output, ToolStatus::Blocked)?;
                entries.push((EntryKind::ToolRecord, record.to_payload().map_err(encode)?));
                self.write(entries, &[evidence])?;
                return Ok(HookReply::json(&pre_tool_answer("deny", &reason, None)));
            }
            HostAnswer::Ask { reason } => HookReply::json(&pre_tool_answer("ask", &reason, None)),
            // The safety chain answers for the user: Claude Code does not
            // ask again.
            HostAnswer::Approve { reason } => {
                HookReply::json(&pre_tool_answer("allow", &reason, None))
            }
            HostAnswer::Run {
                updated_input: Some(updated),
            } => HookReply::json(&pre_tool_answer(
                "allow",
                "input rewritten by Tascer",
                Some(updated),
            )),
            HostAnswer::Run {
                updated_input: None,
            }
            | HostAnswer::HostDecides => HookReply::nothing(),
        };
        self.write(entries, &[])?;
        self.keep_pending(&record)?;
        Ok(reply)
    }

    /// `PostToolUse` / `PostToolUseFailure`: review (post-gates and
    /// Tascer's hooks); the call's record is closed with the output as
    /// evidence.
    async fn post_tool_use(&self, input: &Value, event: &str) -> Result<HookReply, String> {
        let call = tool_call(input, &self.session_id, &self.cwd);
        let path = self.pending_path(&call.tool_use_id);
        let pending = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<ToolRecord>(&t).ok());
        let mut entries = Vec::new();
        let mut record = match pending {
            Some(record) => record,
            None => {
                // No PreToolUse record (the hook was installed mid-call):
                // open one now so the result is still on record.
                let mut record = ToolRecord::open(
                    &call.tool_use_id,
                    &call.tool_name,
                    call.input.clone(),
                    now(),
                );
                record.context = json!({"note": "opened at PostToolUse: no PreToolUse record"});
                entries.push((
                    EntryKind::ToolCallOpened,
                    record.to_payload().map_err(encode)?,
                ));
                record
            }
        };
        let output = if event == "PostToolUseFailure" {
            ToolOutput::error(text(input, "error"))
        } else {
            let response = input.get("tool_response").cloned().unwrap_or(Value::Null);
            let text = match &response {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            ToolOutput::text(text).with_raw(response)
        };
        let governance = self.governance(input, HostStep::Review)?;
        let admission = governance.admission();
        let reviewed = admission
            .review(
                CallRequest {
                    call: &call,
                    hook_common: self.hook_common.clone(),
                    agent_id: None,
                },
                output.clone(),
            )
            .await;
        self.store_failure(admission.take_failure())?;
        record.post_gates = gate_outcomes(&reviewed.post_gates);
        record.hooks.extend(
            reviewed
                .hooks
                .runs
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or(Value::Null)),
        );
        let status = if output.is_error || reviewed.gate_failed {
            ToolStatus::Failed
        } else {
            ToolStatus::Validated
        };
        let stored = if reviewed.found_secrets {
            ToolOutput {
                content: admission.redact(&output.content.to_text()).into(),
                is_error: output.is_error,
                raw: None,
                child_sessions: Vec::new(),
            }
        } else {
            output
        };
        let evidence = close_record(&mut record, &stored, status)?;
        entries.push((EntryKind::ToolRecord, record.to_payload().map_err(encode)?));
        self.write(entries, &[evidence])?;
        let _ = std::fs::remove_file(&path);
        if reviewed.gate_failed {
            let message = reviewed
                .post_gates
                .iter()
                .filter(|g| !g.passed)
                .map(|g| format!("{}: {}", g.gate, g.message))
                .collect::<Vec<_>>()
                .join("; ");
            return Ok(HookReply::json(&json!({
                "decision": "block",
                "reason": format!("Tascer validation failed: {message}"),
            })));
        }
        Ok(HookReply::nothing())
    }

    /// `UserPromptSubmit`: a `user_prompt` entry.
    fn user_prompt_submit(&self, input: &Value) -> Result<HookReply, String> {
        self.write(
            vec![(
                EntryKind::UserPrompt,
                json!({"text": text(input, "prompt"), "source": "claude-code"}),
            )],
            &[],
        )?;
        Ok(HookReply::nothing())
    }

    /// `SessionEnd`: a `session_end` entry.
    fn session_end(&self, input: &Value) -> Result<HookReply, String> {
        self.write(
            vec![(
                EntryKind::SessionEnd,
                json!({"status": "ended", "reason": text(input, "reason"), "source": "claude-code"}),
            )],
            &[],
        )?;
        Ok(HookReply::nothing())
    }

    /// `SessionStart`, `Stop`, `SubagentStop`, `PreCompact`,
    /// `Notification`: a `checkpoint` entry naming the event.
    fn checkpoint(&self, input: &Value, event: &str) -> Result<HookReply, String> {
        self.write(vec![(EntryKind::Checkpoint, event_note(input, event))], &[])?;
        Ok(HookReply::nothing())
    }

    /// Where an admitted call's record waits for its `PostToolUse` (ids
    /// made safe as file names: `[A-Za-z0-9_-]` kept, anything else `_`).
    fn pending_path(&self, tool_use_id: &str) -> PathBuf {
        let safe = tascer_mcp::sanitize_name;
        self.home
            .join("claude-code")
            .join("pending")
            .join(safe(&self.session_id))
            .join(format!("{}.json", safe(tool_use_id)))
    }

    fn keep_pending(&self, record: &ToolRecord) -> Result<(), String> {
        let path = self.pending_path(&record.tool_use_id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string(record).map_err(encode)?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Opens the home's ledger the way a hook event uses it: signed with the
/// home's key, its connection leaving the WAL on close
/// ([`leave_wal_on_close`]).
pub fn open_ledger(home: &Path) -> Result<Ledger, String> {
    let key = tascer_ledger::load_home_signing_key(home)
        .map_err(|e| format!("cannot load the signing key from {}: {e}", home.display()))?;
    let ledger = Ledger::open_in_home(home, key)
        .map_err(|e| format!("cannot open the ledger in {}: {e}", home.display()))?;
    leave_wal_on_close(&ledger);
    Ok(ledger)
}

/// The WAL size past which a hook process checkpoints and truncates it
/// before it exits (see [`HookSession::close`]): it bounds what the next
/// process reads to recover the WAL, and how often a hook pays for the
/// checkpoint's `fsync`s (every 15 to 20 events).
const WAL_TRUNCATE_BYTES: u64 = 512 * 1024;

/// How long that checkpoint waits for other connections before leaving the
/// truncation to a later process.
const WAL_TRUNCATE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// A hook process writes a few entries and exits. Closing the last
/// connection to a WAL database checkpoints it (four `fsync`s) and deletes
/// the WAL and its index, which the next hook process creates again: on a
/// busy disk that costs more than everything else the hook does. So the
/// hook's connection does not checkpoint on close and the WAL stays for the
/// next process (what it committed is in the WAL, as durable as any commit
/// with `synchronous = NORMAL`); [`HookSession::close`] truncates it once
/// it grows. If the connection cannot be tuned, closing just costs the
/// usual.
fn leave_wal_on_close(ledger: &Ledger) {
    let Some(db) = ledger.store().sqlite_db() else {
        return;
    };
    let tuned = db.read(|conn| {
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
    });
    if let Err(e) = tuned {
        tracing::debug!("cannot keep the WAL on close: {e}");
    }
}

/// Closes `record` with `output` (sealed, its proof hash set) and returns
/// the output's evidence, to be written in the same transaction.
fn close_record(
    record: &mut ToolRecord,
    output: &ToolOutput,
    status: ToolStatus,
) -> Result<Evidence, String> {
    let text = output.content.to_text();
    let evidence = Evidence::new(text.clone().into_bytes());
    crate::proof::finish_record(record, output, text, evidence.digest().to_string(), status);
    record.seal().map_err(encode)?;
    Ok(evidence)
}

fn encode(e: impl std::fmt::Display) -> String {
    format!("cannot encode the record: {e}")
}

/// The context of a call as one hook process can afford to capture it:
/// the cwd, the allowlisted environment and where git's `HEAD` points.
/// The worktree status (changed and untracked files, diff digest) is not
/// captured: it walks the whole worktree, on every call, in a new process
/// each time. The record says so (`git_status`).
fn head_context(cwd: &Path) -> Value {
    let env: serde_json::Map<String, Value> = DEFAULT_CONTEXT_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_string(), json!(v))))
        .collect();
    let mut context = json!({
        "cwd": cwd.display().to_string(),
        "tascer_version": crate::VERSION,
        "env": env,
        "captured_at": now(),
        "git_status": "not captured: tascer hook records HEAD only",
    });
    match tascer_ledger::git_head(cwd) {
        Ok(head) => context["git"] = json!(head),
        Err(e) => context["git_error"] = json!(e.to_string()),
    }
    context
}

/// The `PreToolUse` answer in `hookSpecificOutput`.
fn pre_tool_answer(decision: &str, reason: &str, updated_input: Option<Value>) -> Value {
    let mut specific = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let (Some(input), Some(obj)) = (updated_input, specific.as_object_mut()) {
        obj.insert("updatedInput".into(), input);
    }
    json!({ "hookSpecificOutput": specific })
}

fn tool_call(input: &Value, session_id: &str, cwd: &Path) -> ToolCall {
    ToolCall {
        tool_name: text(input, "tool_name"),
        input: input.get("tool_input").cloned().unwrap_or(json!({})),
        tool_use_id: text(input, "tool_use_id"),
        cwd: cwd.to_path_buf(),
        session_id: session_id.to_string(),
    }
}

/// A checkpoint entry for an event that decides nothing here.
fn event_note(input: &Value, event: &str) -> Value {
    let mut note = json!({"event": event, "source": "claude-code"});
    for key in [
        "reason",
        "trigger",
        "message",
        "notification_type",
        "stop_hook_active",
    ] {
        if let (Some(v), Some(obj)) = (input.get(key), note.as_object_mut()) {
            obj.insert(key.into(), v.clone());
        }
    }
    if event == "SessionStart"
        && let (Some(v), Some(obj)) = (input.get("source"), note.as_object_mut())
    {
        obj.insert("start_source".into(), v.clone());
    }
    note
}

fn text(input: &Value, key: &str) -> String {
    input
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
