//! A session: its identity, history, tools, model client and store.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use tascer_core::{ChatMessage, Tool};
use tascer_model::{ModelClient, ProviderConfig, ProviderKind};
use tascer_store::{NewSession, SessionStore};

use crate::agent::Agent;
use crate::error::Error;
use crate::governance::Governance;
use crate::loop_env::{Costs, LoopEnv};
use crate::options::{Options, SystemPrompt};
use crate::proof::Proof;
use crate::system_prompt::default_system_prompt;
use crate::write_failure::WriteFailure;
use tascer_guard::hooks::SessionStartSource;
use tascer_mcp::{McpManager, McpOptions};

/// The home's signing key, created on first use with a one-line notice.
fn home_signing_key(home: &std::path::Path) -> Result<tascer_ledger::SigningKey, Error> {
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
    pub memory: Vec<crate::memory::MemoryFile>,
    /// Skills offered through the `Skill` tool.
    pub skills: Vec<crate::skills::Skill>,
    /// Custom slash commands.
    pub commands: Vec<crate::commands::SlashCommand>,
    /// The output schema the final answer must match, if any.
    pub structured: Option<crate::structured::StructuredOutput>,
}

impl Session {
    /// Opens or creates the session the options describe.
    pub async fn start(mut options: Options) -> Result<Session, Error> {
        let cwd = resolve_cwd(options.cwd.as_ref())?;
        let cwd_text = cwd.display().to_string();

        let mut provider = match &options.provider {
            Some(p) => p.clone(),
            None => ProviderConfig::from_env()?,
        };
        if options.fallback_model.is_some() {
            provider.fallback_model = options.fallback_model.clone();
        }
        let api_key_source = api_key_source(&provider);
        let model = options
            .model
            .clone()
            .unwrap_or_else(|| default_model(provider.kind));
        let secrets: Vec<String> = provider.api_key.iter().cloned().collect();
        let client = ModelClient::new(provider)?;

        let home = options.home.clone().unwrap_or_else(crate::tascer_home);
        let store = Arc::new(SessionStore::open_in_home(&home)?);

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
            if (options.resume.is_some() || options.continue_conversation) && !options.fork_session
            {
                return Err(Error::InvalidOptions(
                    "--session-id with --resume or --continue requires --fork-session".into(),
                ));
            }
        }

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

        let id = match existing {
            Some(info) if options.fork_session => {
                let new_id = options
                    .session_id
                    .clone()
                    .unwrap_or_else(tascer_core::new_id);
                store.fork(&info.id, &new_id)?;
                new_id
            }
            Some(info) => info.id,
            None => {
                let id = options
                    .session_id
                    .clone()
                    .unwrap_or_else(tascer_core::new_id);
                store.create_session(&NewSession {
                    id: &id,
                    cwd: &cwd_text,
                    model: &model,
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

        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        let mut system_prompt = match &options.system_prompt {
            SystemPrompt::Default => default_system_prompt(&cwd, &today),
            SystemPrompt::Replace(text) => text.clone(),
            SystemPrompt::Append(text) => {
                format!("{}\n\n{}", default_system_prompt(&cwd, &today), text)
            }
        };

        let user_dir = options
            .claude_config_dir
            .clone()
            .or_else(crate::memory::default_user_dir);
        let user_home = std::env::home_dir();
        let memory = crate::memory::load(
            &crate::memory::MemoryLocations {
                cwd: &cwd,
                user_dir: user_dir.as_deref(),
                home: user_home.as_deref(),
            },
            &options.setting_sources,
        );
        let memory_section = crate::memory::prompt_section(&memory);
        if let Some(section) = &memory_section {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(section);
        }

        let commands = crate::commands::load(&cwd, user_dir.as_deref(), &options.setting_sources)?;
        let skills = crate::skills::load(&cwd, user_dir.as_deref(), &options.setting_sources)?;
        // Agent files, then the options' own agents (which win).
        let mut agents = crate::agents::load(&cwd, user_dir.as_deref(), &options.setting_sources)?;
        agents.append(&mut options.agents);
        options.agents = agents;
        let structured = match &options.output_format {
            Some(format) => Some(crate::structured::StructuredOutput::new(
                format,
                options.max_structured_output_retries,
            )?),
            None => None,
        };
        if let Some(structured) = &structured {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(&structured.prompt_section());
        }

        let settings = crate::setup::load_settings(&options, &cwd, &home)?;
        let parts = crate::setup::build(&options, &settings, &cwd, secrets)?;

        let signing_key = match &options.signing_key {
            Some(key) => Some(key.clone()),
            None if crate::options::signing_on(&options) => Some(home_signing_key(&home)?),
            None => None,
        };
        // One backend for the session store and the ledger: with SQLite,
        // one connection, so their writes queue inside this process instead
        // of competing for the file lock; with PostgreSQL, one pool.
        let ledger = Arc::new(tascer_ledger::Ledger::with_backend(
            Arc::clone(store.backend()),
            home.join("evidence"),
            signing_key,
        ));
        let failure = WriteFailure::default();
        let proof = Proof::new(ledger, id.clone(), failure.clone());
        proof.start(
            &model,
            &options_digest_value(&options, &model),
            &system_prompt,
            serde_json::json!({
                "cwd": cwd_text,
                "tascer_version": crate::VERSION,
                "memory_files": memory,
            }),
        )?;
        let shared_cwd = tascer_core::ToolContext::shared_cwd(cwd.clone());
        let env = LoopEnv {
            session_id: id.clone(),
            client,
            store,
            shared_cwd,
            env: Arc::new(parts.env),
            include_partial_messages: options.include_partial_messages,
            max_tokens: options.max_tokens,
            costs: Arc::new(Mutex::new(Costs {
                total_usd: total_cost_usd,
                per_model: Vec::new(),
            })),
            sink: Arc::new(Mutex::new(None)),
            pending_totals: Arc::default(),
            proof,
            failure,
        };
        // The reviewers' cache and the webhook outbox live in the home's
        // local SQLite file (the store's own when it is SQLite).
        let needs_local = !parts.safety.reviewers.is_empty() || !settings.webhooks().is_empty();
        let local_db = match needs_local {
            true => Some(crate::setup::local_db(&env.store, &home)?),
            false => None,
        };
        let reviewers = local_db
            .as_ref()
            .and_then(|db| crate::reviewer::for_session(&parts.safety.reviewers, &env, &model, db));
        let webhooks = match &local_db {
            Some(db) => tascer_webhook::Webhooks::open(
                settings.webhooks(),
                db,
                tascer_webhook::Source::Run,
            )?,
            None => None,
        };
        if let Some(webhooks) = &webhooks {
            webhooks.start_delivery();
        }
        let governance = Arc::new(
            Governance::new(
                parts.admission.reviewers(reviewers),
                parts.context,
                cwd_text.clone(),
                env.store.location().to_string(),
            )
            .with_webhooks(webhooks),
        );
        governance.context.prewarm(&cwd);
        let mcp = connect_mcp(&options).await;
        let mcp_tools = match &mcp {
            Some(m) => m.tools_snapshot(),
            None => Vec::new(),
        };
        let tools = select_tools(
            &options,
            &env,
            &model,
            &cwd,
            &governance,
            mcp_tools,
            Extras {
                home: &home,
                skills: &skills,
                memory_section,
            },
        );
        let source = if options.fork_session {
            SessionStartSource::Fork
        } else if options.resume.is_some() || options.continue_conversation {
            SessionStartSource::Resume
        } else {
            SessionStartSource::Startup
        };
        let pending_context = governance.on_session_start(&env, source, &model).await;
        let agent = Agent::new(env, model, system_prompt, tools, None, governance);

        Ok(Session {
            id,
            cwd,
            history,
            options,
            api_key_source,
            total_turns,
            agent,
            mcp,
            pending_context,
            last_input_tokens: 0,
            just_compacted: false,
            memory,
            skills,
            commands,
            structured,
        })
    }
}

/// What of the options the ledger's `options_digest` covers.
fn options_digest_value(options: &Options, model: &str) -> serde_json::Value {
    serde_json::json!({
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
    })
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

/// Connects the configured MCP servers (concurrently, each under the
/// startup timeout). A server that fails is reported in `system/init`,
/// never fatal.
async fn connect_mcp(options: &Options) -> Option<McpManager> {
    if options.mcp_servers.is_empty() && options.sdk_servers.is_empty() {
        return None;
    }
    let mut configs = options.mcp_servers.clone();
    for sdk in &options.sdk_servers {
        configs
            .entry(sdk.name().to_string())
            .or_insert_with(|| tascer_mcp::McpServerConfig::Sdk {
                name: sdk.name().to_string(),
            });
    }
    let mcp_options = McpOptions {
        sdk_servers: options.sdk_servers.clone(),
        tunnel: options.mcp_tunnel.clone(),
        ..McpOptions::default()
    };
    let manager = McpManager::connect_with(configs, mcp_options).await;
    for status in manager.statuses() {
        if let Some(error) = &status.error {
            tracing::warn!(server = %status.name, "MCP server failed to start: {error}");
        }
    }
    Some(manager)
}

/// True when a tool is removed from the model's context: a bare-name
/// `disallowed_tools` entry.
pub(crate) fn removed(options: &Options, name: &str) -> bool {
    options.disallowed_tools.iter().any(|n| n == name)
}

/// Where tools come from besides the options: the home, and what the
/// session's files add.
struct Extras<'a> {
    /// The Tascer home (the todo list lives there).
    home: &'a std::path::Path,
    /// Skills for the `Skill` tool.
    skills: &'a [crate::skills::Skill],
    /// The memory section, for subagents' system prompts.
    memory_section: Option<String>,
}

fn select_tools(
    options: &Options,
    env: &LoopEnv,
    model: &str,
    cwd: &std::path::Path,
    governance: &Arc<Governance>,
    mcp_tools: Vec<Arc<dyn Tool>>,
    extras: Extras<'_>,
) -> Vec<Arc<dyn Tool>> {
    let (home, skills) = (extras.home, extras.skills);
    let offered = |name: &str| {
        options
            .tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
            && !options.disallowed_tools.iter().any(|n| n == name)
    };
    let mut state = tascer_tools::ToolState::new().with_todo_dir(home.join("todos"));
    if let Some(answerer) = &options.user_answerer {
        state = state.with_user_answerer(Arc::clone(answerer));
    }
    let mut tools: Vec<Arc<dyn Tool>> = tascer_tools::builtin_tools(state)
        .into_iter()
        .filter(|t| offered(t.name()))
        .chain(
            options
                .custom_tools
                .iter()
                .filter(|t| !removed(options, t.name()))
                .cloned(),
        )
        .chain(
            mcp_tools
                .into_iter()
                .filter(|t| !removed(options, t.name())),
        )
        .collect();
    if !skills.is_empty() && offered(crate::skills::SKILL_TOOL_NAME) {
        tools.push(Arc::new(crate::skills::SkillTool::new(skills.to_vec())));
    }
    if offered(crate::task_tool::TASK_TOOL_NAME) {
        let task = crate::task_tool::TaskTool::new(
            env.clone(),
            model.to_string(),
            cwd.to_path_buf(),
            tools
                .iter()
                .filter(|t| t.offered_to_subagents())
                .cloned()
                .collect(),
            options.agents.clone(),
            Arc::clone(governance),
        )
        .with_memory(extras.memory_section);
        tools.insert(0, Arc::new(task));
    }
    tools
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
