//! The safety chain under `tascer hook` (docs/reviewers.md): the
//! governance of an event's step with the reviewers the settings turn on
//! (asking the provider of Claude Code's environment), a failed call kept
//! between two hook processes for `error-acknowledge`, the denials kept for
//! workaround detection, and `intent-validate` on Stop.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tascer::host::{HostGovernance, HostStep};
use tascer::reviewer::{ModelReviewer, intent_blocks, verdict_entries};
use tascer_core::HookEvent;
use tascer_guard::admission::Admission;
use tascer_guard::permissions::DenialHistory;
use tascer_guard::reviewers::{FailedCall, ReviewModel, Reviewers};
use tascer_guard::settings::SafetyConfig;
use tascer_hook_client::Reply as HookReply;
use tascer_ledger::EntryKind;
use tascer_model::{ModelClient, ProviderConfig};

use crate::session::{HookSession, event_note};
use crate::transcript::ClaudeTranscript;

/// How long a hook answer may take unless `safety.hookDeadlineMs` says
/// otherwise: safely below the 30 s timeout install writes, so that the
/// answer is Tascer's (the fail mode's, when a reviewer is late) and not
/// Claude Code's, which lets a call through when its hook times out.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(20);

impl HookSession {
    /// Tascer's governance for this event's step, in the event's
    /// permission mode, with the reviewers the settings turn on.
    pub(crate) fn governance(
        &self,
        input: &Value,
        step: HostStep,
    ) -> Result<HostGovernance, String> {
        let settings = self.settings()?;
        let caller = input.get("permission_mode").and_then(Value::as_str);
        let mode = settings.mode_for_caller(caller);
        if let Some(replaced) = &mode.replaced {
            tracing::info!("{replaced}");
        }
        let governance = HostGovernance::from_settings(settings, &self.cwd, Some(mode.mode), step)
            .map_err(|e| format!("cannot build Tascer's governance from its settings: {e}"))?;
        let deadline = governance.safety().hook_deadline.unwrap_or(HOOK_DEADLINE);
        let reviewers = self.reviewers(governance.safety(), &self.hook_common.transcript_path);
        Ok(governance
            .with_reviewers(reviewers)
            .with_deadline(Some(deadline)))
    }

    /// The reviewers the settings turn on, asking the provider of the
    /// environment Claude Code gives its hooks (`ANTHROPIC_API_KEY`, …).
    /// With no provider there is no model to ask: no reviewer runs (in
    /// `auto` mode what they would have answered is refused; in the other
    /// modes Claude Code asks its user), and a warning says why.
    fn reviewers(&self, safety: &SafetyConfig, transcript: &str) -> Option<Arc<Reviewers>> {
        if safety.reviewers.is_empty() {
            return None;
        }
        let model: Arc<dyn ReviewModel> =
            match ProviderConfig::from_env().and_then(ModelClient::new) {
                Ok(client) => {
                    let default = tascer::default_model(client.config().kind);
                    Arc::new(ModelReviewer::new(client, default, None))
                }
                Err(err) => {
                    tracing::warn!("the reviewers are off: no model provider ({err})");
                    return None;
                }
            };
        let transcript = Arc::new(ClaudeTranscript {
            path: PathBuf::from(transcript),
        });
        // The project's CLAUDE.md & co., from the project root the
        // settings are found at (the hook's cwd may be a subdirectory).
        let instructions =
            tascer::reviewer::project_instructions(&tascer::host::project_root(&self.cwd));
        match self.local_db() {
            Ok(db) => {
                tascer::reviewer::reviewers(&safety.reviewers, model, &db, transcript, instructions)
            }
            Err(err) => {
                // The reviewers still answer, without a cache.
                tracing::warn!("reviewers run without a cache: {err}");
                let chain = Reviewers::new(safety.reviewers.clone(), model)
                    .transcript(transcript)
                    .instructions(instructions);
                Some(Arc::new(chain))
            }
        }
    }

    /// Where a failed call waits for the session's next `PreToolUse`:
    /// `<home>/claude-code/failures/<session>.json`.
    fn failure_path(&self) -> PathBuf {
        self.session_file("failures")
    }

    /// Keeps a failed call for the next `PreToolUse` (error-acknowledge).
    pub(crate) fn store_failure(&self, failure: Option<FailedCall>) -> Result<(), String> {
        let Some(failure) = failure else {
            return Ok(());
        };
        let path = self.failure_path();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string(&failure)
            .map_err(|e| format!("cannot encode the failed call: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Takes the failed call kept by an earlier `PostToolUseFailure`. Of
    /// calls admitted at once (Claude Code runs them in parallel), one
    /// takes it: the file is renamed before it is read.
    pub(crate) fn take_failure(&self) -> Option<FailedCall> {
        let path = self.failure_path();
        let taken = path.with_extension(format!("taken-{}", std::process::id()));
        std::fs::rename(&path, &taken).ok()?;
        let text = std::fs::read_to_string(&taken).ok();
        let _ = std::fs::remove_file(&taken);
        serde_json::from_str(&text?).ok()
    }

    /// Gives workaround detection the denials of the session's earlier
    /// calls (each call is a new process); returns them as restored.
    pub(crate) fn restore_denials(&self, admission: &Admission) -> DenialHistory {
        let history = std::fs::read_to_string(self.session_file("denials"))
            .ok()
            .and_then(|text| serde_json::from_str::<DenialHistory>(&text).ok())
            .unwrap_or_default();
        if !history.is_empty() {
            admission.permissions().restore_denials(history.clone());
        }
        history
    }

    /// Keeps the denials for the session's next call when this one added
    /// any. A failure to keep them is logged: the call's decision stands.
    pub(crate) fn keep_denials(&self, admission: &Admission, before: &DenialHistory) {
        let now = admission.permissions().denial_history();
        if now == *before {
            return;
        }
        let path = self.session_file("denials");
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let text = serde_json::to_string(&now).map_err(std::io::Error::other)?;
                // Written whole, then renamed: a concurrent call reads the
                // old or the new history, never half of one.
                let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
                std::fs::write(&tmp, text)?;
                std::fs::rename(&tmp, &path)
            });
        if let Err(err) = written {
            tracing::warn!(
                "cannot keep the denial history in {}: {err}",
                path.display()
            );
        }
    }

    /// `Stop`: a checkpoint, then `intent-validate` when it is on; a "no"
    /// answers `{"decision": "block", "reason": …}` so Claude goes on.
    pub(crate) async fn stop(&self, input: &Value) -> Result<HookReply, String> {
        self.write(
            vec![(EntryKind::Checkpoint, event_note(input, HookEvent::Stop))],
            &[],
        )?;
        let governance = self.governance(input, HostStep::Review)?;
        let admission = governance.admission();
        if !admission
            .reviewer_chain()
            .is_some_and(|r| r.validates_stops())
        {
            return Ok(HookReply::nothing());
        }
        let entries = self
            .ledger
            .store()
            .entries(&self.session_id)
            .map_err(|e| format!("cannot read the ledger: {e}"))?;
        let stop_hook_active = input
            .get("stop_hook_active")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let last = match input.get("last_assistant_message").and_then(Value::as_str) {
            Some(text) => text.to_string(),
            None => self.last_answer(),
        };
        let review = admission
            .validate_stop(&last, intent_blocks(&entries), stop_hook_active)
            .await;
        if !review.records.is_empty() {
            self.write(verdict_entries(&review.records), &[])?;
            self.note_agents(&review.records, review.block.as_deref());
        }
        Ok(match review.block {
            Some(reason) => HookReply::json(&json!({"decision": "block", "reason": reason})),
            None => HookReply::nothing(),
        })
    }

    /// The last assistant text of the transcript.
    fn last_answer(&self) -> String {
        use tascer_guard::reviewers::Transcript;
        let transcript = ClaudeTranscript {
            path: PathBuf::from(&self.hook_common.transcript_path),
        };
        transcript
            .excerpt(8)
            .messages
            .into_iter()
            .rev()
            .find(|m| m.role == "assistant" && !m.text.is_empty())
            .map(|m| m.text)
            .unwrap_or_default()
    }
}
