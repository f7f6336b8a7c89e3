//! `tascer-mock`: serves a scenario file as a mock Anthropic/OpenAI model
//! server until interrupted.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;

use tascer_mock::{MockServer, Scenario};

const USAGE: &str = "\
Usage: tascer-mock --scenario FILE [--port N] [--host ADDR]

Serves a scripted mock model (Anthropic POST /v1/messages and OpenAI
POST /v1/chat/completions) until Ctrl-C or SIGTERM.

Options:
  --scenario FILE   scenario JSON file (required)
  --port N          port to listen on (default 0: any free port)
  --host ADDR       address to bind (default 127.0.0.1)
  -h, --help        print this help
";

struct Args {
    scenario: String,
    port: u16,
    host: IpAddr,
}

/// Parses the command line; `Ok(None)` means help was printed.
fn parse_args() -> Result<Option<Args>, String> {
    let mut scenario = None;
    let mut port = 0u16;
    let mut host = IpAddr::from([127, 0, 0, 1]);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--scenario" => scenario = Some(value("--scenario")?),
            "--port" => {
                let v = value("--port")?;
                port = v.parse().map_err(|_| format!("invalid --port `{v}`"))?;
            }
            "--host" => {
                let v = value("--host")?;
                host = v.parse().map_err(|_| format!("invalid --host `{v}`"))?;
            }
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    let scenario = scenario.ok_or("--scenario FILE is required")?;
    Ok(Some(Args {
        scenario,
        port,
        host,
    }))
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tascer-mock: error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let scenario = match Scenario::from_file(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tascer-mock: error: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match MockServer::start_on(SocketAddr::new(args.host, args.port), scenario).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "tascer-mock: error: cannot listen on {}:{}: {e}",
                args.host, args.port
            );
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "tascer-mock listening on {}", server.url());
    let _ = out.flush();
    drop(out);
    wait_for_signal().await;
    server.shutdown();
    ExitCode::SUCCESS
}
