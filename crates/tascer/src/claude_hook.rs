//! Tascer as a Claude Code command hook (`tascer hook`).
//!
//! Claude Code runs a command hook as a new process per event, with the
//! event's JSON on standard input (claude-compat §5.3, §6.2). For tool calls
//! the answer comes from the same [`Admission`] a Tascer session uses —
//! Tascer's settings, rules, policies, workaround detection and gates — and
//! every event lands in one ledger session per Claude Code `session_id`:
//! the call is opened at `PreToolUse` and closed with its result at
//! `PostToolUse`, so `tascer verify`, `report` and `export` work on a
//! Claude Code session as on a Tascer one.
//!
//! Tascer adds refusals to Claude Code's own permission system and widens
//! it only where its settings say so: a call Tascer denies is denied
//! (`permissionDecision: deny` with Tascer's reason); one a Tascer ask rule
//! or policy asks about is asked; one its safety chain approves — low-risk
//! auto-approve, or an LLM reviewer answering in place of the user — is
//! allowed (docs/reviewers.md); everything else is left to Claude Code's
//! own rules and mode. `Stop` may be blocked by `intent-validate`, and
//! every event goes to the configured webhooks
//! ([`claude_hook_safety`](self) has those parts).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tascer_core::{ToolCall, ToolOutput};
use tascer_guard::admission::{Admission, CallRequest, Refusal, RefusedBy};
use tascer_guard::hooks::HookCommon;
use tascer_guard::permissions::{Behavior, DecisionSource, PermissionMode};
use tascer_guard::settings::{LoadedSettings, SettingsSource};
use tascer_ledger::{EntryKind, Ledger, SessionStart, ToolRecord, ToolStatus, sha256_hex};

use crate::call_context::{ContextCapture, decision_record, gate_outcomes};
use crate::options::Options;
use crate::setup;

/// What the hook process answers: Claude Code reads the exit code, then
/// standard output (JSON) on exit 0 or standard error on exit 2.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookReply {
    /// 0 (success, stdout parsed), 2 (blocking error, stderr fed back) or 1
    /// (non-blocking error).
    pub exit_code: u8,
    /// JSON for Claude Code, or empty.
    pub stdout: String,
    /// A message: for Claude on exit 2, for the user otherwise.
    pub stderr: String,
    /// True when the event was queued for webhooks: the caller should see
    /// that a flusher delivers it (`tascer webhook flush`).
    pub webhooks_queued: bool,
}

impl HookReply {
    fn json(value: Value) -> Self {
        HookReply {
            exit_code: 0,
            stdout: value.to_string(),
            stderr: String::new(),
            webhooks_queued: false,
        }
    }

    fn nothing() -> Self {
        HookReply::default()
    }

    fn error(exit_code: u8, message: String) -> Self {
        HookReply {
            exit_code,
            stdout: String::new(),
            stderr: message,
            webhooks_queued: false,
        }
    }
}

/// Answers one Claude Code hook event. `stdin` is the event's JSON,
/// `home` Tascer's home (`$TASCER_HOME`: the ledger and user settings).
///
/// A `PreToolUse` event Tascer cannot decide (unreadable settings, a
/// ledger that cannot be written) is refused (exit 2, fail closed); other
/// events report such errors without blocking (exit 1).
pub async fn answer(stdin: &str, home: &Path) -> HookReply {
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
    let Some(session_id) = input.get("session_id").and_then(Value::as_str) else {
        return HookReply::error(
            if event == "PreToolUse" { 2 } else { 1 },
            format!("tascer hook: the {event} hook input has no session_id"),
        );
    };
    let hook = match HookContext::open(&input, session_id, home) {
        Ok(h) => h,
        Err(message) => {
            let code = if event == "PreToolUse" { 2 } else { 1 };
            return HookReply::error(code, format!("tascer hook: {message}"));
        }
    };
    let result = match event.as_str() {
        "PreToolUse" => hook.pre_tool_use(&input).await,
        "PostToolUse" | "PostToolUseFailure" => hook.post_tool_use(&input, &event).await,
        "UserPromptSubmit" => hook
            .append(
                EntryKind::UserPrompt,
                json!({"text": text(&input, "prompt"), "source": "claude-code"}),
            )
            .map(|()| HookReply::nothing()),
        "SessionEnd" => hook
            .append(
                EntryKind::SessionEnd,
                json!({"status": "ended", "reason": text(&input, "reason"), "source": "claude-code"}),
            )
            .map(|()| HookReply::nothing()),
        "Stop" => hook.stop(&input).await,
        "SessionStart" | "SubagentStop" | "PreCompact" | "Notification" => hook
            .append(EntryKind::Checkpoint, event_note(&input, &event))
            .map(|()| HookReply::nothing()),
        other => {
            return HookReply::error(
                1,
                format!("tascer hook: the {other} event is not handled; nothing recorded"),
            );
        }
    };
    let mut reply = match result {
        Ok(reply) => reply,
        Err(message) => {
            let code = if event == "PreToolUse" { 2 } else { 1 };
            HookReply::error(code, format!("tascer hook: {message}"))
        }
    };
    reply.webhooks_queued = hook.webhook(&input, &event, &reply);
    reply
}

#[path = "claude_hook_safety.rs"]
mod claude_hook_safety;

/// One event's view of its session: where it runs, its admission and its
/// ledger.
struct HookContext {
    session_id: String,
    cwd: PathBuf,
    home: PathBuf,
    ledger: Arc<Ledger>,
    hook_common: HookCommon,
    settings: std::sync::OnceLock<Result<LoadedSettings, String>>,
    local_db: std::sync::OnceLock<Result<Arc<tascer_store::Db>, String>>,
}

impl HookContext {
    fn open(input: &Value, session_id: &str, home: &Path) -> Result<Self, String> {
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .ok_or("no cwd in the hook input and no current directory")?;
        let key = tascer_ledger::load_home_signing_key(home)
            .map_err(|e| format!("cannot load the signing key from {}: {e}", home.display()))?;
        let ledger = Ledger::open_in_home(home, key)
            .map_err(|e| format!("cannot open the ledger in {}: {e}", home.display()))?;
        let hook = HookContext {
            session_id: session_id.to_string(),
            hook_common: HookCommon {
                session_id: session_id.to_string(),
                transcript_path: text(input, "transcript_path"),
                cwd: cwd.display().to_string(),
                permission_mode: None,
            },
            cwd,
            home: home.to_path_buf(),
            ledger: Arc::new(ledger),
            settings: std::sync::OnceLock::new(),
            local_db: std::sync::OnceLock::new(),
        };
        hook.start_if_new(input)?;
        Ok(hook)
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

    fn append(&self, kind: EntryKind, payload: Value) -> Result<(), String> {
        self.ledger
            .append(&self.session_id, kind, payload)
            .map(|_| ())
            .map_err(|e| format!("cannot write the ledger: {e}"))
    }

    /// The options a hook event is governed with: Tascer's settings files,
    /// Claude Code's permission mode.
    fn options(mode: Option<PermissionMode>) -> Options {
        let mut options = Options::new();
        options.permission_mode = mode;
        options.setting_sources = vec![
            SettingsSource::User,
            SettingsSource::Project,
            SettingsSource::Local,
        ];
        options
    }

    /// Tascer's settings for `cwd` (read once per event).
    fn settings(&self) -> Result<&LoadedSettings, String> {
        self.settings
            .get_or_init(|| {
                setup::load_settings(&Self::options(None), &self.cwd, &self.home)
                    .map_err(|e| format!("cannot read Tascer's settings: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The session's admission, from Tascer's settings for `cwd`, in
    /// Claude Code's permission mode, with the reviewers they turn on.
    fn admission(
        &self,
        mode: Option<PermissionMode>,
    ) -> Result<(Admission, ContextCapture), String> {
        let settings = self.settings()?;
        let parts = setup::build(&Self::options(mode), settings, &self.cwd, Vec::new())
            .map_err(|e| format!("cannot build Tascer's governance: {e}"))?;
        let reviewers = self.reviewers(&parts.safety, &self.hook_common.transcript_path);
        Ok((
            parts.admission.defer_asks(true).reviewers(reviewers),
            parts.context,
        ))
    }

    /// Where an admitted call's record waits for its `PostToolUse`.
    fn pending_path(&self, tool_use_id: &str) -> PathBuf {
        let safe = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        self.home
            .join("claude-code")
            .join("pending")
            .join(safe(&self.session_id))
            .join(format!("{}.json", safe(tool_use_id)))
    }

    async fn pre_tool_use(&self, input: &Value) -> Result<HookReply, String> {
        let mode = input
            .get("permission_mode")
            .and_then(Value::as_str)
            .and_then(|m| m.parse::<PermissionMode>().ok());
        let (admission, context) = self.admission(mode)?;
        let denials = self.restore_denials(&admission);
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
        record.context = context.capture(&self.cwd, &Default::default());
        let admitted = admission
            .admit(CallRequest {
                call: &call,
                hook_common: self.hook_common.clone(),
                agent_id: None,
            })
            .await;
        self.keep_denials(&admission, &denials);
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
        self.ledger
            .append_many(&self.session_id, entries, &[])
            .map_err(|e| format!("cannot write the ledger: {e}"))?;
        match admitted.verdict {
            Ok(run_input) => {
                self.keep_pending(&record)?;
                if run_input != call.input {
                    return Ok(HookReply::json(pre_tool_answer(
                        "allow",
                        "input rewritten by Tascer",
                        Some(run_input),
                    )));
                }
                // The safety chain answers for the user: Claude Code does
                // not ask again.
                if let Some(d) = admitted
                    .decision
                    .as_ref()
                    .filter(|d| approved_by_safety_chain(&d.decided_by))
                {
                    return Ok(HookReply::json(pre_tool_answer(
                        "allow",
                        &format!("Tascer: {}", d.reason),
                        None,
                    )));
                }
                Ok(HookReply::nothing())
            }
            Err(refusal) => {
                let asked = refusal.by == RefusedBy::Permission
                    && admitted
                        .decision
                        .as_ref()
                        .is_some_and(|d| d.behavior == Behavior::Ask);
                if asked {
                    let explicit = admitted.decision.as_ref().is_some_and(|d| {
                        matches!(
                            d.decided_by,
                            DecisionSource::Rule { .. }
                                | DecisionSource::Policy { .. }
                                | DecisionSource::Workaround
                        )
                    });
                    self.keep_pending(&record)?;
                    if !explicit {
                        // Only the mode or the default would ask: Claude
                        // Code's own rules and mode decide that.
                        return Ok(HookReply::nothing());
                    }
                    return Ok(HookReply::json(pre_tool_answer(
                        "ask",
                        &refusal.message,
                        None,
                    )));
                }
                self.close_refused(record, &refusal)?;
                Ok(HookReply::json(pre_tool_answer(
                    "deny",
                    &format!("Tascer: {}", refusal.message),
                    None,
                )))
            }
        }
    }

    fn keep_pending(&self, record: &ToolRecord) -> Result<(), String> {
        let path = self.pending_path(&record.tool_use_id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text =
            serde_json::to_string(record).map_err(|e| format!("cannot encode the record: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    fn close_refused(&self, record: ToolRecord, refusal: &Refusal) -> Result<(), String> {
        self.close(
            record,
            &ToolOutput::error(refusal.message.clone()),
            ToolStatus::Blocked,
        )
    }

    fn close(
        &self,
        mut record: ToolRecord,
        output: &ToolOutput,
        status: ToolStatus,
    ) -> Result<(), String> {
        let text = output.content.to_text();
        let digest = self
            .ledger
            .put_evidence(&self.session_id, text.as_bytes())
            .map_err(|e| format!("cannot store evidence: {e}"))?;
        crate::proof::finish_record(&mut record, output, text, digest, status);
        self.ledger
            .close_tool_call(&self.session_id, &mut record)
            .map(|_| ())
            .map_err(|e| format!("cannot write the ledger: {e}"))
    }

    async fn post_tool_use(&self, input: &Value, event: &str) -> Result<HookReply, String> {
        let call = tool_call(input, &self.session_id, &self.cwd);
        let path = self.pending_path(&call.tool_use_id);
        let record = match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<ToolRecord>(&t).ok())
        {
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
                let payload = record
                    .to_payload()
                    .map_err(|e| format!("cannot encode the record: {e}"))?;
                self.append(EntryKind::ToolCallOpened, payload)?;
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
        let mode = input
            .get("permission_mode")
            .and_then(Value::as_str)
            .and_then(|m| m.parse::<PermissionMode>().ok());
        let (admission, _) = self.admission(mode)?;
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
        let mut record = record;
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
            }
        } else {
            output
        };
        self.close(record, &stored, status)?;
        let _ = std::fs::remove_file(&path);
        if reviewed.gate_failed {
            let message = reviewed
                .post_gates
                .iter()
                .filter(|g| !g.passed)
                .map(|g| format!("{}: {}", g.gate, g.message))
                .collect::<Vec<_>>()
                .join("; ");
            return Ok(HookReply::json(json!({
                "decision": "block",
                "reason": format!("Tascer validation failed: {message}"),
            })));
        }
        Ok(HookReply::nothing())
    }
}

/// True when an allow came from the safety chain (an LLM reviewer, or
/// low-risk auto-approve), which answers for the user.
fn approved_by_safety_chain(source: &DecisionSource) -> bool {
    match source {
        DecisionSource::Reviewer { .. } => true,
        DecisionSource::Policy { name } => name == tascer_guard::safety::AutoApprovePolicy::NAME,
        _ => false,
    }
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
        "source",
        "reason",
        "trigger",
        "message",
        "notification_type",
        "stop_hook_active",
    ] {
        if let (Some(v), Some(obj)) = (input.get(key), note.as_object_mut())
            && key != "source"
        {
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
