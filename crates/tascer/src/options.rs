//! Options of a session.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tascer_core::Tool;
use tascer_guard::gates::{Gate, ValidationConfig};
use tascer_guard::hooks::HookRegistry;
use tascer_guard::permissions::{Asker, CanUseTool, PermissionMode, Policy, WorkaroundConfig};
use tascer_guard::settings::SettingsSource;
use tascer_mcp::{McpServerConfig, McpTunnel, SdkServer};
use tascer_model::ProviderConfig;

use crate::context_cache::ContextCache;

/// One plugin directory to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDir {
    /// The directory (relative to the session's working directory, or
    /// absolute).
    pub path: PathBuf,
    /// Load everything but its MCP servers (`--plugin-dir-no-mcp`, the TS
    /// SDK's `skipMcpDiscovery`).
    pub skip_mcp: bool,
}

impl PluginDir {
    /// A plugin directory loaded whole.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PluginDir {
            path: path.into(),
            skip_mcp: false,
        }
    }

    /// A plugin directory loaded without its MCP servers.
    pub fn without_mcp(path: impl Into<PathBuf>) -> Self {
        PluginDir {
            path: path.into(),
            skip_mcp: true,
        }
    }
}

/// The system prompt to use.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SystemPrompt {
    /// Tascer's default prompt, which describes the environment.
    #[default]
    Default,
    /// Replace the default prompt entirely.
    Replace(String),
    /// The default prompt followed by this text.
    Append(String),
}

/// A subagent the `Task` tool can start (Claude Code's `AgentDefinition`).
///
/// Deserializes from the SDK's JSON shape (`description`, `prompt`,
/// `tools`, `model`, `maxTurns`; other SDK fields are ignored).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDefinition {
    /// When to use it (shown to the model).
    pub description: String,
    /// Its system prompt.
    pub prompt: String,
    /// The tools it may use (None = all of the session's, never Task).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Its model (None or `inherit` = the session's).
    #[serde(default)]
    pub model: Option<String>,
    /// Its turn limit (default 30).
    #[serde(default)]
    pub max_turns: Option<u32>,
}

/// Options of a session: the model, limits, tools, and where it runs.
///
/// Built with chained setters: `Options::new().model("…").max_turns(5)`.
#[derive(Clone, Default)]
pub struct Options {
    /// Model id; defaults to the provider's default model.
    pub model: Option<String>,
    /// Model to switch to after repeated overload errors.
    pub fallback_model: Option<String>,
    /// System prompt.
    pub system_prompt: SystemPrompt,
    /// Working directory; defaults to the process's.
    pub cwd: Option<PathBuf>,
    /// Stop after this many model calls in one prompt.
    pub max_turns: Option<u32>,
    /// Stop once the session has cost this much (USD).
    pub max_budget_usd: Option<f64>,
    /// Compact the conversation before a model call once the previous
    /// call's input reached this many tokens (input + cache reads and
    /// writes): the model summarizes it and the summary replaces it.
    /// `None` (the default) never compacts on its own.
    pub auto_compact_tokens: Option<u64>,
    /// The set of built-in tools offered (None = all).
    pub tools: Option<Vec<String>>,
    /// Allow rules in Claude Code's syntax (`Read`, `Bash(npm test:*)`).
    pub allowed_tools: Vec<String>,
    /// Deny rules; a bare tool name also removes the tool from the model's
    /// context.
    pub disallowed_tools: Vec<String>,
    /// Emit raw streaming events as `stream_event` messages.
    pub include_partial_messages: bool,
    /// Extra environment variables for tools' subprocesses.
    pub env: HashMap<String, String>,
    /// Resume this session id with its full history.
    pub resume: Option<String>,
    /// Continue the most recent session of the working directory.
    pub continue_conversation: bool,
    /// With `resume`/`continue`, copy the history into a new session.
    pub fork_session: bool,
    /// Use this id (a UUID) for a new session.
    pub session_id: Option<String>,
    /// Provider settings; default: from the environment.
    pub provider: Option<ProviderConfig>,
    /// The Tascer home (store location); default `$TASCER_HOME` or `~/.tascer`.
    pub home: Option<PathBuf>,
    /// Where a Claude Code–format transcript of the session is written
    /// (`<dir>/projects/<sanitized cwd>/<session id>.jsonl`, the files the
    /// SDKs' session helpers read and hooks get as `transcript_path`);
    /// `None`: no transcript.
    pub transcript_dir: Option<PathBuf>,
    /// Custom tools, offered next to the built-in ones.
    pub custom_tools: Vec<Arc<dyn Tool>>,
    /// Maximum output tokens per model call.
    pub max_tokens: Option<u32>,
    /// Subagents the `Task` tool can start, by name.
    pub agents: BTreeMap<String, AgentDefinition>,
    /// Hooks (in-process and command hooks) run around tool calls, prompts
    /// and stops.
    pub hooks: Option<HookRegistry>,
    /// Key that signs the ledger head; default: the key pair in the Tascer
    /// home (`keys/tascer-ed25519.key`), created on first use unless
    /// signing is off ([`signing`](Self::signing)).
    pub signing_key: Option<tascer_ledger::SigningKey>,
    /// Whether sessions are signed. `None` (the default) follows
    /// [`SIGNING_ENV`]: signed unless it is `off`. `Some(false)` writes an
    /// unsigned ledger (`tascer verify` warns that a cut-off tail cannot be
    /// detected); an explicit [`signing_key`](Self::signing_key) always
    /// signs.
    pub signing: Option<bool>,
    /// Permission mode; default: the settings' `permissions.defaultMode`,
    /// else `default`.
    pub permission_mode: Option<PermissionMode>,
    /// Flag settings (`--settings`): a settings file path (relative to the
    /// working directory) or inline JSON. Highest precedence.
    pub settings: Option<String>,
    /// Which settings files to read: user (`~/.tascer/settings.json`),
    /// project (`.tascer/settings.json`), local
    /// (`.tascer/settings.local.json`). Empty (the default, as in the
    /// Claude Agent SDK) reads none; the CLI reads all three.
    pub setting_sources: Vec<SettingsSource>,
    /// Also read Claude Code's `.claude/settings*.json` next to Tascer's.
    pub claude_settings: bool,
    /// Called for every call the rules leave at "ask".
    pub can_use_tool: Option<CanUseTool>,
    /// Prompts a human for calls left at "ask" (the CLI's terminal prompt);
    /// without one (and without `can_use_tool`), "ask" becomes a denial
    /// that says what would allow the call.
    pub asker: Option<Arc<dyn Asker>>,
    /// Extra permission policies, checked next to the built-in ones.
    pub policies: Vec<Arc<dyn Policy>>,
    /// Told the facts of the session as it runs: each agent invocation,
    /// model call and tool call with its decision, gates, verdicts and
    /// ledger hash (OpenTelemetry: `tascer-telemetry`, docs/telemetry.md).
    pub observer: Option<Arc<dyn tascer_core::observe::Observer>>,
    /// Leave out the built-in file, shell and MCP policies.
    pub disable_default_policies: bool,
    /// Directories outside the working directory that file tools may use
    /// (`--add-dir`).
    pub additional_directories: Vec<PathBuf>,
    /// Refuse MCP servers' sampling requests (by default they are answered
    /// by the session's model and recorded as model calls).
    pub refuse_mcp_sampling: bool,
    /// Workaround detection (alike denied calls escalate); default on.
    pub workaround: Option<WorkaroundConfig>,
    /// Gates per tool; default: the settings' `validation` value, else
    /// [`ValidationConfig::default`].
    pub validation: Option<ValidationConfig>,
    /// Gates registered next to the built-in ones, by their names.
    pub gates: Vec<Arc<dyn Gate>>,
    /// Environment variables recorded in each tool call's context (never
    /// any other); default: the validation config's `env_allowlist`, else
    /// [`DEFAULT_CONTEXT_ENV`].
    pub context_env: Option<Vec<String>>,
    /// Whether each tool call's context records the git state; default:
    /// the validation config's `capture_git_state` (true unless set).
    pub capture_git_state: Option<bool>,
    /// Whether each tool record is sealed with its proof hash; default:
    /// the validation config's `generate_proofs` (true unless set).
    pub generate_proofs: Option<bool>,
    /// Where the session's git-state capturers come from: sessions given
    /// the same [`ContextCache`] (clones of one) in the same directory
    /// share the git status one of them computed. `None` (the default): a
    /// cache of the session's own. Pass one when starting several sessions
    /// in one directory, one after another or side by side.
    pub context_cache: Option<ContextCache>,
    /// MCP servers by name (Claude Code's `mcpServers` shape). Their tools
    /// appear as `mcp__<server>__<tool>` and go through the same pipeline
    /// as built-in tools.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// In-process MCP servers (no subprocess); name them in `mcp_servers`
    /// as `{"type": "sdk", "name": …}` or add them with
    /// [`Options::sdk_server`].
    pub sdk_servers: Vec<SdkServer>,
    /// Reaches `{"type": "sdk", …}` servers that are not in
    /// [`sdk_servers`](Self::sdk_servers): they live in an SDK host (the
    /// official Agent SDKs driving `tascer`), which carries their MCP
    /// messages.
    pub mcp_tunnel: Option<Arc<dyn McpTunnel>>,
    /// Answers the model's `AskUserQuestion` calls (a terminal prompt, a
    /// UI). Without one, the tool reports that no one can answer.
    pub user_answerer: Option<Arc<dyn tascer_tools::UserAnswerer>>,
    /// Told when a background shell (`Bash` with `run_in_background`)
    /// starts and ends: a host reporting background tasks (the SDKs'
    /// `task_started` / `task_notification`).
    pub task_listener: Option<Arc<dyn tascer_tools::TaskListener>>,
    /// Answers MCP servers' questions (elicitation) that no Elicitation
    /// hook answered: an SDK host, a terminal prompt. With one (or with
    /// Elicitation hooks) the session's MCP clients offer elicitation;
    /// without either, servers' questions are declined.
    pub elicitor: Option<Arc<dyn tascer_mcp::Elicitor>>,
    /// The user's Claude directory, where user-level `CLAUDE.md`, skills,
    /// commands and agents live; default `$CLAUDE_CONFIG_DIR`, else
    /// `~/.claude`. Read only when `setting_sources` has `user`.
    pub claude_config_dir: Option<PathBuf>,
    /// Structured output: the final answer must be JSON valid against this
    /// schema (the SDK's `output_format`); see docs/sessions.md.
    pub output_format: Option<OutputFormat>,
    /// How many times the model is asked to fix an answer that does not
    /// match `output_format` before the turn fails (default 3).
    pub max_structured_output_retries: Option<u32>,
    /// File checkpointing (the SDKs' `enable_file_checkpointing`): keep, in
    /// the store, what each Write, Edit, MultiEdit and NotebookEdit call
    /// changed, so [`Client::rewind_files`](crate::Client::rewind_files)
    /// can restore it. Default off.
    pub file_checkpointing: bool,
    /// Where the model's answers come from instead of the provider (a
    /// recorded session being replayed, [`crate::replay`]); `None` (the
    /// default): the provider.
    pub answer_source: Option<Arc<dyn tascer_model::AnswerSource>>,
    /// For a replay: the session it replays and from where, recorded in
    /// the ledger's `session_start` (under `replay_of`).
    pub replay_of: Option<serde_json::Value>,
    /// Plugin directories (`--plugin-dir`, the SDKs' `plugins`): their
    /// commands, skills, agents, hooks and MCP servers join the session's
    /// (docs/plugins.md).
    pub plugin_dirs: Vec<PluginDir>,
    /// With `resume` or `continue`: continue from the conversation as it
    /// was up to and including this message (the uuid of one of its
    /// messages), in a new session forked at it (docs/sessions.md).
    pub resume_session_at: Option<String>,
    /// With `resume_session_at`: the uuid of the prompt whose turn the cut
    /// drops; the resume is refused when the cut would drop anything else
    /// (another prompt).
    pub resume_drops_turn: Option<String>,
}

/// The shape of the final answer (the SDK's `output_format`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputFormat {
    /// A JSON value valid against a JSON Schema.
    JsonSchema {
        /// The schema.
        schema: serde_json::Value,
    },
}

/// Environment variable that turns ledger signing off when it is `off`
/// (also `0`, `false`, `no`), for sessions whose options leave
/// [`Options::signing`] unset.
pub const SIGNING_ENV: &str = "TASCER_SIGNING";

/// Whether sessions with these options are signed with the home's key.
pub(crate) fn signing_on(options: &Options) -> bool {
    options.signing.unwrap_or_else(signing_from_env)
}

/// Whether [`SIGNING_ENV`] leaves signing on (it is on unless the variable
/// is `off`, `0`, `false` or `no`).
pub fn signing_from_env() -> bool {
    !std::env::var(SIGNING_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    })
}

/// Environment variables recorded in tool-call context by default.
pub const DEFAULT_CONTEXT_ENV: &[&str] = &[
    "CI",
    "GITHUB_ACTIONS",
    "GITHUB_REF",
    "GITHUB_RUN_ID",
    "GITHUB_SHA",
    "LANG",
    "SHELL",
];

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("model", &self.model)
            .field("fallback_model", &self.fallback_model)
            .field("system_prompt", &self.system_prompt)
            .field("cwd", &self.cwd)
            .field("max_turns", &self.max_turns)
            .field("max_budget_usd", &self.max_budget_usd)
            .field("tools", &self.tools)
            .field("allowed_tools", &self.allowed_tools)
            .field("disallowed_tools", &self.disallowed_tools)
            .field("resume", &self.resume)
            .field("continue_conversation", &self.continue_conversation)
            .field("fork_session", &self.fork_session)
            .field("session_id", &self.session_id)
            .field("permission_mode", &self.permission_mode)
            .field("settings", &self.settings)
            .field("setting_sources", &self.setting_sources)
            .field("can_use_tool", &self.can_use_tool.is_some())
            .field("elicitor", &self.elicitor.is_some())
            .field("answer_source", &self.answer_source.is_some())
            .field("replay_of", &self.replay_of)
            .field(
                "custom_tools",
                &self
                    .custom_tools
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the fallback model.
    pub fn fallback_model(mut self, model: impl Into<String>) -> Self {
        self.fallback_model = Some(model.into());
        self
    }

    /// Replaces the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = SystemPrompt::Replace(prompt.into());
        self
    }

    /// Appends to the default system prompt.
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = SystemPrompt::Append(text.into());
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the model-call limit per prompt.
    pub fn max_turns(mut self, n: u32) -> Self {
        self.max_turns = Some(n);
        self
    }

    /// Compacts the conversation once a model call's input reaches
    /// `tokens` (see [`Options::auto_compact_tokens`]).
    pub fn auto_compact_tokens(mut self, tokens: u64) -> Self {
        self.auto_compact_tokens = Some(tokens);
        self
    }

    /// Sets the budget in USD.
    pub fn max_budget_usd(mut self, usd: f64) -> Self {
        self.max_budget_usd = Some(usd);
        self
    }

    /// Restricts the built-in tools offered to these names.
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds auto-approve rules.
    pub fn allowed_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, rules: I) -> Self {
        self.allowed_tools.extend(rules.into_iter().map(Into::into));
        self
    }

    /// Removes tools from the model's context.
    pub fn disallowed_tools<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        names: I,
    ) -> Self {
        self.disallowed_tools
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Emit `stream_event` messages.
    pub fn include_partial_messages(mut self, yes: bool) -> Self {
        self.include_partial_messages = yes;
        self
    }

    /// Adds an environment variable for tools.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Resumes a session by id.
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.resume = Some(session_id.into());
        self
    }

    /// Continues the latest session of the working directory.
    pub fn continue_conversation(mut self, yes: bool) -> Self {
        self.continue_conversation = yes;
        self
    }

    /// Forks instead of appending when resuming or continuing.
    pub fn fork_session(mut self, yes: bool) -> Self {
        self.fork_session = yes;
        self
    }

    /// Names a new session.
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Sets the provider configuration.
    pub fn provider(mut self, config: ProviderConfig) -> Self {
        self.provider = Some(config);
        self
    }

    /// Sets the Tascer home directory.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Adds a subagent definition for the `Task` tool.
    pub fn agent(mut self, name: impl Into<String>, definition: AgentDefinition) -> Self {
        self.agents.insert(name.into(), definition);
        self
    }

    /// Signs the ledger with this key.
    pub fn signing_key(mut self, key: tascer_ledger::SigningKey) -> Self {
        self.signing_key = Some(key);
        self
    }

    /// Turns signing with the home's key on or off (see
    /// [`Options::signing`](struct@Options)).
    pub fn signing(mut self, on: bool) -> Self {
        self.signing = Some(on);
        self
    }

    /// Sets the hooks.
    pub fn hooks(mut self, registry: HookRegistry) -> Self {
        self.hooks = Some(registry);
        self
    }

    /// Adds a custom tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.custom_tools.push(tool);
        self
    }

    /// Sets the permission mode.
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// Sets flag settings: a file path or inline JSON.
    pub fn settings(mut self, file_or_json: impl Into<String>) -> Self {
        self.settings = Some(file_or_json.into());
        self
    }

    /// Reads these settings files (user, project, local).
    pub fn setting_sources<I: IntoIterator<Item = SettingsSource>>(mut self, sources: I) -> Self {
        self.setting_sources = sources.into_iter().collect();
        self
    }

    /// Also reads Claude Code's `.claude/settings*.json`.
    pub fn claude_settings(mut self, yes: bool) -> Self {
        self.claude_settings = yes;
        self
    }

    /// Sets the `can_use_tool` callback.
    pub fn can_use_tool(mut self, callback: CanUseTool) -> Self {
        self.can_use_tool = Some(callback);
        self
    }

    /// Sets the interactive asker.
    pub fn asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// Adds a permission policy.
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policies.push(policy);
        self
    }

    /// Sets the observer told the facts of the session as it runs.
    pub fn observer(mut self, observer: Arc<dyn tascer_core::observe::Observer>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Refuses (or answers, the default) MCP servers' sampling requests.
    pub fn refuse_mcp_sampling(mut self, refuse: bool) -> Self {
        self.refuse_mcp_sampling = refuse;
        self
    }

    /// Adds a directory file tools may use.
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.additional_directories.push(dir.into());
        self
    }

    /// Sets the gates per tool.
    pub fn validation(mut self, config: ValidationConfig) -> Self {
        self.validation = Some(config);
        self
    }

    /// Records only these environment variables in each call's context.
    pub fn context_env<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.context_env = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Records the git state in each call's context, or not.
    pub fn capture_git_state(mut self, on: bool) -> Self {
        self.capture_git_state = Some(on);
        self
    }

    /// Seals each tool record with its proof hash, or not.
    pub fn generate_proofs(mut self, on: bool) -> Self {
        self.generate_proofs = Some(on);
        self
    }

    /// Registers a gate (usable by name in the validation config).
    pub fn gate(mut self, gate: Arc<dyn Gate>) -> Self {
        self.gates.push(gate);
        self
    }

    /// Adds an MCP server.
    pub fn mcp_server(mut self, name: impl Into<String>, config: McpServerConfig) -> Self {
        self.mcp_servers.insert(name.into(), config);
        self
    }

    /// Adds an in-process MCP server (and its `sdk` entry in
    /// `mcp_servers`).
    pub fn sdk_server(mut self, server: SdkServer) -> Self {
        let name = server.name().to_string();
        self.mcp_servers
            .insert(name.clone(), McpServerConfig::Sdk { name });
        self.sdk_servers.push(server);
        self
    }

    /// Reaches the `sdk` servers an SDK host serves through `tunnel`.
    pub fn mcp_tunnel(mut self, tunnel: Arc<dyn McpTunnel>) -> Self {
        self.mcp_tunnel = Some(tunnel);
        self
    }

    /// Adds a plugin directory (see [`Options::plugin_dirs`]).
    pub fn plugin_dir(mut self, dir: PluginDir) -> Self {
        self.plugin_dirs.push(dir);
        self
    }

    /// Sets the user's Claude directory (see [`Options::claude_config_dir`]).
    pub fn claude_config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.claude_config_dir = Some(dir.into());
        self
    }

    /// Asks for a final answer valid against this JSON Schema.
    pub fn json_schema(mut self, schema: serde_json::Value) -> Self {
        self.output_format = Some(OutputFormat::JsonSchema { schema });
        self
    }

    /// Shares this context cache with the other sessions given it (see
    /// [`Options::context_cache`](struct@Options)).
    pub fn context_cache(mut self, cache: ContextCache) -> Self {
        self.context_cache = Some(cache);
        self
    }

    /// Sets who is told when background shells start and end.
    pub fn task_listener(mut self, listener: Arc<dyn tascer_tools::TaskListener>) -> Self {
        self.task_listener = Some(listener);
        self
    }

    /// Sets who answers the model's `AskUserQuestion` calls.
    pub fn user_answerer(mut self, answerer: Arc<dyn tascer_tools::UserAnswerer>) -> Self {
        self.user_answerer = Some(answerer);
        self
    }

    /// Sets who answers MCP servers' questions after the session's
    /// Elicitation hooks (see [`Options::elicitor`](struct@Options)).
    pub fn elicitor(mut self, elicitor: Arc<dyn tascer_mcp::Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }
}
