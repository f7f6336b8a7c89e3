//! The LLM reviewers' model calls, cache and records (docs/reviewers.md):
//! [`ModelReviewer`] asks the session's provider, `StoreReviewCache`
//! keeps verdicts in the store, [`verdict_payload`] is what the ledger
//! records of each verdict (defined with the ledger's other record shapes
//! in `records.rs`).
//!
//! Public for the hosts that run tools themselves (the Claude Code hook in
//! `tascer-claude`): they connect the same reviewers over the provider of
//! their environment ([`reviewers`]) and record their verdicts as a loop
//! session does ([`verdict_entries`], [`intent_blocks`]), and give the
//! webhooks each agent's verdict in one shape ([`agent_verdicts`]).
//! [`ask_model`] is the reviewers' one kind of model call (a system
//! prompt, one user message, the answer's text), for hosts that ask a
//! model questions of their own (the gatekeeper).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tascer_core::{ChatMessage, ContentBlock, Usage};
use tascer_guard::reviewers::{
    CachedVerdict, InstructionFile, ModelCall, ModelClass, ModelReply, ReviewCache, ReviewModel,
    Reviewers, ReviewersConfig, Transcript,
};
use tascer_guard::settings::SettingsSource;
use tascer_model::{ModelClient, ModelError, ModelRequest};
use tascer_store::{CachedReview, Db, ReviewCacheStore};
use tokio_util::sync::CancellationToken;

pub use crate::agent_log::{AgentLevel, AgentVerdict, agent_verdicts};
use crate::duration::millis;
use crate::loop_env::LoopEnv;
use crate::memory::{MemoryFile, MemoryKind};
pub use crate::records::{intent_blocks, verdict_entries, verdict_payload};

/// Output tokens a reviewer may use (a verdict and a sentence or two).
const MAX_REVIEW_TOKENS: u32 = 1024;

/// Called with each reviewer model call's model, usage and the cost the
/// provider reported (the loop adds it to the session's cost).
pub type UsageSink = Arc<dyn Fn(&str, &Usage, Option<f64>) + Send + Sync>;

/// Asks the reviewer's question over a provider client.
pub struct ModelReviewer {
    client: ModelClient,
    default_model: String,
    on_usage: Option<UsageSink>,
}

impl ModelReviewer {
    /// A reviewer model over `client`; `default_model` when a reviewer
    /// names none.
    pub fn new(client: ModelClient, default_model: String, on_usage: Option<UsageSink>) -> Self {
        ModelReviewer {
            client,
            default_model,
            on_usage,
        }
    }
}

impl ReviewModel for ModelReviewer {
    fn complete<'a>(&'a self, call: &'a ModelCall) -> BoxFuture<'a, Result<ModelReply, String>> {
        Box::pin(async move {
            let question = ModelQuestion {
                model: call
                    .model
                    .clone()
                    .unwrap_or_else(|| self.default_model.clone()),
                system: call.system.clone(),
                user: call.user.clone(),
                max_tokens: MAX_REVIEW_TOKENS,
            };
            // Dropping this future (the reviewer's timeout) drops the
            // request.
            let answer = ask_model(&self.client, question)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(sink) = &self.on_usage {
                sink(&answer.model, &answer.usage, answer.cost_usd);
            }
            Ok(ModelReply {
                text: answer.text(""),
                model: answer.model,
                usage: answer.usage,
            })
        })
    }

    fn default_model(&self) -> String {
        self.default_model.clone()
    }

    fn resolve_model(&self, model: &str) -> String {
        self.client.resolve_model(model)
    }

    /// The class's alias as the provider spells it; a provider that does
    /// not know the aliases (a plain OpenAI-compatible server) sends the
    /// alias unchanged, so it has no class model.
    fn class_model(&self, class: ModelClass) -> Option<String> {
        class_model(&self.client, class)
    }
}

/// The model of `class` as `client`'s provider spells its alias; `None`
/// when the provider does not know the aliases (a plain OpenAI-compatible
/// server gets the alias unchanged).
pub(crate) fn class_model(client: &ModelClient, class: ModelClass) -> Option<String> {
    let alias = class.alias();
    let id = client.resolve_model(alias);
    (id != alias).then_some(id)
}

/// One question to a model: a system prompt and one user message, no
/// tools, not streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelQuestion {
    /// The model to ask.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The one user message.
    pub user: String,
    /// The answer's output token limit.
    pub max_tokens: u32,
}

/// A model's answer to a [`ModelQuestion`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelAnswer {
    /// The answer's text blocks, in order (its other blocks left out).
    pub texts: Vec<String>,
    /// The model that answered (the fallback model after a fallback).
    pub model: String,
    /// What the call used.
    pub usage: Usage,
    /// The cost the provider reported for the call, USD, if any.
    pub cost_usd: Option<f64>,
}

impl ModelAnswer {
    /// The answer's text: its text blocks joined with `separator`.
    pub fn text(&self, separator: &str) -> String {
        self.texts.join(separator)
    }
}

/// Asks `client` one question and returns the answer's text. The LLM
/// reviewers ask theirs this way, and so can any host with a question of
/// its own (the gatekeeper's `confirm`, commit messages,
/// `validate_intent`). Dropping the future drops the request.
pub async fn ask_model(
    client: &ModelClient,
    question: ModelQuestion,
) -> Result<ModelAnswer, ModelError> {
    let request = ModelRequest {
        model: question.model,
        system: Some(question.system),
        messages: vec![ChatMessage::user_text(question.user)],
        tools: Vec::new(),
        server_tools: Vec::new(),
        max_tokens: Some(question.max_tokens),
        stream: false,
    };
    let response = client
        .send(&request, None, &CancellationToken::new())
        .await?;
    let texts = response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    Ok(ModelAnswer {
        texts,
        model: response.model,
        usage: response.usage,
        cost_usd: response.cost_usd,
    })
}

/// Verdicts kept in the store's `review_cache` table, under the SHA-256 of
/// the question's canonical JSON.
pub(crate) struct StoreReviewCache {
    store: ReviewCacheStore,
}

impl StoreReviewCache {
    /// The cache in `db`.
    pub fn open(db: Arc<Db>) -> Result<Self, tascer_store::StoreError> {
        Ok(StoreReviewCache {
            store: ReviewCacheStore::with_db(db)?,
        })
    }
}

fn cache_key(key: &Value) -> String {
    let bytes = tascer_ledger::jcs::canonicalize(key).unwrap_or_else(|_| key.to_string().into());
    tascer_ledger::sha256_hex(&bytes)
}

impl ReviewCache for StoreReviewCache {
    fn get(&self, key: &Value) -> Option<CachedVerdict> {
        match self.store.get(&cache_key(key)) {
            Ok(hit) => hit.map(|c| CachedVerdict {
                verdict: c.verdict,
                reason: c.reason,
                model: c.model,
            }),
            Err(err) => {
                tracing::warn!("cannot read the review cache: {err}");
                None
            }
        }
    }

    fn put(&self, key: &Value, verdict: &CachedVerdict, ttl: Duration) {
        let reviewer = key
            .get("reviewer")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let row = CachedReview {
            reviewer,
            verdict: verdict.verdict.clone(),
            reason: verdict.reason.clone(),
            model: verdict.model.clone(),
        };
        let ttl_ms = millis(ttl);
        if let Err(err) = self.store.put(&cache_key(key), &row, ttl_ms) {
            tracing::warn!("cannot write the review cache: {err}");
        }
    }
}

/// The project's instruction files among `memory`, for `tool-approve` and
/// `tool-appeal`: the project's and the local ones (`CLAUDE.md`,
/// `.claude/CLAUDE.md`, `AGENTS.md`, `CLAUDE.local.md` and what they
/// import), not the user's own `~/.claude/CLAUDE.md`.
pub fn instruction_files(memory: &[MemoryFile]) -> Vec<InstructionFile> {
    memory
        .iter()
        .filter(|f| matches!(f.kind, MemoryKind::Project | MemoryKind::Local))
        .map(|f| InstructionFile {
            path: f.path.display().to_string(),
            sha256: f.sha256.clone(),
            content: f.content.clone(),
        })
        .collect()
}

/// The project's instruction files for a host's call (`tascer hook`):
/// the project and local memory files of `root` (the project root, found
/// as for the settings) and its parents up to the repository root, read
/// now ([`instruction_files`]).
pub fn project_instructions(root: &std::path::Path) -> Vec<InstructionFile> {
    let home = std::env::home_dir();
    let memory = crate::memory::load(
        &crate::memory::MemoryLocations {
            cwd: root,
            user_dir: None,
            home: home.as_deref(),
        },
        &[SettingsSource::Project, SettingsSource::Local],
    );
    instruction_files(&memory)
}

/// The reviewers `config` turns on (`None` when none is), asking `model`,
/// with the store's cache, `transcript` and the project's `instructions`.
pub fn reviewers(
    config: &ReviewersConfig,
    model: Arc<dyn ReviewModel>,
    db: &Arc<Db>,
    transcript: Arc<dyn Transcript>,
    instructions: Vec<InstructionFile>,
) -> Option<Arc<Reviewers>> {
    if config.is_empty() {
        return None;
    }
    Some(Arc::new(chain(config, model, db, transcript, instructions)))
}

/// The reviewers of `config` asking `model`, with the store's cache,
/// `transcript` and the project's `instructions`.
fn chain(
    config: &ReviewersConfig,
    model: Arc<dyn ReviewModel>,
    db: &Arc<Db>,
    transcript: Arc<dyn Transcript>,
    instructions: Vec<InstructionFile>,
) -> Reviewers {
    let chain = Reviewers::new(config.clone(), model)
        .transcript(transcript)
        .instructions(instructions);
    match StoreReviewCache::open(Arc::clone(db)) {
        Ok(cache) => chain.cache(Arc::new(cache)),
        Err(err) => {
            tracing::warn!("reviewers run without a cache: {err}");
            chain
        }
    }
}

/// The reviewers of a loop session: the session's provider client and
/// model (reviewer calls count toward the session's cost), the stored
/// messages as the transcript, the project's memory files the session
/// loaded at its start (`memory`) as the instructions — what the agent was
/// told, not what it may have written since — and `claude_dir` for
/// `plan-validate`'s plans.
pub(crate) fn for_session(
    config: &ReviewersConfig,
    env: &LoopEnv,
    model: &str,
    db: &Arc<Db>,
    memory: &[MemoryFile],
    claude_dir: Option<std::path::PathBuf>,
) -> Option<Arc<Reviewers>> {
    if config.is_empty() {
        return None;
    }
    let costs = env.clone();
    let on_usage: UsageSink = Arc::new(move |model, usage, reported| {
        costs.add_usage(model, usage, reported);
    });
    let model = Arc::new(ModelReviewer::new(
        env.client.clone(),
        model.to_string(),
        Some(on_usage),
    ));
    let transcript = Arc::new(crate::transcript::StoreTranscript {
        store: Arc::clone(&env.store),
        session_id: env.session_id.clone(),
    });
    Some(Arc::new(
        chain(config, model, db, transcript, instruction_files(memory)).claude_dir(claude_dir),
    ))
}
