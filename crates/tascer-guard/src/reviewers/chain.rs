//! [`Reviewers`]: runs the configured reviewers — cache, model call under
//! a timeout, strict parsing, fail mode — and says what their verdicts
//! mean for a call or a stop.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};
use tascer_core::ToolCall;

use super::approve::CallQuestion;
use super::intent::correction;
use super::memory::InstructionFile;
use super::prompt::{input_text, parse_verdict, shown, system_prompt, transcript_text};
use super::{
    CachedVerdict, FailMode, ModelCall, ReviewCache, ReviewModel, ReviewOutcome, ReviewRecord,
    ReviewerConfig, ReviewerKind, ReviewersConfig, Transcript, TranscriptExcerpt,
};

/// A tool call that ran and failed, waiting for the agent to acknowledge it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FailedCall {
    /// Its tool.
    pub tool_name: String,
    /// Its input.
    pub input: Value,
    /// Its `tool_use` id.
    pub tool_use_id: String,
    /// What the tool reported.
    pub error: String,
}

/// What the reviewers said about a call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReview {
    /// True when the call may run.
    pub allowed: bool,
    /// The deciding reviewer.
    pub by: ReviewerKind,
    /// Its reason (for the model when refused).
    pub reason: String,
    /// Every verdict, in order.
    pub records: Vec<ReviewRecord>,
}

/// What `intent-validate` said about a stop.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StopReview {
    /// `Some(correction)`: do not stop; go on with this instruction.
    pub block: Option<String>,
    /// Its verdict (none when it was not asked).
    pub records: Vec<ReviewRecord>,
}

/// One question for one reviewer.
pub(super) struct Question {
    pub(super) kind: ReviewerKind,
    pub(super) user: String,
    /// What the verdict depends on besides the reviewer and model.
    pub(super) key: Value,
    pub(super) call: Option<(String, String)>,
}

/// The reviewers of a session.
pub struct Reviewers {
    pub(super) config: ReviewersConfig,
    model: Arc<dyn ReviewModel>,
    cache: Option<Arc<dyn ReviewCache>>,
    transcript: Option<Arc<dyn Transcript>>,
    /// Claude Code's configuration directory (`plan-validate` looks in
    /// its `plans/`).
    claude_dir: Option<PathBuf>,
    /// Its `plans/` directory, resolved once when first needed.
    pub(super) plans_dir: OnceLock<Option<PathBuf>>,
    instructions: Vec<InstructionFile>,
}

impl std::fmt::Debug for Reviewers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reviewers")
            .field("config", &self.config)
            .field("cache", &self.cache.is_some())
            .field("transcript", &self.transcript.is_some())
            .field("instructions", &self.instructions.len())
            .finish_non_exhaustive()
    }
}

impl Reviewers {
    /// The reviewers `config` turns on, asking `model`.
    pub fn new(config: ReviewersConfig, model: Arc<dyn ReviewModel>) -> Self {
        Reviewers {
            config,
            model,
            cache: None,
            transcript: None,
            claude_dir: tascer_settings::claude_config_dir(),
            plans_dir: OnceLock::new(),
            instructions: Vec::new(),
        }
    }

    /// Claude Code's configuration directory, whose `plans/` holds the
    /// plans `plan-validate` checks (default `$CLAUDE_CONFIG_DIR`, else
    /// `~/.claude`).
    pub fn claude_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.claude_dir = dir;
        self.plans_dir = OnceLock::new();
        self
    }

    /// Claude Code's configuration directory, if known.
    pub(super) fn claude_config_dir(&self) -> Option<&PathBuf> {
        self.claude_dir.as_ref()
    }

    /// Reuses verdicts kept in `cache`.
    pub fn cache(mut self, cache: Arc<dyn ReviewCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Shows reviewers this conversation.
    pub fn transcript(mut self, transcript: Arc<dyn Transcript>) -> Self {
        self.transcript = Some(transcript);
        self
    }

    /// Shows `tool-approve` and `tool-appeal` the project's instruction
    /// files (`CLAUDE.md`, …): the user's standing wishes.
    pub fn instructions(mut self, files: Vec<InstructionFile>) -> Self {
        self.instructions = files;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ReviewersConfig {
        &self.config
    }

    /// True when `tool-approve` answers calls the rules would ask about.
    pub fn approves_calls(&self) -> bool {
        self.config.tool_approve.is_some()
    }

    /// True when `error-acknowledge` checks calls after a failure.
    pub fn checks_failures(&self) -> bool {
        self.config.error_acknowledge.is_some()
    }

    /// True when `intent-validate` checks stops.
    pub fn validates_stops(&self) -> bool {
        self.config.intent_validate.is_some()
    }

    pub(super) fn excerpt(&self, config: &ReviewerConfig) -> TranscriptExcerpt {
        match &self.transcript {
            Some(t) if config.context_messages > 0 => t.excerpt(config.context_messages),
            Some(t) => TranscriptExcerpt {
                request: t.excerpt(1).request,
                messages: Vec::new(),
            },
            None => TranscriptExcerpt::default(),
        }
    }

    /// `tool-approve` on a call the rules would ask about (`why`: their
    /// reason), then — when it denies — `tool-appeal` with recent
    /// transcript context, whose verdict is final. Without `tool-approve`
    /// the call is not reviewed (`None`). Past `deadline` (the host's
    /// answer is due) a reviewer still waiting fails, and its fail mode
    /// decides.
    pub async fn approve(
        &self,
        call: &ToolCall,
        why: &str,
        deadline: Option<Instant>,
    ) -> Option<CallReview> {
        let config = self.config.tool_approve.as_ref()?;
        let call_id = Some((call.tool_name.clone(), call.tool_use_id.clone()));
        let question = CallQuestion {
            call,
            why,
            instructions: &self.instructions,
        };
        let (user, key) = question.approve(&self.excerpt(config));
        let approve = self
            .run(
                config,
                Question {
                    kind: ReviewerKind::ToolApprove,
                    user,
                    key,
                    call: call_id.clone(),
                },
                deadline,
            )
            .await;
        let denied_by_reviewer = !approve.passed && approve.outcome == ReviewOutcome::Decided;
        let mut review = CallReview {
            allowed: approve.passed,
            by: ReviewerKind::ToolApprove,
            reason: approve.reason.clone(),
            records: vec![approve],
        };
        let Some(appeal_config) = self
            .config
            .tool_appeal
            .as_ref()
            .filter(|_| denied_by_reviewer)
        else {
            return Some(review);
        };
        let (user, key) = question.appeal(&review.reason, &self.excerpt(appeal_config));
        let appeal = self
            .run(
                appeal_config,
                Question {
                    kind: ReviewerKind::ToolAppeal,
                    user,
                    key,
                    call: call_id,
                },
                deadline,
            )
            .await;
        review.allowed = appeal.passed;
        review.by = ReviewerKind::ToolAppeal;
        // OVERTURN: the appeal's reason is the decision's. UPHOLD: the
        // first reviewer's reason stays, with the appeal's beside it.
        review.reason = if appeal.passed {
            appeal.reason.clone()
        } else {
            format!(
                "{} (upholding tool-approve: {})",
                appeal.reason, review.reason
            )
        };
        review.records.push(appeal);
        Some(review)
    }

    /// `error-acknowledge`: does `next` (with the agent's latest message)
    /// acknowledge `failure`? `None` when the reviewer is off. Past
    /// `deadline` the review fails, and its fail mode decides.
    pub async fn acknowledge(
        &self,
        failure: &FailedCall,
        next: &ToolCall,
        deadline: Option<Instant>,
    ) -> Option<CallReview> {
        let config = self.config.error_acknowledge.as_ref()?;
        let excerpt = self.excerpt(config);
        let latest = excerpt
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "assistant")
            .map_or_else(|| "(not available)".to_string(), |m| shown(&m.text));
        let user = format!(
            "The failed tool call:\ntool: {}\ninput: {}\nerror: {}\n\nThe agent's latest \
             message:\n{latest}\n\nThe call it makes next:\ntool: {}\ninput: {}\n\nRecent \
             conversation (oldest first):\n{}",
            failure.tool_name,
            input_text(&failure.input),
            shown(&failure.error),
            next.tool_name,
            input_text(&next.input),
            transcript_text(&excerpt)
        );
        let record = self
            .run(
                config,
                Question {
                    kind: ReviewerKind::ErrorAcknowledge,
                    user,
                    key: json!({
                        "failed": failure,
                        "latest": latest,
                        "next_tool": next.tool_name,
                        "next_input": next.input,
                    }),
                    call: Some((next.tool_name.clone(), next.tool_use_id.clone())),
                },
                deadline,
            )
            .await;
        let reason = if record.passed {
            record.reason.clone()
        } else {
            format!(
                "Not run: the earlier {} call failed ({}) and this call carries on as if it had \
                 succeeded. Address that failure first — look into it, fix it or work around \
                 it, or tell the user — then continue. (error-acknowledge: {})",
                failure.tool_name,
                shown(&first_line(&failure.error)),
                record.reason
            )
        };
        Some(CallReview {
            allowed: record.passed,
            by: ReviewerKind::ErrorAcknowledge,
            reason,
            records: vec![record],
        })
    }

    /// `intent-validate` on a stop: `last_answer` is the agent's final
    /// text, `blocks_so_far` how many stops it blocked in this session.
    /// A stop that a Stop hook already sent back (`stop_hook_active`) is
    /// not reviewed again, and none is blocked once `maxBlocks` is
    /// reached (that skip is recorded). Past `deadline` the review fails,
    /// and its fail mode decides.
    pub async fn validate_stop(
        &self,
        last_answer: &str,
        blocks_so_far: u32,
        stop_hook_active: bool,
        deadline: Option<Instant>,
    ) -> StopReview {
        let Some(config) = self.config.intent_validate.as_ref() else {
            return StopReview::default();
        };
        if stop_hook_active {
            return StopReview::default();
        }
        if blocks_so_far >= config.max_blocks {
            let record = ReviewRecord {
                reviewer: ReviewerKind::IntentValidate,
                model: String::new(),
                passed: true,
                reason: format!(
                    "not asked: it already blocked {blocks_so_far} stop(s) in this session \
                     (maxBlocks {})",
                    config.max_blocks
                ),
                outcome: ReviewOutcome::Skipped,
                error: None,
                duration: std::time::Duration::ZERO,
                cache_hit: false,
                call: None,
                usage: None,
            };
            return StopReview {
                block: None,
                records: vec![record],
            };
        }
        let excerpt = self.excerpt(config);
        let request = excerpt
            .request
            .clone()
            .unwrap_or_else(|| "(not available)".into());
        let user = format!(
            "The user's request:\n{}\n\nThe agent's final answer:\n{}\n\nRecent conversation \
             (oldest first):\n{}",
            shown(&request),
            shown(last_answer),
            transcript_text(&excerpt)
        );
        let record = self
            .run(
                config,
                Question {
                    kind: ReviewerKind::IntentValidate,
                    user,
                    key: json!({
                        "request": request,
                        "answer": last_answer,
                        "transcript": transcript_text(&excerpt),
                    }),
                    call: None,
                },
                deadline,
            )
            .await;
        // The reason starts with the failed check's name (`re-asked: …`).
        let block = (!record.passed).then(|| correction(&record.reason));
        StopReview {
            block,
            records: vec![record],
        }
    }

    /// The model id a reviewer asks: the configured model (an alias
    /// resolved), else the reviewer's class where the provider knows the
    /// aliases, else the default. The id recorded and keyed is the one
    /// sent.
    fn model_id(&self, config: &ReviewerConfig, kind: ReviewerKind) -> String {
        match &config.model {
            Some(model) => self.model.resolve_model(model),
            None => self
                .model
                .class_model(kind.default_model_class())
                .unwrap_or_else(|| self.model.default_model()),
        }
    }

    /// Asks one reviewer: the cache, else the model under the timeout (or
    /// until `deadline`, when that comes first); a failure is decided by
    /// the fail mode.
    pub(super) async fn run(
        &self,
        config: &ReviewerConfig,
        q: Question,
        deadline: Option<Instant>,
    ) -> ReviewRecord {
        let started = Instant::now();
        let model = self.model_id(config, q.kind);
        let key = json!({"reviewer": q.kind.name(), "model": model, "question": q.key});
        let cache = self.cache.as_ref().filter(|_| !config.cache_ttl.is_zero());
        let record = |passed, reason: String, outcome, error, model: String, usage| ReviewRecord {
            reviewer: q.kind,
            model,
            passed,
            reason,
            outcome,
            error,
            duration: started.elapsed(),
            cache_hit: false,
            call: q.call.clone(),
            usage,
        };
        if let Some(hit) = cache.and_then(|c| c.get(&key)) {
            let (yes, no) = q.kind.verdicts();
            if hit.verdict == yes || hit.verdict == no {
                let mut r = record(
                    hit.verdict == yes,
                    hit.reason,
                    ReviewOutcome::Decided,
                    None,
                    hit.model,
                    None,
                );
                r.cache_hit = true;
                return r;
            }
        }
        let call = ModelCall {
            model: Some(model.clone()),
            system: system_prompt(q.kind),
            user: q.user.clone(),
        };
        let own_limit = started + config.timeout;
        let (limit, by_deadline) = match deadline {
            Some(d) if d < own_limit => (d, true),
            _ => (own_limit, false),
        };
        let waited = tokio::time::timeout_at(
            tokio::time::Instant::from_std(limit),
            self.model.complete(&call),
        );
        let answer = match waited.await {
            Ok(Ok(reply)) => match parse_verdict(q.kind, &reply.text) {
                Ok((passed, reason)) => Ok((passed, reason, reply)),
                Err(e) => Err((e, Some(reply))),
            },
            Ok(Err(e)) => Err((format!("the model call failed: {e}"), None)),
            Err(_) if by_deadline => Err((
                format!(
                    "no verdict before the answer's deadline ({} ms after the review began)",
                    started.elapsed().as_millis()
                ),
                None,
            )),
            Err(_) => Err((
                format!(
                    "no verdict within {} ms (timeoutMs)",
                    config.timeout.as_millis()
                ),
                None,
            )),
        };
        match answer {
            Ok((passed, reason, reply)) => {
                if let Some(c) = cache {
                    c.put(
                        &key,
                        &CachedVerdict {
                            verdict: q.kind.verdict(passed).to_string(),
                            reason: reason.clone(),
                            model: reply.model.clone(),
                        },
                        config.cache_ttl,
                    );
                }
                record(
                    passed,
                    reason,
                    ReviewOutcome::Decided,
                    None,
                    reply.model,
                    Some(reply.usage),
                )
            }
            Err((error, reply)) => {
                let (passed, outcome) = match config.fail_mode {
                    FailMode::Open => (true, ReviewOutcome::FailedOpen),
                    FailMode::Closed => (false, ReviewOutcome::FailedClosed),
                };
                let reason = format!(
                    "the {} reviewer failed ({error}); failMode {} {}",
                    q.kind.name(),
                    if passed { "open" } else { "closed" },
                    if passed { "lets it pass" } else { "refuses it" }
                );
                let (model, usage) = match reply {
                    Some(r) => (r.model, Some(r.usage)),
                    None => (model, None),
                };
                record(passed, reason, outcome, Some(error), model, usage)
            }
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use futures::future::BoxFuture;

    use super::super::{ModelReply, TranscriptMessage};
    use super::*;

    /// Answers each reviewer from a fixed table and counts its calls.
    struct Scripted {
        answers: Vec<(&'static str, &'static str)>,
        calls: Mutex<Vec<String>>,
        delay: Duration,
    }

    impl ReviewModel for Scripted {
        fn complete<'a>(
            &'a self,
            call: &'a ModelCall,
        ) -> BoxFuture<'a, Result<ModelReply, String>> {
            Box::pin(async move {
                tokio::time::sleep(self.delay).await;
                self.calls.lock().unwrap().push(call.system.clone());
                let (_, text) = self
                    .answers
                    .iter()
                    .find(|(name, _)| call.system.contains(&format!("reviewer: {name}\n")))
                    .ok_or("no answer scripted")?;
                Ok(ModelReply {
                    text: (*text).to_string(),
                    model: call.model.clone().unwrap_or_default(),
                    usage: Default::default(),
                })
            })
        }
        fn default_model(&self) -> String {
            "session-model".into()
        }
    }

    #[derive(Default)]
    struct MemCache(Mutex<Vec<(Value, CachedVerdict)>>);
    impl ReviewCache for MemCache {
        fn get(&self, key: &Value) -> Option<CachedVerdict> {
            let v = self.0.lock().unwrap();
            v.iter().find(|(k, _)| k == key).map(|(_, c)| c.clone())
        }
        fn put(&self, key: &Value, verdict: &CachedVerdict, _ttl: Duration) {
            self.0.lock().unwrap().push((key.clone(), verdict.clone()));
        }
    }

    struct Fixed;
    impl Transcript for Fixed {
        fn excerpt(&self, _max: usize) -> TranscriptExcerpt {
            TranscriptExcerpt {
                request: Some("clean the build directory".into()),
                messages: vec![TranscriptMessage {
                    role: "user".into(),
                    text: "clean the build directory".into(),
                }],
            }
        }
    }

    fn config(fail_mode: FailMode, timeout_ms: u64) -> ReviewerConfig {
        ReviewerConfig {
            model: None,
            timeout: Duration::from_millis(timeout_ms),
            fail_mode,
            cache_ttl: Duration::from_secs(60),
            context_messages: 5,
            max_blocks: 1,
        }
    }

    fn call() -> ToolCall {
        ToolCall {
            tool_name: "Bash".into(),
            input: json!({"command": "rm -rf build"}),
            tool_use_id: "t1".into(),
            cwd: "/w".into(),
            session_id: "s".into(),
        }
    }

    fn reviewers(
        answers: Vec<(&'static str, &'static str)>,
        delay_ms: u64,
        cfg: ReviewersConfig,
    ) -> (Reviewers, Arc<Scripted>) {
        let model = Arc::new(Scripted {
            answers,
            calls: Mutex::new(Vec::new()),
            delay: Duration::from_millis(delay_ms),
        });
        let r = Reviewers::new(cfg, model.clone())
            .cache(Arc::new(MemCache::default()))
            .transcript(Arc::new(Fixed));
        (r, model)
    }

    #[tokio::test]
    async fn a_denial_is_appealed_and_the_appeal_decides_then_the_cache_answers() {
        let cfg = ReviewersConfig {
            tool_approve: Some(config(FailMode::Closed, 1000)),
            tool_appeal: Some(config(FailMode::Closed, 1000)),
            ..Default::default()
        };
        let (r, model) = reviewers(
            vec![
                (
                    "tool-approve",
                    r#"{"verdict":"deny","reason":"deletes files"}"#,
                ),
                (
                    "tool-appeal",
                    r#"{"verdict":"allow","reason":"the user asked to clean build"}"#,
                ),
            ],
            0,
            cfg,
        );
        let review = r.approve(&call(), "no allow rule", None).await.unwrap();
        assert!(review.allowed);
        assert_eq!(review.by, ReviewerKind::ToolAppeal);
        assert_eq!(review.records.len(), 2);
        assert!(!review.records[0].passed);
        assert_eq!(review.records[0].model, "session-model");
        assert_eq!(model.calls.lock().unwrap().len(), 2);
        let again = r.approve(&call(), "no allow rule", None).await.unwrap();
        assert!(again.allowed);
        assert!(again.records.iter().all(|rec| rec.cache_hit));
        assert_eq!(model.calls.lock().unwrap().len(), 2, "no model call");
    }

    #[tokio::test]
    async fn an_upheld_denial_keeps_the_first_reason() {
        let cfg = ReviewersConfig {
            tool_approve: Some(config(FailMode::Closed, 1000)),
            tool_appeal: Some(config(FailMode::Closed, 1000)),
            ..Default::default()
        };
        let (r, _) = reviewers(
            vec![
                (
                    "tool-approve",
                    r#"{"verdict":"deny","reason":"deletes files"}"#,
                ),
                (
                    "tool-appeal",
                    r#"{"verdict":"deny","reason":"nobody asked for it"}"#,
                ),
            ],
            0,
            cfg,
        );
        let review = r.approve(&call(), "no allow rule", None).await.unwrap();
        assert!(!review.allowed);
        assert_eq!(review.by, ReviewerKind::ToolAppeal);
        assert_eq!(
            review.reason,
            "nobody asked for it (upholding tool-approve: deletes files)"
        );
    }

    #[tokio::test]
    async fn failures_follow_the_fail_mode() {
        for (mode, delay, answer, allowed, outcome) in [
            (
                FailMode::Closed,
                200,
                "{}",
                false,
                ReviewOutcome::FailedClosed,
            ),
            (FailMode::Open, 200, "{}", true, ReviewOutcome::FailedOpen),
            (
                FailMode::Closed,
                0,
                "looks fine to me",
                false,
                ReviewOutcome::FailedClosed,
            ),
        ] {
            let cfg = ReviewersConfig {
                tool_approve: Some(config(mode, 50)),
                ..Default::default()
            };
            let (r, _) = reviewers(vec![("tool-approve", answer)], delay, cfg);
            let review = r.approve(&call(), "why", None).await.unwrap();
            assert_eq!(review.allowed, allowed);
            let rec = &review.records[0];
            assert_eq!(rec.outcome, outcome);
            assert!(rec.error.is_some());
            assert!(review.reason.contains("failMode"), "{}", review.reason);
        }
    }

    #[tokio::test]
    async fn a_stop_is_blocked_at_most_max_blocks_times_and_never_twice_in_a_row() {
        let cfg = ReviewersConfig {
            intent_validate: Some(config(FailMode::Open, 1000)),
            ..Default::default()
        };
        let (r, model) = reviewers(
            vec![(
                "intent-validate",
                r#"{"verdict":"incomplete","reason":"Run the tests."}"#,
            )],
            0,
            cfg,
        );
        let first = r.validate_stop("Done.", 0, false, None).await;
        assert!(first.block.unwrap().contains("Run the tests."));
        assert!(
            r.validate_stop("Done.", 0, true, None)
                .await
                .records
                .is_empty()
        );
        let limit = r.validate_stop("Done.", 1, false, None).await;
        assert_eq!(limit.block, None);
        assert_eq!(limit.records[0].outcome, ReviewOutcome::Skipped);
        assert_eq!(model.calls.lock().unwrap().len(), 1);
    }
}
