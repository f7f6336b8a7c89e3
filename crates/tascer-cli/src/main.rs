//! The `tascer` command-line tool.

/// `println!` for commands that only print (listings, reports, exports):
/// a write error is returned, so a reader that went away (`tascer report …
/// | head`) ends the command quietly with exit 141 (see [`closed_pipe`])
/// instead of a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod archive_cmds;
mod args;
mod asker;
mod audit_cmds;
mod contractor;
mod contracts_cmds;
#[cfg(feature = "postgres")]
mod contracts_queue_cmds;
#[cfg(not(feature = "postgres"))]
#[path = "contracts_queue_unbuilt.rs"]
mod contracts_queue_cmds;
mod demo;
mod demo_contracts;
mod elicit_prompt;
mod hook;
mod install;
mod ledger_cmds;
mod logging;
mod mcp_cmds;
mod mcp_login;
mod mcp_manage;
mod policy_cmds;
mod provider;
mod render;
mod replay_cmd;
mod run;
mod sandbox_cmd;
mod sdk_mode;
mod serve_cmd;
mod sessions;
mod sessions_admin;
mod table;
mod telemetry;
mod webhook_cmds;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{AuditCommand, Cli, Command, KeysCommand, PolicyCommand, SessionsCommand};

fn main() -> ExitCode {
    if sandbox_cmd::is_invocation() {
        // Before anything else, and single-threaded: the helper the Bash
        // tool starts for every command enters the sandbox and execs it.
        return sandbox_cmd::main();
    }
    if hook::is_invocation() {
        // A new process per Claude Code tool call: its start-up skips
        // parsing the whole command line.
        logging::init_tracing();
        return hook::main();
    }
    // The official Agent SDKs run `tascer` as their CLI (`cli_path`): a
    // version probe, or the control protocol on stdin/stdout.
    if let Some(invocation) = sdk_mode::Invocation::detect(std::env::args_os().collect()) {
        logging::init_tracing();
        return sdk_mode::main(invocation);
    }
    let cli = Cli::parse();
    logging::init_tracing();
    if let Some(word) = cli.command_like_prompt() {
        eprintln!(
            "error: `{word}` is not a tascer command (see `tascer --help`), and a one-word \
             prompt that reads like one is not sent to the model unasked.\n\
             To send it as a prompt: tascer run {word}   (or: tascer -p {word})"
        );
        return ExitCode::from(2);
    }
    if matches!(cli.command, Some(Command::Hook)) {
        return hook::main();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Some(Command::Run(args)) => run::run(*args).await,
            Some(Command::Demo(args)) if args.topic == Some(args::DemoTopic::Contracts) => {
                demo_contracts::demo_contracts(args).await
            }
            Some(Command::Demo(args)) => demo::demo(args).await,
            Some(Command::Sessions {
                command: SessionsCommand::List { limit, json },
            }) => sessions::list(limit, json),
            Some(Command::Sessions {
                command: SessionsCommand::Show { id, json },
            }) => sessions::show(&id, json),
            Some(Command::Sessions { command }) => sessions_admin::admin(command),
            Some(Command::Keys {
                command: KeysCommand::Generate { force },
            }) => ledger_cmds::keys_generate(force),
            Some(Command::Verify(args)) => ledger_cmds::verify(&args),
            Some(Command::Report(args)) => ledger_cmds::report(&args),
            Some(Command::Export(args)) => ledger_cmds::export(&args),
            Some(Command::Audit {
                command: AuditCommand::Query(args),
            }) => audit_cmds::query(&args),
            Some(Command::Policy {
                command: PolicyCommand::Check(args),
            }) => policy_cmds::check(&args),
            Some(Command::Replay(args)) => replay_cmd::replay(&args).await,
            Some(Command::Mcp(args)) => mcp_cmds::run(args).await,
            // Answered above, before the multi-threaded runtime starts.
            Some(Command::Hook) => Ok(ExitCode::FAILURE),
            Some(Command::Install(args)) => install::install(args.user),
            Some(Command::Uninstall(args)) => install::uninstall(args.user),
            Some(Command::Contracts(args)) => contracts_cmds::run(args).await,
            Some(Command::Archive(args)) => archive_cmds::run(args).await,
            Some(Command::Webhook(args)) => webhook_cmds::run(args).await,
            Some(Command::Serve(args)) => serve_cmd::serve(args).await,
            // Answered above, before the multi-threaded runtime starts.
            Some(Command::Sandbox(_)) => Ok(ExitCode::FAILURE),
            None => run::run(cli.run).await,
        }
    });
    match outcome {
        Ok(code) => code,
        // As a Unix tool killed by SIGPIPE reports it (128 + 13), so a
        // pipeline with `pipefail` still sees that not everything was read.
        Err(err) if closed_pipe(&err) => ExitCode::from(141),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// True when `err` is a write to a standard output whose reader went away:
/// nobody is left to tell, so the command ends quietly (exit 141).
fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
