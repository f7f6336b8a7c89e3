//! A session: its identity, history, tools, model client and store, and
//! how one starts ([`Session::start`], in named steps).

use futures::future::BoxFuture;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tascer_core::ChatMessage;
use tascer_guard::hooks::SessionStartSource;
use tascer_guard::settings::LoadedSettings;
use tascer_mcp::McpManager;
use tascer_model::{ModelClient, ProviderConfig, ProviderKind};
use tascer_store::{NewSession, SessionStore};

use crate::agent::Agent;
use crate::commands::SlashCommand;
use crate::error::Error;
use crate::governance::Governance;
use crate::loop_env::{Costs, LoopEnv, Observed};
use crate::memory::{MemoryFile, MemoryLocations};
use crate::options::Options;
use crate::plugins::{PluginInfo, PluginLoadError};
use crate::proof::Proof;
use crate::setup::GovernanceParts;
use crate::skills::Skill;
use crate::structured::StructuredOutput;
use crate::system_prompt::session_system_prompt;
use crate::toolset::{Extras, connect_mcp, select_tools};
use crate::write_failure::WriteFailure;

/// The home's signing key, created on first use with a one-line notice.
fn home_signing_key(home: &Path) -> Result<tascer_ledger::SigningKey, Error> {
    let (key, created) = tascer_ledger::load_or_create_home_signing_key(home)?;
    if let Some(paths) = created {
        tracing::warn!(
            "created the ledger signing key {} (mode 0600; public key {}): sessions are signed \
             by default, set {}=off to turn signing off",
            paths.private.display(),
            paths.public.display(),
            crate::options::SIGNING_ENV
        );
    }
    Ok(key)
}

/// Default Anthropic model when none is configured.
const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// Default model for OpenAI-compatible servers when none is configured.
const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// The model when none is given: `TASCER_MODEL`, else the provider's
/// default.
pub fn default_model(kind: ProviderKind) -> String {
    std::env::var("TASCER_MODEL")
        .ok()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| match kind {
            ProviderKind::Anthropic => DEFAULT_ANTHROPIC_MODEL.to_string(),
            ProviderKind::OpenAi => DEFAULT_OPENAI_MODEL.to_string(),
        })
}

/// The model when none is given, for `provider`: `TASCER_MODEL`, else
/// Sonnet on Anthropic and on OpenRouter (spelled its way), else
/// [`default_model`]'s for the wire. The id as it will be sent (aliases
/// resolved).
pub fn default_model_for(provider: &ProviderConfig) -> String {
    let model = match std::env::var("TASCER_MODEL").ok().filter(|m| !m.is_empty()) {
        Some(model) => model,
        None if provider.openrouter => DEFAULT_ANTHROPIC_MODEL.to_string(),
        None => default_model(provider.kind),
    };
    provider.resolve_model(&model)
}

/// Everything a running session holds.
pub(crate) struct Session {
    pub id: String,
    pub cwd: PathBuf,
    pub history: Vec<ChatMessage>,
    pub options: Options,
    pub api_key_source: String,
    pub total_turns: u32,
    /// The main agent: model, system prompt, tools, shared handles.
    pub agent: Agent,
    /// The session's MCP servers, when any are configured.
    pub mcp: Option<McpManager>,
    /// Context from SessionStart hooks, added to the next prompt.
    pub pending_context: Vec<String>,
    /// The input size (tokens, cache included) of the last model call,
    /// for automatic compaction.
    pub last_input_tokens: u64,
    /// True from a compaction until the check before the next model call
    /// after it.
    pub just_compacted: bool,
    /// The memory files (`CLAUDE.md`, …) in the system prompt.
    pub memory: Vec<MemoryFile>,
    /// Skills offered through the `Skill` tool.
    pub skills: Vec<Skill>,
    /// Custom slash commands.
    pub commands: Vec<SlashCommand>,
    /// The output schema the final answer must match, if any.
    pub structured: Option<StructuredOutput>,
    /// The plugins loaded.
    pub plugins: Vec<PluginInfo>,
    /// What of the plugins did not load.
    pub plugin_errors: Vec<PluginLoadError>,
}

impl Session {
    /// Opens or creates the session the options describe.
    ///
    /// The steps run in this order, which is also the order of what they
    /// store, write to the ledger and tell hooks: the store's session row,
    /// the ledger's `session_start`, the webhooks, the MCP servers, then
    /// the SessionStart hooks.
    ///
    /// Boxed: the state machine of the session's start (store, ledger, MCP
    /// servers, hooks) is compiled once, here, not in every crate that
    /// opens a session.
    pub fn start(options: Options) -> BoxFuture<'static, Result<Session, Error>> {
        Box::pin(Session::start_now(options))
    }

    async fn start_now(mut options: Options) -> Result<Session, Error> {
        let cwd = resolve_cwd(options.cwd.as_ref())?;
        let provider = Provider::from_options(&options)?;
        let home = options.home.clone().unwrap_or_else(crate::tascer_home);
        let store = Arc::new(SessionStore::open_in_home(&home)?);
        check_session_choice(&options)?;
        let opened = open_or_create(&store, &options, &cwd, &provider.model)?;
        let plugins = crate::plugins::apply(&mut options, &cwd);
        let mut files = SessionFiles::load(&mut options, &cwd)?;
        files.commands.extend(plugins.commands);
        files.skills.extend(plugins.skills);
        let system_prompt = system_prompt(&options, &cwd, &provider.model, &files);
        let settings = crate::setup::load_settings(&options, &cwd, &home)?;
        let sandbox = crate::sandbox_setup::command_sandbox(&options, &settings, &cwd)?;
        let mut parts = crate::setup::build(
            &options,
            &settings,
            &cwd,
            provider.secrets,
            sandbox.as_ref(),
        )?;

        let proof = open_ledger(&options, &home, &store, &opened.id)?;
        proof.set_sealing(parts.generate_proofs);
        let mut context = start_context(&options, &cwd, &files);
        if let Some(point) = &opened.fork_point {
            context["resumed_at"] = point.ledger_value();
        }
        let options_value = options_digest_value(&options, &provider.model);
        let observed = Observed {
            observer: options.observer.clone(),
            provider: provider.name,
            policy_digest: policy_digest(&options_value, &settings),
        };
        proof.start(&provider.model, &options_value, &system_prompt, context)?;
        let tool_env = std::mem::take(&mut parts.env);
        let mut env = loop_env(
            &options,
            &cwd,
            &opened,
            provider.client,
            store,
            tool_env,
            proof,
        );
        env.observed = observed;
        env.observe_session_opened(&provider.model);
        let governance = governance(
            &env,
            &provider.model,
            &home,
            &settings,
            &cwd,
            parts,
            &files.memory,
        )?;
        governance.context.prewarm(&cwd);

        let elicitor = crate::elicitation::SessionElicitor::for_session(
            &governance,
            &env,
            options.elicitor.clone(),
        );
        let sampler = crate::sampling::SessionSampler::for_session(
            options.refuse_mcp_sampling,
            &env,
            &provider.model,
        );
        let mcp = connect_mcp(&options, &cwd, elicitor, sampler).await;
        let mcp_tools = mcp
            .as_ref()
            .map(McpManager::tools_snapshot)
            .unwrap_or_default();
        let web = crate::web_services::for_session(&settings.web_fetch()?, &env, &provider.model)?;
        let extras = Extras {
            home: &home,
            skills: &files.skills,
            memory_section: files.memory_section,
            sandbox,
            web,
        };
        let tools = select_tools(
            &options,
            &env,
            &provider.model,
            &cwd,
            &governance,
            mcp_tools,
            extras,
        );
        let pending_context = governance
            .on_session_start(&env, start_source(&options), &provider.model)
            .await;
        let agent = Agent::new(env, provider.model, system_prompt, tools, None, governance);

        Ok(Session {
            id: opened.id,
            cwd,
            history: opened.history,
            options,
            api_key_source: provider.api_key_source,
            total_turns: opened.total_turns,
            agent,
            mcp,
            pending_context,
            last_input_tokens: 0,
            just_compacted: false,
            memory: files.memory,
            skills: files.skills,
            commands: files.commands,
            structured: files.structured,
            plugins: plugins.info,
            plugin_errors: plugins.errors,
        })
    }
}

/// The model provider of a session, and its model.
struct Provider {
    client: ModelClient,
    model: String,
    /// Where the API key came from, for `system/init`.
    api_key_source: String,
    /// The provider's own keys, which must never leak into output.
    secrets: Vec<String>,
    /// `anthropic` or `openai` (telemetry's `gen_ai.provider.name`).
    name: &'static str,
}

impl Provider {
    /// The options' provider (else the environment's) with the options'
    /// fallback model, and the options' model (else the default one).
    fn from_options(options: &Options) -> Result<Self, Error> {
        let mut provider = match &options.provider {
            Some(p) => p.clone(),
            None => ProviderConfig::from_env()?,
        };
        if options.fallback_model.is_some() {
            provider.fallback_model = options.fallback_model.clone();
        }
        let api_key_source = api_key_source(&provider);
        let name = provider.kind.name();
        let model = options
            .model
            .clone()
            .unwrap_or_else(|| default_model_for(&provider));
        let model = provider.resolve_model(&model);
        let secrets = provider.secrets();
        let client = match &options.answer_source {
            Some(source) => ModelClient::from_source(provider, Arc::clone(source))?,
            None => ModelClient::new(provider)?,
        };
        check_budget(options, &client, &model)?;
        Ok(Provider {
            client,
            model,
            api_key_source,
            secrets,
            name,
        })
    }
}

/// Refuses a cost budget that cannot be enforced: the cost of `model`'s
/// answers would be unknown (no price, and the provider reports none), so
/// the budget would never trigger.
fn check_budget(options: &Options, client: &ModelClient, model: &str) -> Result<(), Error> {
    match options.max_budget_usd {
        Some(budget) if !client.knows_cost(model) => Err(Error::InvalidOptions(format!(
            "a cost budget (${budget:.2}) cannot be enforced: the cost of {model} on the {} \
             provider is unknown (no price for it, and the provider reports none); add its price \
             (TASCER_PRICES or ProviderConfig::prices) or drop the budget",
            client.provider_name()
        ))),
        _ => Ok(()),
    }
}

/// Refuses options that name the session to open in contradicting ways.
fn check_session_choice(options: &Options) -> Result<(), Error> {
    let resuming = options.resume.is_some() || options.continue_conversation;
    if options.resume_session_at.is_some() && !resuming {
        return Err(Error::InvalidOptions(
            "--resume-session-at needs --resume or --continue (the session to cut)".into(),
        ));
    }
    if options.resume_drops_turn.is_some() && options.resume_session_at.is_none() {
        return Err(Error::InvalidOptions(
            "--resume-drops-turn needs --resume-session-at (the point the turn is cut at)".into(),
        ));
    }
    if options.resume.is_some() && options.continue_conversation {
        return Err(Error::InvalidOptions(
            "use either resume or continue, not both".into(),
        ));
    }
    if let Some(id) = &options.session_id {
        if uuid_like(id).is_none() {
            return Err(Error::InvalidOptions(format!(
                "session id must be a UUID, got {id:?}"
            )));
        }
        if (options.resume.is_some() || options.continue_conversation)
            && !options.fork_session
            && options.resume_session_at.is_none()
        {
            return Err(Error::InvalidOptions(
                "--session-id with --resume or --continue requires --fork-session".into(),
            ));
        }
    }
    Ok(())
}

/// The stored session a session starts from.
struct Opened {
    id: String,
    history: Vec<ChatMessage>,
    total_turns: u32,
    total_cost_usd: f64,
    /// Where a `resume_session_at` cut the resumed session.
    fork_point: Option<crate::resume_at::ForkPoint>,
}

/// Opens the session the options name (resumed, continued, or forked from
/// it) or creates a new one in the store, and reads its history and
/// totals.
fn open_or_create(
    store: &SessionStore,
    options: &Options,
    cwd: &Path,
    model: &str,
) -> Result<Opened, Error> {
    let cwd_text = cwd.display().to_string();
    let existing = if let Some(id) = &options.resume {
        Some(
            store
                .session(id)?
                .ok_or_else(|| tascer_store::StoreError::NotFound(id.clone()))?,
        )
    } else if options.continue_conversation {
        Some(
            store
                .latest_for_cwd(&cwd_text)?
                .ok_or_else(|| Error::NothingToContinue(cwd_text.clone()))?,
        )
    } else {
        None
    };
    let new_id = || {
        options
            .session_id
            .clone()
            .unwrap_or_else(tascer_core::new_id)
    };
    let mut fork_point = None;
    let id = match existing {
        Some(info) if options.resume_session_at.is_some() => {
            let at = options.resume_session_at.as_deref().unwrap_or_default();
            let id = new_id();
            let drops = options.resume_drops_turn.as_deref();
            fork_point = Some(crate::resume_at::fork_at(store, &info.id, &id, at, drops)?);
            id
        }
        Some(info) if options.fork_session => {
            let id = new_id();
            store.fork(&info.id, &id)?;
            id
        }
        Some(info) => info.id,
        None => {
            let id = new_id();
            store.create_session(&NewSession {
                id: &id,
                cwd: &cwd_text,
                model,
                forked_from: None,
            })?;
            id
        }
    };
    let history = store.history(&id)?;
    let (total_turns, total_cost_usd) = match store.session(&id)? {
        Some(info) => (info.num_turns, info.total_cost_usd),
        None => (0, 0.0),
    };
    Ok(Opened {
        id,
        history,
        total_turns,
        total_cost_usd,
        fork_point,
    })
}

/// What the session's files add: memory files, slash commands, skills,
/// agents (merged into the options), and the output schema.
struct SessionFiles {
    memory: Vec<MemoryFile>,
    /// The memory files as a system prompt section.
    memory_section: Option<String>,
    commands: Vec<SlashCommand>,
    skills: Vec<Skill>,
    structured: Option<StructuredOutput>,
}

impl SessionFiles {
    /// Reads the files the options' setting sources name; agent files join
    /// the options' own agents, which win.
    fn load(options: &mut Options, cwd: &Path) -> Result<Self, Error> {
        let user_dir = options
            .claude_config_dir
            .clone()
            .or_else(crate::memory::default_user_dir);
        let user_home = std::env::home_dir();
        let memory = crate::memory::load(
            &MemoryLocations {
                cwd,
                user_dir: user_dir.as_deref(),
                home: user_home.as_deref(),
            },
            &options.setting_sources,
        );
        let memory_section = crate::memory::prompt_section(&memory);
        let sources = &options.setting_sources;
        let commands = crate::commands::load(cwd, user_dir.as_deref(), sources)?;
        let skills = crate::skills::load(cwd, user_dir.as_deref(), sources)?;
        let mut agents = crate::agents::load(cwd, user_dir.as_deref(), sources)?;
        agents.append(&mut options.agents);
        options.agents = agents;
        let structured = match &options.output_format {
            Some(format) => Some(StructuredOutput::new(
                format,
                options.max_structured_output_retries,
            )?),
            None => None,
        };
        Ok(SessionFiles {
            memory,
            memory_section,
            commands,
            skills,
            structured,
        })
    }
}

/// The session's system prompt: the options' (or the default one) with
/// the environment block, then the memory files, then the output schema.
fn system_prompt(options: &Options, cwd: &Path, model: &str, files: &SessionFiles) -> String {
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let mut system_prompt = session_system_prompt(&options.system_prompt, cwd, &today, model);
    if let Some(section) = &files.memory_section {
        system_prompt.push_str("\n\n");
        system_prompt.push_str(section);
    }
    if let Some(structured) = &files.structured {
        system_prompt.push_str("\n\n");
        system_prompt.push_str(&structured.prompt_section());
    }
    system_prompt
}

/// The session's ledger, signed with the options' key or the home's (when
/// signing is on). It shares the session store's backend: with SQLite, one
/// connection, so their writes queue inside this process instead of
/// competing for the file lock; with PostgreSQL, one pool.
fn open_ledger(
    options: &Options,
    home: &Path,
    store: &SessionStore,
    session_id: &str,
) -> Result<Proof, Error> {
    let signing_key = match &options.signing_key {
        Some(key) => Some(key.clone()),
        None if crate::options::signing_on(options) => Some(home_signing_key(home)?),
        None => None,
    };
    let ledger = Arc::new(tascer_ledger::Ledger::with_backend(
        Arc::clone(store.backend()),
        home.join("evidence"),
        signing_key,
    ));
    Ok(Proof::new(
        ledger,
        session_id.to_string(),
        WriteFailure::default(),
    ))
}

/// The handles the session's agents share; `tool_env` is the environment
/// of its tools.
fn loop_env(
    options: &Options,
    cwd: &Path,
    opened: &Opened,
    client: ModelClient,
    store: Arc<SessionStore>,
    tool_env: HashMap<String, String>,
    proof: Proof,
) -> LoopEnv {
    let checkpoints = options.file_checkpointing.then(|| {
        Arc::new(crate::file_checkpoint::FileCheckpoints::new(
            Arc::clone(&store),
            opened.id.clone(),
        ))
    });
    LoopEnv {
        session_id: opened.id.clone(),
        client,
        store,
        checkpoints,
        shared_cwd: tascer_core::ToolContext::shared_cwd(cwd.to_path_buf()),
        env: Arc::new(tool_env),
        include_partial_messages: options.include_partial_messages,
        max_tokens: options.max_tokens,
        costs: Arc::new(Mutex::new(Costs {
            total_usd: opened.total_cost_usd,
            ..Costs::default()
        })),
        sink: Arc::new(Mutex::new(None)),
        pending_totals: Arc::default(),
        failure: proof.failure().clone(),
        proof,
        observed: Observed::default(),
        transcript: options.transcript_dir.as_ref().map(|dir| {
            Arc::new(crate::claude_transcript::Transcript::open(
                dir, cwd, &opened.id,
            ))
        }),
    }
}

/// The session's governance: the admission the options and settings
/// configure with the LLM reviewers they turn on (shown the session's
/// project `memory` files), context capture, and the webhooks (their
/// delivery started).
fn governance(
    env: &LoopEnv,
    model: &str,
    home: &Path,
    settings: &LoadedSettings,
    cwd: &Path,
    parts: GovernanceParts,
    memory: &[MemoryFile],
) -> Result<Arc<Governance>, Error> {
    // The reviewers' cache and the webhook outbox live in the home's
    // local SQLite file (the store's own when it is SQLite).
    let needs_local = !parts.safety.reviewers.is_empty() || !settings.webhooks().is_empty();
    let local_db = match needs_local {
        true => Some(crate::setup::local_db(&env.store, home)?),
        false => None,
    };
    let reviewers = local_db.as_ref().and_then(|db| {
        let reviewers = &parts.safety.reviewers;
        crate::reviewer::for_session(reviewers, env, model, db, memory, parts.claude_dir.clone())
    });
    let webhooks = match &local_db {
        Some(db) => {
            tascer_webhook::Webhooks::open(settings.webhooks(), db, tascer_webhook::Source::Run)?
        }
        None => None,
    };
    if let Some(webhooks) = &webhooks {
        webhooks.start_delivery();
    }
    Ok(Arc::new(
        Governance::new(
            parts.admission.reviewers(reviewers),
            parts.context,
            cwd.display().to_string(),
            // Hooks read a Claude Code–format transcript when there is one.
            match &env.transcript {
                Some(t) => t.path().display().to_string(),
                None => env.store.location().to_string(),
            },
        )
        .with_webhooks(webhooks),
    ))
}

/// The SessionStart hooks' `source`.
fn start_source(options: &Options) -> SessionStartSource {
    if options.fork_session {
        SessionStartSource::Fork
    } else if options.resume.is_some() || options.continue_conversation {
        SessionStartSource::Resume
    } else {
        SessionStartSource::Startup
    }
}

/// The context of the ledger's `session_start`: where the session runs,
/// its memory files, the governance options a replay needs and, for a
/// replay, what it replays ([`crate::run_record`]).
fn start_context(options: &Options, cwd: &Path, files: &SessionFiles) -> serde_json::Value {
    let mut context = serde_json::json!({
        "cwd": cwd.display().to_string(),
        "tascer_version": crate::VERSION,
        "memory_files": files.memory,
        crate::run_record::GOVERNANCE_KEY: crate::run_record::governance(options),
    });
    if let (Some(replay_of), Some(map)) = (&options.replay_of, context.as_object_mut()) {
        map.insert(crate::run_record::REPLAY_OF_KEY.into(), replay_of.clone());
    }
    context
}

/// What of the options the ledger's `options_digest` covers. The plugin
/// directories are covered when there are any (so the digests of sessions
/// without plugins do not change).
fn options_digest_value(options: &Options, model: &str) -> serde_json::Value {
    let mut value = serde_json::json!({
        "model": model,
        "fallback_model": options.fallback_model,
        "max_turns": options.max_turns,
        "max_budget_usd": options.max_budget_usd,
        "tools": options.tools,
        "allowed_tools": options.allowed_tools,
        "disallowed_tools": options.disallowed_tools,
        "custom_tools": options.custom_tools.iter().map(|t| t.name().to_string()).collect::<Vec<_>>(),
        "agents": options.agents.keys().collect::<Vec<_>>(),
        "env_keys": options.env.keys().collect::<Vec<_>>(),
        "hooks": options.hooks.as_ref().map(|h| h.len()),
        "output_format": options.output_format,
        "max_structured_output_retries": options.max_structured_output_retries,
    });
    if !options.plugin_dirs.is_empty() {
        value["plugin_dirs"] = options
            .plugin_dirs
            .iter()
            .map(|d| serde_json::json!({"path": d.path, "skip_mcp": d.skip_mcp}))
            .collect();
    }
    value
}

/// The digest of what governs the session, for telemetry: the options
/// the ledger's `options_digest` covers and every settings layer read.
fn policy_digest(options_value: &serde_json::Value, settings: &LoadedSettings) -> String {
    let layers: Vec<_> = settings.layers.iter().map(|l| &l.settings).collect();
    tascer_ledger::input_digest(&serde_json::json!({
        "options": options_value,
        "settings": layers,
    }))
}

fn resolve_cwd(cwd: Option<&PathBuf>) -> Result<PathBuf, Error> {
    let dir = match cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| Error::Cwd(e.to_string()))?,
    };
    dir.canonicalize()
        .map_err(|_| Error::Cwd(dir.display().to_string()))
}

fn api_key_source(provider: &ProviderConfig) -> String {
    match (provider.kind, provider.api_key.is_some()) {
        (ProviderKind::Anthropic, true) => "ANTHROPIC_API_KEY".into(),
        (ProviderKind::OpenAi, true) => "OPENAI_API_KEY".into(),
        (_, false) => "none".into(),
    }
}

/// Returns the id if it looks like a UUID (8-4-4-4-12 hex).
fn uuid_like(id: &str) -> Option<&str> {
    let parts: Vec<&str> = id.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    (parts.len() == 5
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit())))
    .then_some(id)
}
