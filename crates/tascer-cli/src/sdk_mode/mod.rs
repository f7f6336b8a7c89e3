//! Control-protocol mode: `tascer --output-format stream-json --verbose
//! --input-format stream-json [flags…]`, the way the official Agent SDKs
//! run their CLI (`cli_path` / `pathToClaudeCodeExecutable`). The protocol
//! itself is the `tascer-control` crate; this module is what is about the
//! command line: recognizing the invocation, reading the SDKs' flags
//! ([`argv`]: unknown ones dropped with a warning), turning them into the
//! session's options as `tascer run` does, and archiving the session once
//! it ended (`archive.auto`).

mod argv;

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::Context;
use tascer::SystemPrompt;
use tascer_control::{CLAUDE_CODE_VERSION, ControlSession};

use self::argv::SdkCli;

/// What the command line asks of this mode, if anything.
pub enum Invocation {
    /// `tascer -v` / `--version`, answered the way Claude Code answers.
    Version,
    /// The control protocol, with the whole command line.
    ControlProtocol(Vec<OsString>),
}

impl Invocation {
    /// Recognizes a version probe or an SDK's command line; `None` for
    /// every other command line.
    pub fn detect(args: Vec<OsString>) -> Option<Invocation> {
        if args.len() == 2 && matches!(args[1].to_str(), Some("-v" | "-V" | "--version")) {
            return Some(Invocation::Version);
        }
        argv::wants_control_protocol(&args).then_some(Invocation::ControlProtocol(args))
    }
}

/// Runs what [`Invocation::detect`] found.
pub fn main(invocation: Invocation) -> ExitCode {
    let args = match invocation {
        Invocation::Version => {
            println!(
                "{CLAUDE_CODE_VERSION} (Claude Code compatible; tascer {})",
                tascer::VERSION
            );
            return ExitCode::SUCCESS;
        }
        Invocation::ControlProtocol(args) => args,
    };
    let parsed = match argv::parse(&args) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.print();
            return ExitCode::FAILURE;
        }
    };
    for warning in &parsed.warnings {
        eprintln!("{warning}");
    }
    if let Err(message) = argv::check(&parsed.cli) {
        eprintln!("{message}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(parsed.cli));
    // Standard input is read on its own thread, which may still wait for a
    // line: do not wait for it.
    runtime.shutdown_background();
    code
}

/// Runs the control protocol over a session built from the command line.
async fn run(cli: SdkCli) -> ExitCode {
    let outcome = match session(&cli) {
        // The telemetry sends its last batch when dropped, once the
        // session ended.
        Ok((session, _telemetry)) => tascer_control::run(session)
            .await
            .map_err(anyhow::Error::from),
        Err(err) => Err(err),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The session the SDK's command line asks for: `tascer run`'s options
/// (plus `--system-prompt-file`), the SDK-only flags, and archival once it
/// ended; with the OpenTelemetry exporters its options configure, which
/// run as long as the returned value is kept (docs/telemetry.md).
fn session(cli: &SdkCli) -> anyhow::Result<(ControlSession, crate::telemetry::Running)> {
    let mut options = crate::run::options_from_args(&cli.run)?;
    // The SDKs run Claude Code, which reads its own settings files: so
    // does this mode, for the setting sources the SDK names.
    options.claude_settings = true;
    // ... and writes its transcripts where the SDKs' session helpers
    // (list_sessions, get_session_messages, rename/delete) look.
    options.transcript_dir = match cli.sdk.no_session_persistence {
        true => None,
        false => tascer::guard::settings::claude_config_dir(),
    };
    // The SDKs' `enable_file_checkpointing` / `enableFileCheckpointing`.
    options.file_checkpointing = env_flag("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING");
    crate::run::set_provider(&cli.run, &mut options)?;
    if let Some(betas) = &cli.sdk.betas {
        with_betas(&mut options, betas);
    }
    if let Some(file) = &cli.sdk.system_prompt_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--system-prompt-file: cannot read {}", file.display()))?;
        options.system_prompt = match &cli.run.append_system_prompt {
            Some(more) => SystemPrompt::Replace(format!("{text}\n\n{more}")),
            None => SystemPrompt::Replace(text),
        };
    }
    let telemetry = crate::telemetry::start(&options, "tascer");
    if let Some(observer) = telemetry.observer() {
        options.observer = Some(observer);
    }
    let session = ControlSession::new(options)
        .include_hook_events(cli.sdk.include_hook_events)
        .replay_user_messages(cli.sdk.replay_user_messages)
        .permission_prompt_tool(cli.sdk.permission_prompt_tool.clone())
        .on_session_end(|session_id| async move {
            crate::archive_cmds::after_session(&session_id).await;
        });
    let session = if cli.run.execute_contracts.is_some() {
        session.judge_results(ManagerJudge(tascer_contracts::ManagerWatch::new()))
    } else {
        session
    };
    Ok((session, telemetry))
}

/// `--betas a,b`: Anthropic's `anthropic-beta` header on every model
/// request. With another provider (or none configured yet: the session
/// reports that) it is a warning.
fn with_betas(options: &mut tascer::Options, betas: &str) {
    let provider = options
        .provider
        .take()
        .map_or_else(tascer::ProviderConfig::from_env, Ok);
    match provider {
        Ok(mut provider) => {
            if let Err(err) = provider.add_betas(&[betas.to_string()]) {
                eprintln!("warning: ignoring --betas: {err}");
            }
            options.provider = Some(provider);
        }
        Err(err) => eprintln!("warning: ignoring --betas: {err}"),
    }
}

/// A contracts manager's turns, judged as `tascer run` judges them: a
/// refused or failed `ExecuteContracts` makes the result an error.
struct ManagerJudge(tascer_contracts::ManagerWatch);

impl tascer_control::ResultJudge for ManagerJudge {
    fn observe(&mut self, message: &tascer::Message) {
        self.0.observe(message);
    }

    fn judge(&self, result: &mut tascer::ResultMessage) {
        self.0.judge(result);
    }
}

/// True when the environment variable is set to `1`, `true`, `yes` or `on`.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}
