//! `tascer run`: one prompt as an agent session.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, bail};
use futures::StreamExt;
use tascer::guard::permissions::PermissionMode;
use tascer::guard::settings::SettingsSource;
use tascer::{Client, Message, Options, PluginDir};

use crate::args::{PrintFormat, RunArgs};
use crate::contractor::{RoleFlags, manager_provider, manager_run_options};
use crate::provider::{named_provider, provider_from_env};
use crate::render::Renderer;

/// Runs `tascer run` and returns the exit code: 0, or 1 when the result is
/// an error.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    check_multi_value_flags(&args)?;
    let prompt = read_prompt(args.prompt.clone())?;
    let mut options = options_from_args(&args)?;
    set_provider(&args, &mut options)?;
    if args.output_format == PrintFormat::Text
        && std::io::stderr().is_terminal()
        && std::fs::File::open("/dev/tty").is_ok()
    {
        options.asker = Some(std::sync::Arc::new(crate::asker::TerminalAsker));
        options.user_answerer = Some(std::sync::Arc::new(crate::asker::TerminalAsker));
        options.elicitor = Some(std::sync::Arc::new(crate::elicit_prompt::TerminalElicitor));
    }
    run_with_options(prompt, options, args.output_format).await
}

/// The session's provider and model: with `--execute-contracts` the
/// manager's (an OpenAI-compatible provider such as OpenRouter preferred,
/// see `tascer_contracts::choose_provider`), else `--provider`'s, else the
/// environment's.
pub(crate) fn set_provider(args: &RunArgs, options: &mut Options) -> anyhow::Result<()> {
    if args.execute_contracts.is_some() {
        let manager = manager_provider(&role_flags(args))?;
        options.model = Some(manager.model);
        options.provider = Some(manager.config);
        return Ok(());
    }
    options.provider = match &args.provider {
        Some(name) => Some(named_provider(name, args.request_timeout)?),
        None => provider_from_env(args.request_timeout)?,
    };
    Ok(())
}

/// What the flags say about the roles of a manager session.
fn role_flags(args: &RunArgs) -> RoleFlags {
    RoleFlags {
        provider: args.provider.clone(),
        model: args.model.clone(),
        contractor_provider: args.contractor_provider.clone(),
        contractor_model: args.contractor_model.clone(),
        request_timeout: args.request_timeout,
        cwd: args.cwd.clone(),
    }
}

/// Runs one prompt with ready options and renders it in `format`.
pub async fn run_with_options(
    prompt: String,
    options: Options,
    format: PrintFormat,
) -> anyhow::Result<ExitCode> {
    let mut options = options;
    if format == PrintFormat::Text {
        // Text mode streams the answer as it is generated.
        options.include_partial_messages = true;
    }
    // Sends its last batch when dropped, at the end of the run.
    let telemetry = crate::telemetry::start(&options, "tascer");
    if let Some(observer) = telemetry.observer() {
        options.observer = Some(observer);
    }
    let mut client = match Client::connect(options).await {
        Ok(client) => client,
        Err(err) => {
            if format != PrintFormat::Text {
                let result = tascer_control::startup_failure_result(&err.to_string());
                println!("{result}");
            }
            return Err(err.into());
        }
    };
    let interrupter = client.interrupter();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupter.interrupt();
        }
    });
    client.query(prompt).await?;
    let mut renderer = Renderer::new(format);
    let mut stream = client.receive_response();
    let mut is_error = false;
    let mut failure = FailureLine::default();
    let mut manager = tascer_contracts::ManagerWatch::new();
    while let Some(mut message) = stream.next().await {
        failure.observe(&message);
        manager.observe(&message);
        if let Message::Result(result) = &mut message {
            // A refused or failed ExecuteContracts fails the run.
            manager.judge(result);
            is_error = result.is_error;
        }
        renderer.render(&message)?;
    }
    renderer.finish();
    let session_id = client.session_id().to_string();
    let webhooks = client.has_webhooks().await;
    client.disconnect().await;
    if webhooks {
        // What the session's own delivery did not get to.
        crate::webhook_cmds::flush_in_background(&tascer::tascer_home());
    }
    // Automatic archival (settings `archive.auto` + `archive.to`).
    crate::archive_cmds::after_session(&session_id).await;
    if let Some(why) = manager.failure() {
        eprintln!("error: {why}");
    }
    if let Some(line) = failure.line() {
        // The last line on stderr in every output format: scripts that only
        // read the result frame keep it, people and logs see it too.
        eprintln!("{line}");
    }
    Ok(if is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The closing stderr line of a run that the model provider ended: one
/// sentence saying how often it was tried, what failed (provider, status,
/// what was wrong) and what to try.
#[derive(Default)]
struct FailureLine {
    /// `api_retry` frames since the last assistant message.
    retries: u32,
    /// The error of an `api_error` result.
    error: Option<String>,
}

impl FailureLine {
    fn observe(&mut self, message: &Message) {
        match message {
            Message::System(system) if system.subtype == "api_retry" => self.retries += 1,
            Message::Assistant(_) => self.retries = 0,
            Message::Result(result) if result.is_error && result.terminal_reason == "api_error" => {
                self.error = result
                    .errors
                    .first()
                    .cloned()
                    .or_else(|| result.result.clone());
            }
            _ => {}
        }
    }

    fn line(&self) -> Option<String> {
        let error = self.error.as_ref()?;
        Some(match self.retries {
            0 => format!("error: {error}"),
            n => format!("error: gave up after {} attempts: {error}", n + 1),
        })
    }
}

/// `--mcp-config`, `--add-dir`, `--allowedTools` and `--disallowedTools`
/// take several values, so a prompt written after them is taken as one more
/// value. Catches that before the prompt is looked for on standard input: an
/// `--mcp-config` value that is neither JSON nor an existing file, or an
/// `--add-dir` that is not a directory, is refused with what to do instead.
fn check_multi_value_flags(args: &RunArgs) -> anyhow::Result<()> {
    const HOW: &str = "this flag takes several values, so a prompt after it is read as one of them: \
                       put the prompt before the flags, or end the flag's values with `--` \
                       (tascer run --mcp-config servers.json -- \"prompt\")";
    let cwd = args.cwd.clone().unwrap_or_default();
    for value in &args.mcp_config {
        let json = value.trim_start().starts_with('{');
        if !json && !cwd.join(value).is_file() {
            bail!("--mcp-config {value:?} is neither inline JSON nor an existing file; {HOW}");
        }
    }
    for dir in &args.add_dir {
        if !cwd.join(dir).is_dir() {
            bail!(
                "--add-dir {:?} is not a directory; {HOW}",
                dir.display().to_string()
            );
        }
    }
    if args.prompt.is_none() {
        let rules = args.allowed_tools.iter().chain(&args.disallowed_tools);
        if let Some(value) = rules.clone().find(|v| looks_like_prose(v)) {
            bail!("{value:?} is not a permission rule (--allowedTools/--disallowedTools); {HOW}");
        }
    }
    Ok(())
}

/// A value with three or more space-separated words outside parentheses is
/// prose, not a list of rules like `Read Bash(npm test:*)`.
fn looks_like_prose(value: &str) -> bool {
    let mut depth = 0usize;
    let mut words = 1;
    for ch in value.trim().chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => words += 1,
            ',' if depth == 0 => return false,
            _ => {}
        }
    }
    words >= 3
}

fn read_prompt(prompt: Option<String>) -> anyhow::Result<String> {
    if let Some(p) = prompt.filter(|p| !p.trim().is_empty()) {
        return Ok(p);
    }
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no prompt: pass one as an argument (tascer run \"…\") or on standard input");
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .context("cannot read the prompt from standard input")?;
    if text.trim().is_empty() {
        bail!("no prompt: standard input was empty");
    }
    Ok(text)
}

/// Builds session options from the flags.
pub fn options_from_args(args: &RunArgs) -> anyhow::Result<Options> {
    let mut options = Options::new();
    // A Claude Code–format transcript in the Tascer home, for hooks that
    // read `transcript_path` (SDK mode writes Claude Code's own place).
    options.transcript_dir = Some(tascer::tascer_home());
    options.model = args.model.clone();
    options.fallback_model = args.fallback_model.clone();
    options.max_turns = args.max_turns;
    options.max_budget_usd = args.max_budget_usd;
    options.auto_compact_tokens = args.auto_compact_tokens;
    options.resume = args.resume.clone();
    options.continue_conversation = args.continue_;
    options.fork_session = args.fork_session;
    options.session_id = args.session_id.clone();
    options.resume_session_at = args.resume_session_at.clone();
    options.resume_drops_turn = args.resume_drops_turn.clone();
    options.plugin_dirs = (args.plugin_dir.iter().cloned().map(PluginDir::new))
        .chain(
            args.plugin_dir_no_mcp
                .iter()
                .cloned()
                .map(PluginDir::without_mcp),
        )
        .collect();
    options.cwd = args.cwd.clone();
    if let Some(prompt) = &args.system_prompt {
        options = options.system_prompt(prompt.clone());
    }
    if let Some(text) = &args.append_system_prompt {
        options = options.append_system_prompt(text.clone());
    }
    options.allowed_tools = split_list(&args.allowed_tools);
    options.disallowed_tools = split_list(&args.disallowed_tools);
    options.tools = args.tools.as_ref().map(|t| split_list(t));
    options.include_partial_messages = args.include_partial_messages;
    options.permission_mode = match (&args.permission_mode, args.dangerously_skip_permissions) {
        (Some(_), true) => {
            bail!("use either --permission-mode or --dangerously-skip-permissions, not both")
        }
        (Some(mode), false) => Some(
            mode.parse::<PermissionMode>()
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        ),
        (None, true) => Some(PermissionMode::BypassPermissions),
        (None, false) => None,
    };
    options.settings = args.settings.clone();
    options.setting_sources = setting_sources(args.setting_sources.as_deref())?;
    options.claude_settings = args.claude_settings;
    options.additional_directories = args.add_dir.clone();
    options.refuse_mcp_sampling = args.refuse_mcp_sampling;
    options.context_env.clone_from(&args.env_allowlist);
    options.capture_git_state = args.capture_git_state;
    options.generate_proofs = args.generate_proofs;
    options.mcp_servers = mcp_servers(args)?;
    if let Some(json) = &args.agents {
        options.agents = serde_json::from_str(json).context(
            "--agents must be a JSON object of agents: {\"name\": {\"description\": …, \"prompt\": …}}",
        )?;
    }
    if let Some(schema) = &args.json_schema {
        options = options.json_schema(json_schema(schema)?);
        options.max_structured_output_retries = tascer_control::structured_retries_from_env()?;
    }
    if let Some(dir) = &args.execute_contracts {
        options = tascer_contracts::with_execute_contracts(
            options,
            manager_run_options(dir, args.cwd.clone(), &role_flags(args))?,
        );
        // The flag is the user's consent: the tool runs without asking.
        options
            .allowed_tools
            .push(tascer_contracts::EXECUTE_CONTRACTS_TOOL_NAME.to_string());
    }
    Ok(options)
}

/// `--json-schema`: inline JSON, or the path of a JSON file.
fn json_schema(file_or_json: &str) -> anyhow::Result<serde_json::Value> {
    let (text, origin) = if file_or_json.trim_start().starts_with('{') {
        (file_or_json.to_string(), "--json-schema".to_string())
    } else {
        let text = std::fs::read_to_string(file_or_json).with_context(|| {
            format!("--json-schema: cannot read the schema file {file_or_json} (pass a file path or inline JSON)")
        })?;
        (text, format!("--json-schema file {file_or_json}"))
    };
    serde_json::from_str(&text).with_context(|| format!("{origin} is not valid JSON"))
}

/// The MCP servers of a run: `$TASCER_HOME/settings.json`, `.mcp.json`,
/// `.tascer/settings.json`, `.tascer/settings.local.json` (unless
/// `--strict-mcp-config`), then each `--mcp-config` (later ones win).
fn mcp_servers(
    args: &RunArgs,
) -> anyhow::Result<std::collections::BTreeMap<String, tascer::mcp::McpServerConfig>> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the working directory")?,
    };
    tascer::mcp::load_mcp_servers(
        &cwd,
        &tascer::tascer_home(),
        &args.mcp_config,
        args.strict_mcp_config,
    )
    .context("MCP server configuration")
}

/// `--setting-sources`: which settings files to read (default all).
pub(crate) fn setting_sources(names: Option<&[String]>) -> anyhow::Result<Vec<SettingsSource>> {
    let Some(names) = names else {
        return Ok(vec![
            SettingsSource::User,
            SettingsSource::Project,
            SettingsSource::Local,
        ]);
    };
    names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(|n| {
            SettingsSource::from_sdk_name(n).ok_or_else(|| {
                anyhow::anyhow!("unknown setting source {n:?} (expected user, project or local)")
            })
        })
        .collect()
}

/// Splits comma/space separated lists, keeping `Bash(npm run test:*)` whole.
fn split_list(items: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        let mut depth = 0usize;
        let mut current = String::new();
        for ch in item.chars() {
            match ch {
                '(' => {
                    depth += 1;
                    current.push(ch);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(ch);
                }
                ' ' | ',' if depth == 0 => {
                    if !current.trim().is_empty() {
                        out.push(current.trim().to_string());
                    }
                    current.clear();
                }
                _ => current.push(ch),
            }
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_list;

    #[test]
    fn splits_on_commas_and_spaces_but_not_inside_rules() {
        let got = split_list(&["Read, Bash(npm run test:*) Edit".to_string()]);
        assert_eq!(got, vec!["Read", "Bash(npm run test:*)", "Edit"]);
    }
}
