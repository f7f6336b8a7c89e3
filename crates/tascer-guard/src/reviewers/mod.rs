//! LLM reviewers: a model stands in for the human who would answer.
//!
//! Seven reviewers, each optional ([`ReviewersConfig`], from the settings'
//! `safety.reviewers`):
//!
//! - `tool-approve` answers a call the rules would ask a human about,
//!   seeing the project's instruction files (`CLAUDE.md`, …), the user's
//!   latest request and the last few messages;
//! - `tool-appeal` looks again, with recent transcript context, at a call
//!   `tool-approve` denied; its verdict is final;
//! - `error-acknowledge`: after a failed tool call, the agent's next call
//!   must acknowledge the failure, or it is refused with a reason telling
//!   the agent to address it first;
//! - `intent-validate`: on Stop, did the work match the user's request?
//!   It checks for a question the conversation already answered, an
//!   off-topic question, an action nobody asked for and work claimed but
//!   missing; a "no" blocks the stop with a course correction naming the
//!   check;
//! - the validators, on calls that would run and change something they
//!   know (see [`validators`]): `plan-validate` (a plan that drifts from
//!   the request), `style-drift` (an edit with unrequested cosmetic
//!   changes) and `claude-md-validate` (a `CLAUDE.md` change against the
//!   file's own conventions); a "no" refuses the call with what to redo.
//!
//! Each reviewer has a model class ([`ReviewerKind::default_model_class`]):
//! Haiku for the quick ones, Sonnet for the ones that judge a whole
//! conversation or a plan, used when no model is configured and the
//! provider knows the aliases ([`ReviewModel::class_model`]).
//!
//! [`Reviewers`] runs them: each with a timeout, a cache and a fail mode,
//! its answer parsed strictly (one JSON object `{"verdict", "reason"}`; a
//! malformed answer is a failed review). It knows nothing of providers:
//! the model call is a [`ReviewModel`], the cache a [`ReviewCache`] and the
//! transcript a [`Transcript`], all implemented by the caller (the `tascer`
//! crate). Every verdict is returned as a [`ReviewRecord`] for the ledger.

mod approve;
mod chain;
mod change_review;
mod excerpt;
mod intent;
mod memory;
mod prompt;
#[cfg(test)]
pub(crate) mod test_model;
pub mod validators;

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tascer_core::Usage;

pub use chain::{CallReview, FailedCall, Reviewers, StopReview};
pub use excerpt::CORRECTION_PREFIX;
pub use intent::{STOP_CHECKS, StopCheck};
pub use memory::{INSTRUCTIONS_BYTES, InstructionFile};
pub use prompt::{parse_verdict, system_prompt};

pub use crate::safety::settings::FailMode;
use crate::safety::settings::{ReviewerSettings, ReviewersSettings};

/// Which reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReviewerKind {
    /// Answers a call the rules would ask about.
    ToolApprove,
    /// Reviews a `tool-approve` denial with transcript context.
    ToolAppeal,
    /// Checks that a failure is acknowledged before the agent goes on.
    ErrorAcknowledge,
    /// Checks on Stop that the work matches the request.
    IntentValidate,
    /// Checks that a plan matches the request.
    PlanValidate,
    /// Checks that an edit carries no unrequested cosmetic changes.
    StyleDrift,
    /// Checks a `CLAUDE.md` change against the file's conventions.
    ClaudeMdValidate,
}

impl ReviewerKind {
    /// The reviewer's name: `tool-approve`, `tool-appeal`,
    /// `error-acknowledge`, `intent-validate`, `plan-validate`,
    /// `style-drift`, `claude-md-validate`.
    pub fn name(self) -> &'static str {
        match self {
            ReviewerKind::ToolApprove => "tool-approve",
            ReviewerKind::ToolAppeal => "tool-appeal",
            ReviewerKind::ErrorAcknowledge => "error-acknowledge",
            ReviewerKind::IntentValidate => "intent-validate",
            ReviewerKind::PlanValidate => "plan-validate",
            ReviewerKind::StyleDrift => "style-drift",
            ReviewerKind::ClaudeMdValidate => "claude-md-validate",
        }
    }

    /// The two verdicts it may give: (pass, fail).
    pub fn verdicts(self) -> (&'static str, &'static str) {
        match self {
            ReviewerKind::ToolApprove | ReviewerKind::ToolAppeal => ("allow", "deny"),
            ReviewerKind::ErrorAcknowledge => ("acknowledged", "unacknowledged"),
            ReviewerKind::IntentValidate => ("complete", "incomplete"),
            ReviewerKind::PlanValidate => ("aligned", "drift"),
            ReviewerKind::StyleDrift => ("focused", "drift"),
            ReviewerKind::ClaudeMdValidate => ("conforms", "violates"),
        }
    }

    /// The verdict word for a pass or a fail.
    pub fn verdict(self, pass: bool) -> &'static str {
        let (yes, no) = self.verdicts();
        if pass { yes } else { no }
    }

    /// The class of model asked when none is configured (and the provider
    /// knows the aliases): Haiku for the quick, frequent questions about
    /// one call, Sonnet for the ones that weigh a whole conversation.
    pub fn default_model_class(self) -> ModelClass {
        match self {
            ReviewerKind::ToolApprove => ModelClass::Haiku,
            ReviewerKind::ErrorAcknowledge => ModelClass::Haiku,
            ReviewerKind::ToolAppeal => ModelClass::Sonnet,
            ReviewerKind::IntentValidate => ModelClass::Sonnet,
            ReviewerKind::StyleDrift => ModelClass::Haiku,
            ReviewerKind::ClaudeMdValidate => ModelClass::Haiku,
            ReviewerKind::PlanValidate => ModelClass::Sonnet,
        }
    }

    /// Transcript messages shown unless `contextMessages` says otherwise:
    /// 6 for `tool-approve` (asked about many calls, each with the user's
    /// request anyway), [`DEFAULT_CONTEXT_MESSAGES`] for the others.
    pub fn default_context_messages(self) -> usize {
        match self {
            ReviewerKind::ToolApprove => DEFAULT_APPROVE_CONTEXT_MESSAGES,
            _ => DEFAULT_CONTEXT_MESSAGES,
        }
    }
}

/// A class of model, named by the alias every provider that knows aliases
/// resolves (`haiku` → `claude-haiku-4-5` on Anthropic,
/// `anthropic/claude-haiku-4.5` on OpenRouter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelClass {
    /// Small and fast.
    Haiku,
    /// Stronger, slower.
    Sonnet,
}

impl ModelClass {
    /// The alias: `haiku` or `sonnet`.
    pub fn alias(self) -> &'static str {
        match self {
            ModelClass::Haiku => "haiku",
            ModelClass::Sonnet => "sonnet",
        }
    }
}

impl std::fmt::Display for ReviewerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One reviewer's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewerConfig {
    /// The model configured (the reviewer's `model`, else
    /// `reviewers.model`; an alias such as `haiku` is resolved by the
    /// [`ReviewModel`]); `None`: the reviewer's model class when the
    /// provider knows the aliases, else the caller's default (the
    /// session's model).
    pub model: Option<String>,
    /// Longest wait for the verdict, model call included.
    pub timeout: Duration,
    /// What a failed review counts as.
    pub fail_mode: FailMode,
    /// How long a verdict is reused for the same question (zero: no cache).
    pub cache_ttl: Duration,
    /// Transcript messages shown to the reviewer.
    pub context_messages: usize,
    /// Most Stops blocked per session (`intent-validate` only).
    pub max_blocks: u32,
}

/// Default timeout of a review.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default lifetime of a cached verdict.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(3600);
/// Default number of transcript messages shown.
pub const DEFAULT_CONTEXT_MESSAGES: usize = 12;
/// Default number of transcript messages `tool-approve` is shown.
pub const DEFAULT_APPROVE_CONTEXT_MESSAGES: usize = 6;
/// Default most Stops `intent-validate` blocks per session.
pub const DEFAULT_MAX_BLOCKS: u32 = 2;

impl ReviewerConfig {
    /// The configuration of `kind` from its settings, `model` being
    /// `reviewers.model`; `None` when it is off.
    fn from_settings(
        kind: ReviewerKind,
        settings: Option<&ReviewerSettings>,
        model: Option<&String>,
    ) -> Option<Self> {
        let s = settings?;
        if s.enabled == Some(false) {
            return None;
        }
        // Calls fail closed; a failed error check, stop check or
        // validator lets the agent go on.
        let default_fail = match kind {
            ReviewerKind::ToolApprove | ReviewerKind::ToolAppeal => FailMode::Closed,
            ReviewerKind::ErrorAcknowledge
            | ReviewerKind::IntentValidate
            | ReviewerKind::PlanValidate
            | ReviewerKind::StyleDrift
            | ReviewerKind::ClaudeMdValidate => FailMode::Open,
        };
        Some(ReviewerConfig {
            model: s.model.clone().or_else(|| model.cloned()),
            timeout: s
                .timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(DEFAULT_TIMEOUT),
            fail_mode: s.fail_mode.unwrap_or(default_fail),
            cache_ttl: s
                .cache_ttl_seconds
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_CACHE_TTL),
            context_messages: s
                .context_messages
                .unwrap_or_else(|| kind.default_context_messages()),
            max_blocks: s.max_blocks.unwrap_or(DEFAULT_MAX_BLOCKS),
        })
    }
}

/// Which reviewers are on, and how.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewersConfig {
    /// `tool-approve`.
    pub tool_approve: Option<ReviewerConfig>,
    /// `tool-appeal` (runs only after a `tool-approve` denial).
    pub tool_appeal: Option<ReviewerConfig>,
    /// `error-acknowledge`.
    pub error_acknowledge: Option<ReviewerConfig>,
    /// `intent-validate`.
    pub intent_validate: Option<ReviewerConfig>,
    /// `plan-validate`.
    pub plan_validate: Option<ReviewerConfig>,
    /// `style-drift`.
    pub style_drift: Option<ReviewerConfig>,
    /// `claude-md-validate`.
    pub claude_md_validate: Option<ReviewerConfig>,
}

impl ReviewersConfig {
    /// The reviewers the settings turn on.
    pub fn from_settings(settings: &ReviewersSettings) -> Self {
        let model = settings.model.as_ref();
        ReviewersConfig {
            tool_approve: ReviewerConfig::from_settings(
                ReviewerKind::ToolApprove,
                settings.tool_approve.as_ref(),
                model,
            ),
            tool_appeal: ReviewerConfig::from_settings(
                ReviewerKind::ToolAppeal,
                settings.tool_appeal.as_ref(),
                model,
            ),
            error_acknowledge: ReviewerConfig::from_settings(
                ReviewerKind::ErrorAcknowledge,
                settings.error_acknowledge.as_ref(),
                model,
            ),
            intent_validate: ReviewerConfig::from_settings(
                ReviewerKind::IntentValidate,
                settings.intent_validate.as_ref(),
                model,
            ),
            plan_validate: ReviewerConfig::from_settings(
                ReviewerKind::PlanValidate,
                settings.plan_validate.as_ref(),
                model,
            ),
            style_drift: ReviewerConfig::from_settings(
                ReviewerKind::StyleDrift,
                settings.style_drift.as_ref(),
                model,
            ),
            claude_md_validate: ReviewerConfig::from_settings(
                ReviewerKind::ClaudeMdValidate,
                settings.claude_md_validate.as_ref(),
                model,
            ),
        }
    }

    /// True when no reviewer is on.
    pub fn is_empty(&self) -> bool {
        self.tool_approve.is_none()
            && self.error_acknowledge.is_none()
            && self.intent_validate.is_none()
            && !self.validates_changes()
    }

    /// True when a validator (`plan-validate`, `style-drift`,
    /// `claude-md-validate`) is on.
    pub fn validates_changes(&self) -> bool {
        self.plan_validate.is_some()
            || self.style_drift.is_some()
            || self.claude_md_validate.is_some()
    }

    /// The configuration of one reviewer, if it is on.
    pub fn get(&self, kind: ReviewerKind) -> Option<&ReviewerConfig> {
        match kind {
            ReviewerKind::ToolApprove => self.tool_approve.as_ref(),
            ReviewerKind::ToolAppeal => self.tool_appeal.as_ref(),
            ReviewerKind::ErrorAcknowledge => self.error_acknowledge.as_ref(),
            ReviewerKind::IntentValidate => self.intent_validate.as_ref(),
            ReviewerKind::PlanValidate => self.plan_validate.as_ref(),
            ReviewerKind::StyleDrift => self.style_drift.as_ref(),
            ReviewerKind::ClaudeMdValidate => self.claude_md_validate.as_ref(),
        }
    }
}

/// How a review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReviewOutcome {
    /// The reviewer answered (or its cached answer was used).
    Decided,
    /// It failed; the fail mode let the call or stop pass.
    FailedOpen,
    /// It failed; the fail mode refused the call or blocked the stop.
    FailedClosed,
    /// Not asked: a limit was reached (`intent-validate`'s `maxBlocks`).
    Skipped,
}

impl ReviewOutcome {
    /// `decided`, `failed_open`, `failed_closed` or `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewOutcome::Decided => "decided",
            ReviewOutcome::FailedOpen => "failed_open",
            ReviewOutcome::FailedClosed => "failed_closed",
            ReviewOutcome::Skipped => "skipped",
        }
    }
}

/// One reviewer's verdict, as data for the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRecord {
    /// Which reviewer.
    pub reviewer: ReviewerKind,
    /// The model asked (or that gave the cached verdict).
    pub model: String,
    /// True for a pass (allow, acknowledged, complete, aligned, focused,
    /// conforms).
    pub passed: bool,
    /// The reviewer's reason, or what went wrong.
    pub reason: String,
    /// How the review ended.
    pub outcome: ReviewOutcome,
    /// What went wrong, for a failed review.
    pub error: Option<String>,
    /// How long it took.
    pub duration: Duration,
    /// True when the verdict came from the cache.
    pub cache_hit: bool,
    /// The call reviewed, if any: (tool, `tool_use` id).
    pub call: Option<(String, String)>,
    /// Token usage of the model call.
    pub usage: Option<Usage>,
}

impl ReviewRecord {
    /// The verdict word acted on (`allow`, `deny`, …).
    pub fn verdict(&self) -> &'static str {
        self.reviewer.verdict(self.passed)
    }
}

/// A model request of a reviewer: one system prompt, one user message.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The model; `None` for the backend's default.
    pub model: Option<String>,
    /// The reviewer's instructions.
    pub system: String,
    /// What to review.
    pub user: String,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    /// Its text.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Token usage.
    pub usage: Usage,
}

/// Calls the model for a reviewer (implemented over the session's
/// provider by the `tascer` crate).
pub trait ReviewModel: Send + Sync {
    /// Sends one request; `Err` says what went wrong (no verdict).
    fn complete<'a>(&'a self, call: &'a ModelCall) -> BoxFuture<'a, Result<ModelReply, String>>;

    /// The model used when a reviewer names none and has no class the
    /// provider knows.
    fn default_model(&self) -> String;

    /// `model` as the provider spells it (an alias such as `haiku`
    /// resolved); by default as given.
    fn resolve_model(&self, model: &str) -> String {
        model.to_string()
    }

    /// The provider's model of `class`, when it knows the aliases; by
    /// default none (the [`default_model`](Self::default_model) is used).
    fn class_model(&self, class: ModelClass) -> Option<String> {
        let _ = class;
        None
    }
}

/// A cached verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedVerdict {
    /// The verdict word.
    pub verdict: String,
    /// The reason.
    pub reason: String,
    /// The model that gave it.
    pub model: String,
}

/// Keeps verdicts for a while (implemented over the store, so a new
/// process — `tascer hook` — finds them too). Errors are the
/// implementation's to log: a cache that cannot be read is a miss.
pub trait ReviewCache: Send + Sync {
    /// The verdict for `key` (JSON describing the question), if fresh.
    fn get(&self, key: &Value) -> Option<CachedVerdict>;
    /// Keeps a verdict for `ttl`.
    fn put(&self, key: &Value, verdict: &CachedVerdict, ttl: Duration);
}

/// One message of a transcript, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its text, tool calls and results written out.
    pub text: String,
}

/// What a reviewer sees of the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TranscriptExcerpt {
    /// The user's latest request (their last prompt, not a tool result).
    pub request: Option<String>,
    /// The last messages, oldest first.
    pub messages: Vec<TranscriptMessage>,
}

/// The session's conversation so far (the loop's stored history, or
/// Claude Code's transcript file).
pub trait Transcript: Send + Sync {
    /// The latest request and at most `max_messages` recent messages.
    fn excerpt(&self, max_messages: usize) -> TranscriptExcerpt;
}
