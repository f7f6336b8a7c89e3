//! The command line the official SDKs build (claude-compat §9.1): `tascer
//! run`'s flags (they are Claude Code's) plus the SDK-only ones, in both
//! `--flag value` and `--flag=value` forms. An option Tascer does not know
//! is dropped with one warning line on standard error, so a newer SDK
//! still starts it.

use std::ffi::OsString;

use clap::{Args, CommandFactory, FromArgMatches, Parser};

use crate::args::{PrintFormat, RunArgs};

/// The flags of the control-protocol mode.
#[derive(Debug, Parser)]
#[command(name = "tascer", disable_version_flag = true)]
pub struct SdkCli {
    /// The flags `tascer run` shares with Claude Code.
    #[command(flatten)]
    pub run: RunArgs,
    /// The flags only the SDKs pass.
    #[command(flatten)]
    pub sdk: SdkFlags,
}

/// Flags only the SDKs pass. Those marked "ignored" are accepted so the
/// SDK starts, and named in one warning line each.
#[derive(Debug, Default, Args)]
pub struct SdkFlags {
    /// `stream-json`: read prompts and control requests from standard input.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Read the system prompt from this file.
    #[arg(long, value_name = "FILE")]
    pub system_prompt_file: Option<std::path::PathBuf>,
    /// `stdio`: ask the SDK's `can_use_tool` callback about calls left at "ask".
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// Write `system/hook_response` frames.
    #[arg(long)]
    pub include_hook_events: bool,
    /// Echo prompts back as user frames with `isReplay: true`.
    #[arg(long)]
    pub replay_user_messages: bool,
    /// Accepted: Tascer never needs it to allow bypassPermissions.
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,
    /// Anthropic beta features, comma-separated: the `anthropic-beta` header.
    #[arg(long, value_name = "BETAS")]
    pub betas: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "LEVEL")]
    pub effort: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "MODE")]
    pub thinking: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "DISPLAY")]
    pub thinking_display: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "TOKENS")]
    pub max_thinking_tokens: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "TOKENS")]
    pub task_budget: Option<String>,
    /// Ignored: Tascer writes no transcript mirror frames.
    #[arg(long)]
    pub session_mirror: bool,
    /// No Claude Code–format transcript is written; the session is still
    /// stored in Tascer's store (its ledger is the record), with a warning.
    #[arg(long)]
    pub no_session_persistence: bool,
    /// Ignored: the main thread is always Tascer's agent.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Ignored (use TASCER_LOG=debug).
    #[arg(long)]
    pub debug: bool,
    /// Ignored (use TASCER_LOG=debug).
    #[arg(long, value_name = "FILE")]
    pub debug_file: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "MODE")]
    pub permission_prompts: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "CHANNEL")]
    pub channels: Vec<String>,
    /// Ignored (managed settings are not supported).
    #[arg(long, value_name = "JSON")]
    pub managed_settings: Option<String>,
    /// Ignored (managed settings are not supported).
    #[arg(long)]
    pub managed_settings_in_initialize: bool,
    /// Accepted: `initialize` is always awaited.
    #[arg(long)]
    pub await_initialize: bool,
    /// Fields the SDK sends in `initialize` instead of on the command line
    /// (`settings`, `disallowedTools`); they are read from there.
    #[arg(long, value_name = "FIELDS")]
    pub initialize_fields: Option<String>,
    /// Ignored.
    #[arg(long, value_name = "DIR")]
    pub project_config_root: Option<String>,
}

impl SdkFlags {
    /// Flags that were given but change nothing, by their command-line
    /// names.
    pub fn ignored(&self) -> Vec<&'static str> {
        let set = [
            ("--effort", self.effort.is_some()),
            ("--thinking", self.thinking.is_some()),
            ("--thinking-display", self.thinking_display.is_some()),
            ("--max-thinking-tokens", self.max_thinking_tokens.is_some()),
            ("--task-budget", self.task_budget.is_some()),
            ("--session-mirror", self.session_mirror),
            ("--agent", self.agent.is_some()),
            ("--debug", self.debug),
            ("--debug-file", self.debug_file.is_some()),
            ("--permission-prompts", self.permission_prompts.is_some()),
            ("--channels", !self.channels.is_empty()),
            ("--managed-settings", self.managed_settings.is_some()),
            (
                "--managed-settings-in-initialize",
                self.managed_settings_in_initialize,
            ),
            ("--project-config-root", self.project_config_root.is_some()),
        ];
        set.into_iter()
            .filter(|(_, given)| *given)
            .map(|(name, _)| name)
            .collect()
    }
}

/// The parsed command line and the warnings it gave.
#[derive(Debug)]
pub struct Parsed {
    /// The flags.
    pub cli: SdkCli,
    /// One line each: unknown options dropped, flags ignored.
    pub warnings: Vec<String>,
}

/// Parses the SDK's command line (`args[0]` is the program). Unknown
/// options (and the value after one, when it does not start with `-`) are
/// dropped with a warning; a known flag with a bad value is an error.
pub fn parse(args: &[OsString]) -> Result<Parsed, clap::Error> {
    let command = SdkCli::command();
    let known_long: Vec<String> = command
        .get_arguments()
        .flat_map(|a| {
            a.get_long_and_visible_aliases()
                .into_iter()
                .flatten()
                .chain(a.get_all_aliases().into_iter().flatten())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .chain(["help".to_string()])
        .collect();
    let known_short: Vec<char> = command
        .get_arguments()
        .filter_map(|a| a.get_short())
        .chain(['h'])
        .collect();

    let mut kept: Vec<OsString> = args.iter().take(1).cloned().collect();
    let mut warnings = Vec::new();
    let mut rest = args.iter().skip(1).peekable();
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            kept.push(arg.clone());
            kept.extend(rest.by_ref().cloned());
            break;
        }
        let unknown = if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            (!known_long.iter().any(|k| k == name))
                .then(|| (format!("--{name}"), long.contains('=')))
        } else if let Some(short) = text.strip_prefix('-').filter(|s| !s.is_empty()) {
            let first = short.chars().next().unwrap_or('-');
            (!known_short.contains(&first)).then(|| (format!("-{first}"), short.len() > 1))
        } else {
            None
        };
        match unknown {
            None => kept.push(arg.clone()),
            Some((name, value_attached)) => {
                let mut dropped = name.clone();
                if !value_attached
                    && let Some(value) = rest.next_if(|v| !v.to_string_lossy().starts_with('-'))
                {
                    dropped = format!("{name} {}", value.to_string_lossy());
                }
                warnings.push(format!(
                    "warning: ignoring unknown option {dropped} (Tascer does not know it)"
                ));
            }
        }
    }

    let matches = command.try_get_matches_from(kept)?;
    let mut cli = SdkCli::from_arg_matches(&matches)?;
    warnings.extend(cli.sdk.ignored().into_iter().map(|flag| {
        format!("warning: ignoring {flag}: Tascer does not support it (see docs/sdk-compat.md)")
    }));
    if cli.sdk.no_session_persistence {
        warnings.push(
            "warning: --no-session-persistence: no transcript is written, but the session is \
             still stored in Tascer's store (its ledger is the record)"
                .to_string(),
        );
    }
    if let Some(prompt) = cli.run.prompt.take() {
        warnings.push(format!(
            "warning: ignoring the argument {prompt:?}: prompts come on standard input"
        ));
    }
    normalize(&mut cli.run);
    Ok(Parsed { cli, warnings })
}

/// Maps the SDK's spellings onto `tascer run`'s: `--tools default` is the
/// default tool set. (The `auto` permission mode is Tascer's own: it passes
/// as it is.)
fn normalize(run: &mut RunArgs) {
    if run
        .tools
        .as_ref()
        .is_some_and(|tools| tools.len() == 1 && tools[0] == "default")
    {
        run.tools = None;
    }
}

/// True when the command line asks for the control protocol:
/// `--input-format stream-json` (or `--input-format=stream-json`).
pub fn wants_control_protocol(args: &[OsString]) -> bool {
    let mut iter = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(arg) = iter.next() {
        if arg == "--input-format=stream-json"
            || (arg == "--input-format" && iter.next().is_some_and(|v| v == "stream-json"))
        {
            return true;
        }
    }
    false
}

/// Checks what Claude Code checks: stream-json input needs stream-json
/// output.
pub fn check(cli: &SdkCli) -> Result<(), String> {
    if cli.sdk.input_format.as_deref() != Some("stream-json") {
        return Err("Error: --input-format must be stream-json here".to_string());
    }
    if cli.run.output_format != PrintFormat::StreamJson {
        return Err(
            "Error: --input-format=stream-json requires output-format=stream-json".to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("tascer")
            .chain(list.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn both_forms_and_the_python_sdks_argv_parse() {
        let parsed = parse(&args(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
            "--allowedTools",
            "Read,Bash(npm test:*)",
            "--max-turns=3",
            "--permission-prompt-tool",
            "stdio",
            "--resume=abc",
            "--setting-sources=",
            "--mcp-config",
            r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"}}}"#,
            "--input-format",
            "stream-json",
        ]))
        .unwrap();
        let cli = parsed.cli;
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert_eq!(cli.run.output_format, PrintFormat::StreamJson);
        assert_eq!(cli.run.system_prompt.as_deref(), Some(""));
        assert_eq!(cli.run.max_turns, Some(3));
        assert_eq!(cli.run.resume.as_deref(), Some("abc"));
        assert_eq!(cli.run.setting_sources, Some(vec![String::new()]));
        assert_eq!(cli.sdk.permission_prompt_tool.as_deref(), Some("stdio"));
        assert!(check(&cli).is_ok());
    }

    #[test]
    fn every_flag_the_typescript_sdk_builds_is_known() {
        let parsed = parse(&args(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--thinking=adaptive",
            "--thinking-display=summarized",
            "--effort=high",
            "--max-turns=3",
            "--max-budget-usd=1.5",
            "--task-budget=100",
            "--model=m",
            "--agent=reviewer",
            "--betas=context-1m-2025-08-07",
            r#"--json-schema={"type":"object"}"#,
            "--debug-file=/tmp/debug.log",
            "--permission-prompt-tool=stdio",
            "--permission-prompts=host",
            "--continue",
            "--channels=c",
            "--allowedTools=Read,Bash(ls:*)",
            "--disallowedTools=WebFetch",
            "--tools=default",
            "--mcp-config",
            r#"{"mcpServers":{}}"#,
            "--setting-sources=user,project",
            "--strict-mcp-config",
            "--permission-mode=plan",
            "--allow-dangerously-skip-permissions",
            "--fallback-model=f",
            "--include-hook-events",
            "--include-partial-messages",
            "--session-mirror",
            "--project-config-root=/tmp",
            "--add-dir=/tmp",
            "--await-initialize",
            "--plugin-dir-no-mcp=/tmp/p",
            "--fork-session",
            "--session-id=0d4c9ba1-0a3e-4d3c-9d47-6e1e8e0a7a01",
            "--no-session-persistence",
            "--initialize-fields=settings,disallowedTools",
            "--managed-settings-in-initialize",
            "--debug",
            "--max-thinking-tokens=1000",
            "--replay-user-messages",
        ]))
        .unwrap();
        assert!(
            parsed
                .warnings
                .iter()
                .all(|w| !w.contains("unknown option")),
            "{:?}",
            parsed.warnings
        );
        let cli = &parsed.cli;
        assert_eq!(cli.run.max_budget_usd, Some(1.5));
        assert_eq!(cli.run.permission_mode.as_deref(), Some("plan"));
        assert_eq!(cli.run.allowed_tools, ["Read,Bash(ls:*)"]);
        assert!(cli.run.fork_session && cli.run.continue_ && cli.sdk.include_hook_events);
        assert_eq!(
            cli.run.plugin_dir_no_mcp,
            [std::path::PathBuf::from("/tmp/p")]
        );
        assert_eq!(cli.sdk.betas.as_deref(), Some("context-1m-2025-08-07"));
        assert_eq!(
            cli.sdk.ignored(),
            [
                "--effort",
                "--thinking",
                "--thinking-display",
                "--max-thinking-tokens",
                "--task-budget",
                "--session-mirror",
                "--agent",
                "--debug",
                "--debug-file",
                "--permission-prompts",
                "--channels",
                "--managed-settings-in-initialize",
                "--project-config-root",
            ]
        );
        assert!(check(cli).is_ok());
        assert!(
            parsed
                .warnings
                .iter()
                .any(|w| w.contains("--no-session-persistence: no transcript is written")),
            "{:?}",
            parsed.warnings
        );
    }

    #[test]
    fn unknown_options_are_dropped_with_their_value_and_a_warning() {
        let parsed = parse(&args(&[
            "--output-format=stream-json",
            "--frobnicate",
            "7",
            "--shiny=yes",
            "--flag-only",
            "--model",
            "m",
            "-Z",
            "--input-format=stream-json",
            "--effort",
            "high",
        ]))
        .unwrap();
        assert_eq!(parsed.cli.run.model.as_deref(), Some("m"));
        assert_eq!(
            parsed.warnings,
            [
                "warning: ignoring unknown option --frobnicate 7 (Tascer does not know it)",
                "warning: ignoring unknown option --shiny (Tascer does not know it)",
                "warning: ignoring unknown option --flag-only (Tascer does not know it)",
                "warning: ignoring unknown option -Z (Tascer does not know it)",
                "warning: ignoring --effort: Tascer does not support it (see docs/sdk-compat.md)",
            ]
        );
    }

    #[test]
    fn tools_default_is_the_default_set_and_input_needs_output_stream_json() {
        let parsed = parse(&args(&["--tools=default", "--input-format", "stream-json"])).unwrap();
        assert_eq!(parsed.cli.run.tools, None);
        assert_eq!(
            check(&parsed.cli).unwrap_err(),
            "Error: --input-format=stream-json requires output-format=stream-json"
        );
        assert!(wants_control_protocol(&args(&[
            "--input-format",
            "stream-json"
        ])));
        assert!(wants_control_protocol(&args(&[
            "--input-format=stream-json"
        ])));
        assert!(!wants_control_protocol(&args(&["run", "hi"])));
    }
}
