//! A session's tool set: the built-in tools its options offer, custom
//! tools, the tools of its MCP servers, `Skill` and `Task`.

use std::path::Path;
use std::sync::Arc;

use tascer_core::Tool;
use tascer_mcp::oauth::OAuthOptions;
use tascer_mcp::{McpManager, McpOptions};

use crate::governance::Governance;
use crate::loop_env::LoopEnv;
use crate::options::Options;
use crate::skills::{SKILL_TOOL_NAME, Skill, SkillTool};
use crate::task_tool::{TASK_TOOL_NAME, TaskTool};

/// Connects the configured MCP servers (concurrently, each under the
/// startup timeout). A server that fails is reported in `system/init`,
/// never fatal.
pub(crate) async fn connect_mcp(
    options: &Options,
    cwd: &Path,
    elicitor: Option<Arc<dyn tascer_mcp::Elicitor>>,
    sampler: Option<Arc<dyn tascer_mcp::Sampler>>,
) -> Option<McpManager> {
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
    // A session is unattended: a server that needs a (new) OAuth login
    // fails, naming `tascer mcp login SERVER`; stored tokens are used and
    // refreshed.
    let home = options.home.clone().unwrap_or_else(crate::tascer_home);
    let mcp_options = McpOptions {
        sdk_servers: options.sdk_servers.clone(),
        tunnel: options.mcp_tunnel.clone(),
        oauth: OAuthOptions {
            token_dir: Some(mcp_token_dir(&home)),
            ..OAuthOptions::default()
        },
        elicitor,
        sampler,
        // `roots/list`: the workspace and the --add-dir directories.
        roots: std::iter::once(cwd.to_path_buf())
            .chain(options.additional_directories.iter().map(|d| cwd.join(d)))
            .collect(),
        ..McpOptions::default()
    };
    let manager = McpManager::connect_with(configs, mcp_options).await;
    for status in manager.statuses() {
        if let Some(error) = &status.error {
            tracing::warn!(server = %status.name, "MCP server failed to start: {error}");
        }
        warn_unknown_permission_tools(options, &status);
    }
    Some(manager)
}

/// Warns about entries of a connected server's `permissions` lists that
/// name no tool it offers: a typo there would protect nothing.
fn warn_unknown_permission_tools(options: &Options, status: &tascer_mcp::McpServerStatus) {
    if status.status != tascer_mcp::McpStatus::Connected {
        return;
    }
    let Some(permissions) = options
        .mcp_servers
        .get(&status.name)
        .and_then(|c| c.tool_permissions())
    else {
        return;
    };
    for (list, tool) in permissions.unknown_tools(&status.tools) {
        tracing::warn!(
            server = %status.name,
            "mcpServers.{}.permissions.{list} names {tool:?}, which the server does not offer \
             (its tools: {})",
            status.name,
            status.tools.join(", ")
        );
    }
}

/// Where the MCP servers' OAuth tokens live: `<home>/mcp-auth`.
pub fn mcp_token_dir(home: &Path) -> std::path::PathBuf {
    home.join("mcp-auth")
}

/// True when a tool is removed from the model's context: a bare-name
/// `disallowed_tools` entry, or an MCP tool its server's configuration
/// denies.
pub(crate) fn removed(options: &Options, name: &str) -> bool {
    options.disallowed_tools.iter().any(|n| n == name)
        || tascer_mcp::denied_by_server_config(&options.mcp_servers, name)
}

/// Where tools come from besides the options: the home, and what the
/// session's files add.
pub(crate) struct Extras<'a> {
    /// The Tascer home (the todo list lives there).
    pub home: &'a Path,
    /// Skills for the `Skill` tool.
    pub skills: &'a [Skill],
    /// The memory section, for subagents' system prompts.
    pub memory_section: Option<String>,
    /// The OS sandbox Bash commands run under (`None`: unconfined).
    pub sandbox: Option<tascer_tools::CommandSandbox>,
    /// What answers WebFetch's prompt and the provider's web search.
    pub web: crate::web_services::WebServices,
}

/// The session's tools: the built-in ones the options offer, the custom
/// ones, the MCP servers' tools, `Skill` when there are skills, and `Task`
/// (first) over the tools subagents may use.
pub(crate) fn select_tools(
    options: &Options,
    env: &LoopEnv,
    model: &str,
    cwd: &Path,
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
    if let Some(listener) = &options.task_listener {
        state = state.with_task_listener(Arc::clone(listener));
    }
    if let Some(sandbox) = extras.sandbox {
        state = state.with_sandbox(sandbox);
    }
    if let Some(summarizer) = extras.web.summarizer {
        state = state.with_summarizer(summarizer);
    }
    if let Some(search) = extras.web.provider_search {
        state = state.with_provider_search(search);
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
    if !skills.is_empty() && offered(SKILL_TOOL_NAME) {
        tools.push(Arc::new(SkillTool::new(skills.to_vec())));
    }
    if offered(TASK_TOOL_NAME) {
        let task = TaskTool::new(
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
