//! The safety chain under `tascer hook` (docs/reviewers.md): the reviewers
//! over the provider of Claude Code's environment, a failed call kept
//! between two hook processes for `error-acknowledge`, `intent-validate`
//! on Stop, and every event queued for the webhooks.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer_guard::admission::Admission;
use tascer_guard::hooks::HookEvent;
use tascer_guard::permissions::DenialHistory;
use tascer_guard::review::{FailedCall, ModelCall, ModelReply, ReviewModel, Reviewers};
use tascer_guard::settings::SafetyConfig;
use tascer_ledger::EntryKind;
use tascer_model::{ModelClient, ProviderConfig};
use tascer_store::Db;

use super::{HookReply, HookSession, event_note, text};
use crate::host::HostStep;
use crate::reviewer::{ModelReviewer, intent_blocks, verdict_entries};
use crate::transcript::ClaudeTranscript;
use tascer_webhook::{Source, Webhooks};

/// A reviewer model that cannot be reached (no provider configured): every
/// review fails, and its fail mode decides.
struct Unavailable {
    why: String,
}

impl ReviewModel for Unavailable {
    fn complete<'a>(&'a self, _call: &'a ModelCall) -> BoxFuture<'a, Result<ModelReply, String>> {
        Box::pin(async move { Err(self.why.clone()) })
    }

    fn default_model(&self) -> String {
        "(no provider)".to_string()
    }
}

impl HookSession {
    /// The home's local SQLite database, for the reviewers' cache and the
    /// webhook outbox (see [`crate::setup::local_db`]).
    fn local_db(&self) -> Result<Arc<Db>, String> {
        self.local_db
            .get_or_init(|| match self.ledger.store().sqlite_db() {
                Some(db) => Ok(Arc::clone(db)),
                None => Db::open(self.home.join("tascer.db"))
                    .map(Arc::new)
                    .map_err(|e| format!("cannot open the local store: {e}")),
            })
            .clone()
    }

    /// The reviewers the settings turn on, asking the provider of the
    /// environment Claude Code gives its hooks (`ANTHROPIC_API_KEY`, …).
    pub(super) fn reviewers(
        &self,
        safety: &SafetyConfig,
        transcript: &str,
    ) -> Option<Arc<Reviewers>> {
        if safety.reviewers.is_empty() {
            return None;
        }
        let model: Arc<dyn ReviewModel> =
            match ProviderConfig::from_env().and_then(ModelClient::new) {
                Ok(client) => {
                    let default = crate::session::default_model(client.config().kind);
                    Arc::new(ModelReviewer::new(client, default, None))
                }
                Err(err) => Arc::new(Unavailable {
                    why: format!("no model provider for the reviewers: {err}"),
                }),
            };
        let transcript = Arc::new(ClaudeTranscript {
            path: PathBuf::from(transcript),
        });
        match self.local_db() {
            Ok(db) => crate::reviewer::reviewers(&safety.reviewers, model, &db, transcript),
            Err(err) => {
                // The reviewers still answer, without a cache.
                tracing::warn!("reviewers run without a cache: {err}");
                let chain = Reviewers::new(safety.reviewers.clone(), model).transcript(transcript);
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
    pub(super) fn store_failure(&self, failure: Option<FailedCall>) -> Result<(), String> {
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
    pub(super) fn take_failure(&self) -> Option<FailedCall> {
        let path = self.failure_path();
        let taken = path.with_extension(format!("taken-{}", std::process::id()));
        std::fs::rename(&path, &taken).ok()?;
        let text = std::fs::read_to_string(&taken).ok();
        let _ = std::fs::remove_file(&taken);
        serde_json::from_str(&text?).ok()
    }

    /// The session's file under `<home>/claude-code/<what>/`.
    fn session_file(&self, what: &str) -> PathBuf {
        let pending = self.pending_path("_");
        let session = pending
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.home
            .join("claude-code")
            .join(what)
            .join(format!("{session}.json"))
    }

    /// Gives workaround detection the denials of the session's earlier
    /// calls (each call is a new process); returns them as restored.
    pub(super) fn restore_denials(&self, admission: &Admission) -> DenialHistory {
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
    pub(super) fn keep_denials(&self, admission: &Admission, before: &DenialHistory) {
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
    pub(super) async fn stop(&self, input: &Value) -> Result<HookReply, String> {
        self.write(
            vec![(EntryKind::Checkpoint, event_note(input, "Stop"))],
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
            .review_stop(&last, intent_blocks(&entries), stop_hook_active)
            .await;
        if !review.records.is_empty() {
            self.write(verdict_entries(&review.records), &[])?;
        }
        Ok(match review.block {
            Some(reason) => HookReply::json(&json!({"decision": "block", "reason": reason})),
            None => HookReply::nothing(),
        })
    }

    /// The last assistant text of the transcript.
    fn last_answer(&self) -> String {
        use tascer_guard::review::Transcript;
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

    /// Queues the event (as Claude Code sent it) and Tascer's answer for
    /// the webhooks; true when anything was queued.
    pub(super) fn webhook(&self, input: &Value, event: &str, reply: &HookReply) -> bool {
        let Ok(event) = event.parse::<HookEvent>() else {
            return false;
        };
        let hooks = match self.settings() {
            Ok(settings) => settings.webhooks(),
            Err(err) => {
                tracing::warn!("webhooks: {err}");
                return false;
            }
        };
        if hooks.is_empty() {
            return false;
        }
        let db = match self.local_db() {
            Ok(db) => db,
            Err(err) => {
                tracing::warn!("webhooks: {err}; the {} event is not sent", event.as_str());
                return false;
            }
        };
        let sink = match Webhooks::open(hooks, &db, Source::ClaudeCode) {
            Ok(Some(sink)) => sink,
            Ok(None) => return false,
            Err(err) => {
                tracing::warn!("webhooks: cannot open the outbox: {err}");
                return false;
            }
        };
        let answer = serde_json::from_str::<Value>(&reply.stdout).unwrap_or(Value::Null);
        let tascer = json!({
            "exit_code": reply.exit_code,
            "answer": answer,
            "message": Some(&reply.stderr).filter(|m| !m.is_empty()),
            "transcript_path": text(input, "transcript_path"),
        });
        sink.send(event, input.clone(), tascer)
    }
}
