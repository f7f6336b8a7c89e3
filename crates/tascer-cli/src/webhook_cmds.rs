//! `tascer webhook flush|status`: deliver the home's webhook outbox, or
//! show what waits in it and what was dropped (docs/reviewers.md).

use std::path::Path;
use std::process::ExitCode;

use crate::args::{WebhookArgs, WebhookCommand};

/// Runs `tascer webhook …`.
pub async fn run(args: WebhookArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    match args.command {
        WebhookCommand::Flush { quiet, json } => {
            let report = tascer::webhook::flush(&home)
                .await
                .map_err(anyhow::Error::msg)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else if !quiet {
                if report.ran {
                    println!(
                        "delivered {}, retried {}, dropped {}, still waiting {}",
                        report.delivered, report.retried, report.dropped, report.pending
                    );
                } else {
                    println!(
                        "another flusher is running; {} event(s) waiting",
                        report.pending
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        WebhookCommand::Status { json } => {
            let status = tascer::webhook::status(&home).map_err(anyhow::Error::msg)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "waiting: {}   flusher: {}",
                status.pending,
                if status.flusher_running {
                    "running"
                } else {
                    "not running"
                }
            );
            if status.drops.is_empty() {
                println!("dropped: none");
            }
            for d in &status.drops {
                let error = d
                    .last_error
                    .as_deref()
                    .map(|e| format!(", last error: {e}"))
                    .unwrap_or_default();
                println!(
                    "dropped: {} {} event(s) for {} ({}; last one {}{error})",
                    d.count,
                    if d.reason == tascer::webhook::DROP_FULL {
                        "queued"
                    } else {
                        "undeliverable"
                    },
                    d.url,
                    d.reason,
                    d.last_event
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// After a run: a background flusher delivers what the session's own
/// delivery did not get to. Problems are warnings (the events stay queued).
pub fn flush_in_background(home: &Path) {
    let outcome = std::env::current_exe()
        .map_err(|e| format!("cannot find the tascer binary: {e}"))
        .and_then(|exe| tascer::webhook::flush_in_background(home, &exe));
    if let Err(err) = outcome {
        eprintln!(
            "warning: webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
        );
    }
}
