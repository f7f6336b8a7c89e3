//! `tascer serve`: starts `tascer_serve`'s server on the home's store,
//! prints the page's URL (with its token) as the first line of standard
//! output, and serves until Ctrl-C or SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use tascer_contracts::RunOptions;
use tascer_serve::{ContractSources, ServeOptions, Server, TOKEN_ENV, token_from};

use crate::args::ViewerArgs;

/// The contract queue the contracts page shows: `--queue` (or
/// `TASCER_QUEUE`) with its name.
#[cfg(feature = "postgres")]
fn queue_to_show(args: &ViewerArgs) -> Option<(String, String)> {
    let url = args.queue.queue.clone()?;
    Some((url, args.queue.queue_name.clone()))
}

/// Without PostgreSQL support no queue can be shown: a configured one is
/// named in a warning, not silently dropped.
#[cfg(not(feature = "postgres"))]
fn queue_to_show(args: &ViewerArgs) -> Option<(String, String)> {
    if args.queue.queue.is_some() {
        eprintln!(
            "warning: the contracts page shows no queue: {}",
            crate::contracts_queue_cmds::NO_POSTGRES
        );
    }
    None
}

/// `tascer serve [--port P] [--bind ADDR] [--allow-remote] [--open]`.
pub async fn serve(args: ViewerArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let mut run = RunOptions::new(&args.contracts_dir);
    run.completed_dir = args.completed_dir.clone();
    let contracts = ContractSources {
        dir: run.contracts_dir()?,
        completed_dir: run.completed_dir()?,
        queue: queue_to_show(&args),
    };
    let server = Server::bind(ServeOptions {
        home: home.clone(),
        addr: SocketAddr::new(args.bind, args.port),
        allow_remote: args.allow_remote,
        token: token_from(std::env::var(TOKEN_ENV).ok())?,
        contracts,
    })
    .await?;
    if let Some(warning) = server.warning() {
        eprintln!("warning: {warning}");
    }
    let url = server.url();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    eprintln!(
        "tascer serve: the sessions of {} on {} (read-only); open the URL above; Ctrl-C stops",
        home.display(),
        server.local_addr()
    );
    if args.open {
        open_browser(&url);
    }
    server.run(shutdown()).await?;
    Ok(ExitCode::SUCCESS)
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Opens `url` in the default browser (`xdg-open`, `open` on macOS); a
/// failure is a warning: the URL is printed anyway.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(err) = started {
        eprintln!("warning: --open: cannot start {opener}: {err}; open the URL yourself");
    }
}
