//! The non-hook parts of governance for one session: the permission
//! engine, the validation gates and context capture, plus the session's
//! list of denied calls.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tascer_core::{PermissionDenial, ToolOutput};
use tascer_guard::gates::{
    GateContext, GateResult, GateRunner, GateToolOutput, GateVerdict, Phase, ValidationConfig,
    redact_with,
};
use tascer_guard::permissions::{
    Asker, Behavior, HookPermission, PermissionDecision, PermissionEngine, PermissionMode, ToolCall,
};
use tascer_ledger::GateOutcome;

use crate::agent::lock;
use crate::context_cache::{SharedCapturer, prewarm, shared_capturer};

/// Tools whose calls may change the worktree: context is refreshed after
/// them (unless the capturer watches the worktree).
const WRITING_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];

/// Permissions, gates and context of one session (shared by its agents).
pub(crate) struct Guard {
    permissions: Arc<PermissionEngine>,
    asker: Option<Arc<dyn Asker>>,
    gates: GateRunner,
    validation: ValidationConfig,
    secrets: Vec<String>,
    context_env: Vec<String>,
    /// The context capturer of the directory calls last ran in.
    capturer: Mutex<Option<(PathBuf, SharedCapturer)>>,
    denials: Mutex<Vec<PermissionDenial>>,
    answers_questions: bool,
}

/// What the gates of one phase said.
pub(crate) struct GateRun {
    /// Each gate's result.
    pub results: Vec<GateResult>,
    /// Their sum.
    pub verdict: GateVerdict,
}

impl GateRun {
    /// The results as the ledger records them.
    pub fn outcomes(&self) -> Vec<GateOutcome> {
        self.results
            .iter()
            .map(|r| GateOutcome {
                gate: r.gate.clone(),
                passed: r.passed,
                message: r.message.clone(),
                duration_ms: r.duration_ms,
            })
            .collect()
    }

    /// True when a failed gate found a secret (so stored evidence must be
    /// redacted).
    pub fn found_secrets(&self) -> bool {
        self.results
            .iter()
            .any(|r| !r.passed && r.gate == "no_secrets_leaked")
    }
}

impl Guard {
    /// A guard over these parts.
    pub fn new(
        permissions: Arc<PermissionEngine>,
        asker: Option<Arc<dyn Asker>>,
        gates: GateRunner,
        validation: ValidationConfig,
        secrets: Vec<String>,
        context_env: Vec<String>,
    ) -> Self {
        Guard {
            permissions,
            asker,
            gates,
            validation,
            secrets,
            context_env,
            capturer: Mutex::new(None),
            denials: Mutex::new(Vec::new()),
            answers_questions: false,
        }
    }

    /// Marks that a user answerer handles `AskUserQuestion`: the question
    /// itself is the human interaction, so its "ask" is settled by it.
    pub fn with_user_answerer(mut self, yes: bool) -> Self {
        self.answers_questions = yes;
        self
    }

    /// The permission engine.
    pub fn permissions(&self) -> &Arc<PermissionEngine> {
        &self.permissions
    }

    /// The current permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.permissions.mode()
    }

    /// The engine's decision (rules, policies, mode, `can_use_tool`); a
    /// call may still be at "ask" (see [`resolve_ask`](Self::resolve_ask)).
    pub async fn decide(&self, call: &ToolCall, hook: &HookPermission) -> PermissionDecision {
        self.permissions.decide_after_hook(call, hook).await
    }

    /// True when a human can be asked.
    pub fn can_ask(&self) -> bool {
        self.asker.is_some()
    }

    /// Resolves a call still at "ask": the asker, or (with none) a denial
    /// that says what would allow the call.
    pub async fn resolve_ask(
        &self,
        call: &ToolCall,
        decision: PermissionDecision,
    ) -> PermissionDecision {
        if decision.behavior != Behavior::Ask {
            return decision;
        }
        if call.tool_name == "AskUserQuestion" && self.answers_questions {
            let mut d = decision;
            d.behavior = Behavior::Allow;
            d.decided_by = tascer_guard::permissions::DecisionSource::User;
            d.reason = "the question goes to the user answerer".into();
            return d;
        }
        match &self.asker {
            Some(asker) => {
                self.permissions
                    .resolve_with_asker(call, decision, asker.as_ref())
                    .await
            }
            None => self.permissions.resolve_non_interactive(decision),
        }
    }

    /// Records a call that was not allowed to run (for the result's
    /// `permission_denials`).
    pub fn add_denial(&self, tool_name: &str, tool_use_id: &str, input: &Value) {
        lock(&self.denials).push(PermissionDenial {
            tool_name: tool_name.to_string(),
            tool_use_id: tool_use_id.to_string(),
            tool_input: input.clone(),
        });
    }

    /// The per-file check for files a tool finds itself (Grep, Glob):
    /// the permission engine decides each one.
    pub fn file_access(&self, cwd: &std::path::Path) -> Arc<dyn tascer_core::FileAccess> {
        self.permissions.file_access(cwd)
    }

    /// Records a denial made by a hook, for workaround detection.
    pub fn note_hook_denial(&self, call: &ToolCall, reason: &str) {
        self.permissions.record_denial(call, reason);
    }

    /// Takes the denials recorded since the last call.
    pub fn take_denials(&self) -> Vec<PermissionDenial> {
        std::mem::take(&mut *lock(&self.denials))
    }

    /// Runs the pre-gates configured for the tool.
    pub async fn pre_gates(&self, tool_name: &str, input: &Value, cwd: &Path) -> GateRun {
        let ctx = GateContext::new(Phase::Pre, tool_name, input.clone(), cwd.to_path_buf())
            .with_session_secrets(self.secrets.clone());
        self.run_gates(Phase::Pre, &ctx).await
    }

    /// Runs the post-gates configured for the tool on its output.
    pub async fn post_gates(
        &self,
        tool_name: &str,
        input: &Value,
        cwd: &Path,
        output: &ToolOutput,
    ) -> GateRun {
        let ctx = GateContext::new(Phase::Post, tool_name, input.clone(), cwd.to_path_buf())
            .with_session_secrets(self.secrets.clone())
            .with_output(GateToolOutput {
                text: output.content.to_text(),
                is_error: output.is_error,
                raw: output.raw.clone(),
            });
        self.run_gates(Phase::Post, &ctx).await
    }

    async fn run_gates(&self, phase: Phase, ctx: &GateContext) -> GateRun {
        if self
            .validation
            .for_tool(&ctx.tool_name)
            .gates(phase)
            .is_empty()
        {
            return GateRun {
                results: Vec::new(),
                verdict: GateVerdict::from_results(phase, &[]),
            };
        }
        let results = self.gates.run(phase, ctx, &self.validation).await;
        let verdict = GateVerdict::from_results(phase, &results);
        GateRun { results, verdict }
    }

    /// True when post-gate failures of this tool are reported to the model.
    pub fn tells_model(&self, tool_name: &str) -> bool {
        self.validation.for_tool(tool_name).tell_model_on_failure
    }

    /// True when the tool's validation keeps changed files as evidence.
    pub fn keeps_files(&self, tool_name: &str) -> bool {
        self.validation
            .for_tool(tool_name)
            .evidence
            .contains(&tascer_guard::gates::EvidenceKind::File)
    }

    /// Removes secrets (gitleaks rules and the session's own keys) from
    /// text before it is stored.
    pub fn redact(&self, text: &str) -> String {
        redact_with(text, &self.secrets)
    }

    /// The input as the ledger stores it: for tools checked by
    /// `no_secrets_leaked`, every string with secrets redacted.
    pub fn recorded_input(&self, tool_name: &str, input: &Value) -> Value {
        let v = self.validation.for_tool(tool_name);
        let scanned = v
            .pre_gates
            .iter()
            .chain(&v.post_gates)
            .any(|g| g == "no_secrets_leaked");
        if scanned {
            redact_strings(input, &self.secrets)
        } else {
            input.clone()
        }
    }

    /// The (process-wide) context capturer for `cwd`, made this session's.
    fn capturer_for(&self, cwd: &Path) -> SharedCapturer {
        let mut slot = lock(&self.capturer);
        match slot.as_ref() {
            Some((dir, capturer)) if dir == cwd => Arc::clone(capturer),
            _ => {
                let capturer = shared_capturer(cwd, &self.context_env);
                *slot = Some((cwd.to_path_buf(), Arc::clone(&capturer)));
                capturer
            }
        }
    }

    /// Starts the first context capture in `cwd` in the background (see
    /// [`crate::context_cache`]).
    pub fn prewarm_context(&self, cwd: &Path) {
        prewarm(&self.capturer_for(cwd));
    }

    /// The context of a call made in `cwd`: git state, allowlisted
    /// environment, cwd and version.
    pub fn capture_context(&self, cwd: &Path, env: &HashMap<String, String>) -> Value {
        let capturer = self.capturer_for(cwd);
        let vars = self
            .context_env
            .iter()
            .filter_map(|k| {
                env.get(k)
                    .cloned()
                    .or_else(|| std::env::var(k).ok())
                    .map(|v| (k.clone(), v))
            })
            .collect();
        let snapshot = lock(&capturer).capture_with_env(vars);
        serde_json::to_value(snapshot)
            .unwrap_or_else(|_| json!({ "cwd": cwd.display().to_string() }))
    }

    /// After a call ran: a successful `ExitPlanMode` ends plan mode (back
    /// to `default`), and the cached git state is marked stale after a call
    /// that may have written to the worktree.
    pub fn after_call(&self, tool_name: &str, succeeded: bool) {
        if tool_name == "ExitPlanMode"
            && succeeded
            && self.permissions.mode() == PermissionMode::Plan
            && let Err(err) = self.permissions.set_mode(PermissionMode::Default)
        {
            tracing::warn!("cannot leave plan mode: {err}");
        }
        if WRITING_TOOLS.contains(&tool_name)
            && let Some((_, capturer)) = lock(&self.capturer).as_ref()
        {
            lock(capturer).worktree_may_have_changed();
        }
    }
}

/// `value` with secrets redacted from every string in it.
fn redact_strings(value: &Value, secrets: &[String]) -> Value {
    match value {
        Value::String(s) => Value::String(redact_with(s, secrets)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_strings(v, secrets)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_strings(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The permission decision as recorded in the ledger.
pub(crate) fn decision_record(
    decision: &PermissionDecision,
    tool_name: &str,
    tool_use_id: &str,
    mode: PermissionMode,
) -> Value {
    let mut value = serde_json::to_value(decision).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.insert("tool".into(), json!(tool_name));
        obj.insert("tool_use_id".into(), json!(tool_use_id));
        obj.insert("mode".into(), json!(mode.as_str()));
    }
    value
}

/// The files a writing call names (absolute), for file evidence.
pub(crate) fn changed_files(tool_name: &str, input: &Value, cwd: &Path) -> Vec<PathBuf> {
    GateContext::new(Phase::Post, tool_name, input.clone(), cwd.to_path_buf()).changed_files
}
