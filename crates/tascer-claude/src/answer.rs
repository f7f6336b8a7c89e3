//! The answer to one hook event: parsed, its session opened, each event
//! answered by a function of its own, the event queued for the webhooks.
//!
//! Each event builds only what it needs, because the process runs on every
//! tool call: `PreToolUse` builds the permission engine and pre-gates,
//! `PostToolUse` only the post-gates, the other events only open the
//! ledger (and read the settings only when they need the reviewers or the
//! webhooks). `Stop` and the reviewers are in `safety.rs`.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tascer::DEFAULT_CONTEXT_ENV;
use tascer::host::{
    HostAnswer, HostStep, decision_record, gate_outcomes, hook_records, hook_run_entries,
};
use tascer::host_sandbox::HostBashSandbox;
use tascer_core::{HookEvent, ToolCall, ToolOutput};
use tascer_guard::admission::CallRequest;
use tascer_hook_client::Reply as HookReply;
use tascer_ledger::{EntryKind, Evidence, GitHeads, Ledger, ToolRecord, ToolStatus};

use crate::session::{HookSession, Warm, encode, event_note, now, text};

/// Answers one Claude Code hook event. `stdin` is the event's JSON,
/// `home` Tascer's home (`$TASCER_HOME`: the ledger and user settings).
///
/// A `PreToolUse` event Tascer cannot decide (unreadable settings, a
/// ledger that cannot be written) is refused (exit 2, fail closed); other
/// events report such errors without blocking (exit 1).
pub async fn answer(stdin: &str, home: &Path) -> HookReply {
    answer_with(stdin, home, None).await
}

/// [`answer`] with the home's ledger already open
/// ([`open_ledger`](crate::open_ledger)), as the hook server keeps it
/// between events; `None` opens it for this event.
pub async fn answer_with(stdin: &str, home: &Path, ledger: Option<Arc<Ledger>>) -> HookReply {
    let warm = Warm {
        ledger,
        ..Warm::default()
    };
    let (reply, session) = answer_leaving_open(stdin, home, warm).await;
    if let Some(session) = session {
        session.close();
    }
    reply
}

/// [`answer_with`], returning the event's session still open: the hook
/// server sends the answer first and closes the session
/// ([`HookSession::close_kept_open`]: the store's WAL checkpointed once
/// it has grown) after, off the time Claude Code waits. Everything the answer depends on, the ledger's
/// entries included, is written before it returns.
pub(crate) async fn answer_leaving_open(
    stdin: &str,
    home: &Path,
    warm: Warm,
) -> (HookReply, Option<HookSession>) {
    let input: Value = match serde_json::from_str(stdin) {
        Ok(v) => v,
        Err(e) => {
            let reply = HookReply::error(
                1,
                format!(
                    "tascer hook: the hook input is not JSON ({e}); expected Claude Code's hook event on standard input"
                ),
            );
            return (reply, None);
        }
    };
    let event = text(&input, "hook_event_name");
    let known = event.parse::<HookEvent>().ok();
    // A PreToolUse that cannot be decided is refused; anything else only
    // reports the problem.
    let error_code = if known == Some(HookEvent::PreToolUse) {
        2
    } else {
        1
    };
    let Some(session_id) = input.get("session_id").and_then(Value::as_str) else {
        let reply = HookReply::error(
            error_code,
            format!("tascer hook: the {event} hook input has no session_id"),
        );
        return (reply, None);
    };
    let session = match HookSession::open(&input, session_id, home, warm) {
        Ok(session) => session,
        Err(message) => {
            let reply = HookReply::error(error_code, format!("tascer hook: {message}"));
            return (reply, None);
        }
    };
    let result = match known {
        Some(known) => session.answer(&input, known).await,
        None => Err(not_handled(&event)),
    };
    let mut reply = result
        .unwrap_or_else(|message| HookReply::error(error_code, format!("tascer hook: {message}")));
    reply.webhooks_queued = known.is_some_and(|known| session.webhook(&input, known, &reply));
    (reply, Some(session))
}

impl HookSession {
    /// Answers `event`: each event has its own function.
    async fn answer(&self, input: &Value, event: HookEvent) -> Result<HookReply, String> {
        match event {
            HookEvent::PreToolUse => self.pre_tool_use(input).await,
            HookEvent::PostToolUse => self.post_tool_use(input, false).await,
            HookEvent::PostToolUseFailure => self.post_tool_use(input, true).await,
            HookEvent::UserPromptSubmit => self.user_prompt_submit(input),
            HookEvent::SessionEnd => self.session_end(input),
            HookEvent::Stop => self.stop(input).await,
            HookEvent::SessionStart
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::Notification => self.checkpoint(input, event),
            other => Err(not_handled(other.as_str())),
        }
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
        record.context = head_context(&self.cwd, self.heads.as_deref());
        let (admitted, answer) = governance.admit(&call, self.hook_common.clone()).await;
        self.keep_denials(admission, &denials);
        record.hooks = hook_records(&admitted.hooks.runs);
        if let Some(decision) = &admitted.decision {
            record.permission = decision_record(
                decision,
                &call.tool_name,
                &call.tool_use_id,
                admission.mode(),
                &record.input,
            );
        }
        record.pre_gates = gate_outcomes(&admitted.pre_gates);
        let opened = record
            .to_payload()
            .map_err(|e| format!("cannot encode the record: {e}"))?;
        let mut entries = vec![(EntryKind::ToolCallOpened, opened)];
        entries.extend(hook_run_entries(
            &admitted.hooks.runs,
            Some(&call.tool_use_id),
        ));
        entries.extend(tascer::reviewer::verdict_entries(&admitted.reviews));
        if admitted.decision.is_some() {
            entries.push((EntryKind::PermissionDecision, record.permission.clone()));
        }
        let told = match &answer {
            HostAnswer::Deny { reason } => Some(reason.as_str()),
            _ => None,
        };
        self.note_agents(&admitted.reviews, told);
        if let HostAnswer::Deny { reason } = &answer {
            // Refused: the record is closed in the same transaction.
            let message = match &admitted.verdict {
                Err(refusal) => refusal.message.clone(),
                Ok(_) => reason.clone(),
            };
            let output = ToolOutput::error(message);
            let evidence = close_record(&mut record, &output, ToolStatus::Blocked)?;
            entries.push((EntryKind::ToolRecord, record.to_payload().map_err(encode)?));
            let hash = self.write(entries, &[evidence])?;
            self.observe_tool(input, &record, hash, &admitted.reviews);
            return Ok(HookReply::json(&pre_tool_answer("deny", reason, None)));
        }
        let reply = match self.sandboxed(&call, &answer)? {
            Some((decision, reason, wrapped)) => {
                record.context["sandbox"] = json!({ "claude_code_bash": true });
                HookReply::json(&pre_tool_answer(decision, &reason, Some(wrapped)))
            }
            None => match answer {
                HostAnswer::Ask { reason } => {
                    HookReply::json(&pre_tool_answer("ask", &reason, None))
                }
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
                _ => HookReply::nothing(),
            },
        };
        // The opened record carries the sandbox note too.
        if let Some((EntryKind::ToolCallOpened, opened)) = entries.first_mut() {
            *opened = record.to_payload().map_err(encode)?;
        }
        self.write(entries, &[])?;
        self.keep_pending(&record)?;
        Ok(reply)
    }

    /// With `sandbox.claudeCodeBash`, a Bash call Tascer lets run is
    /// answered with its command rewritten to run through `tascer sandbox`:
    /// allowed when Tascer allows it, asked (showing the rewritten command)
    /// when Claude Code or Tascer would ask. The decision, its reason and
    /// the rewritten input; `None` to answer as without the setting.
    fn sandboxed(
        &self,
        call: &ToolCall,
        answer: &HostAnswer,
    ) -> Result<Option<(&'static str, String, Value)>, String> {
        if call.tool_name != "Bash" {
            return Ok(None);
        }
        let project = tascer::host::project_root(&self.cwd);
        let Some(sandbox) = HostBashSandbox::from_settings(
            self.settings()?,
            &project,
            &self.home,
            &self.session_id,
        )
        .map_err(|e| format!("cannot set up the sandbox for Claude Code's Bash: {e}"))?
        else {
            return Ok(None);
        };
        let note = "runs under Tascer's OS sandbox (sandbox.claudeCodeBash)";
        let (decision, reason, input) = match answer {
            HostAnswer::Run { updated_input } => (
                "allow",
                format!("Tascer: {note}"),
                updated_input.as_ref().unwrap_or(&call.input),
            ),
            HostAnswer::Approve { reason } => ("allow", format!("{reason}; {note}"), &call.input),
            HostAnswer::Ask { reason } => ("ask", format!("{reason}; {note}"), &call.input),
            HostAnswer::HostDecides => ("ask", format!("Tascer: {note}"), &call.input),
            _ => return Ok(None),
        };
        Ok(sandbox
            .wrap(&call.tool_name, input)
            .map(|wrapped| (decision, reason, wrapped)))
    }

    /// `PostToolUse` / `PostToolUseFailure`: review (post-gates and
    /// Tascer's hooks); the call's record is closed with the output as
    /// evidence.
    async fn post_tool_use(&self, input: &Value, failed: bool) -> Result<HookReply, String> {
        let call = tool_call(input, &self.session_id, &self.cwd);
        let pending_calls = self.pending_calls()?;
        let pending = pending_calls
            .get(&self.session_id, &call.tool_use_id)
            .map_err(|e| format!("cannot read the call's pending record: {e}"))?
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
        let output = if failed {
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
        record.hooks.extend(hook_records(&reviewed.hooks.runs));
        entries.extend(hook_run_entries(
            &reviewed.hooks.runs,
            Some(&call.tool_use_id),
        ));
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
        let hash = self.write(entries, &[evidence])?;
        self.observe_tool(input, &record, hash, &[]);
        if let Err(err) = pending_calls.remove(&self.session_id, &call.tool_use_id) {
            // The call is closed on record; a leftover row only waits out
            // its age.
            tracing::warn!("cannot remove the call's pending record: {err}");
        }
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
        self.observe_end(input);
        Ok(HookReply::nothing())
    }

    /// `SessionStart`, `Stop`, `SubagentStop`, `PreCompact`,
    /// `Notification`: a `checkpoint` entry naming the event.
    fn checkpoint(&self, input: &Value, event: HookEvent) -> Result<HookReply, String> {
        self.write(vec![(EntryKind::Checkpoint, event_note(input, event))], &[])?;
        Ok(HookReply::nothing())
    }

    fn keep_pending(&self, record: &ToolRecord) -> Result<(), String> {
        let text = serde_json::to_string(record).map_err(encode)?;
        self.pending_calls()?
            .put(&self.session_id, &record.tool_use_id, &text)
            .map_err(|e| format!("cannot keep the call's record for its PostToolUse: {e}"))
    }
}

/// Closes `record` with `output` (sealed, its proof hash set) and returns
/// the output's evidence, to be written in the same transaction.
/// Why an event `tascer hook` does not answer gets no answer.
fn not_handled(event: &str) -> String {
    format!("the {event} event is not handled; nothing recorded")
}

fn close_record(
    record: &mut ToolRecord,
    output: &ToolOutput,
    status: ToolStatus,
) -> Result<Evidence, String> {
    let text = output.content.to_text();
    let evidence = Evidence::new(text.clone().into_bytes());
    record.finish(output, text, evidence.digest().to_string(), status);
    record.seal().map_err(encode)?;
    Ok(evidence)
}

/// The context of a call as one hook process can afford to capture it:
/// the cwd, the allowlisted environment and where git's `HEAD` points.
/// The worktree status (changed and untracked files, diff digest) is not
/// captured: it walks the whole worktree, on every call, in a new process
/// each time. The record says so (`git_status`).
fn head_context(cwd: &Path, heads: Option<&GitHeads>) -> Value {
    let env: serde_json::Map<String, Value> = DEFAULT_CONTEXT_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_string(), json!(v))))
        .collect();
    let mut context = json!({
        "cwd": cwd.display().to_string(),
        "tascer_version": tascer::VERSION,
        "env": env,
        "captured_at": now(),
        "git_status": "not captured: tascer hook records HEAD only",
    });
    let head = match heads {
        Some(heads) => heads.head(cwd),
        None => tascer_ledger::git_head(cwd),
    };
    match head {
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
