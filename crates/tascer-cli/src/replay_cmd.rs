//! `tascer replay SESSION`: a recorded session re-run offline, and where
//! it diverges from the record (docs/replay.md). The work is
//! `tascer::replay`'s; this parses and renders.

use std::process::ExitCode;

use serde_json::json;
use tascer::replay::{ReplayOptions, ReplayReport, TreeSource, replay as run_replay};

use crate::args::ReplayArgs;

/// Exit code when the replay diverges from the record.
const DIVERGED_EXIT: u8 = 1;
/// Exit code on an error (an unknown session, a tree that cannot be rebuilt).
const ERROR_EXIT: u8 = 2;

/// `tascer replay SESSION [--until N] [--fork] [--model M] [--tree DIR]
/// [--keep] [--json]`: exit 0 when the replay matches the record, 1 when
/// it diverges, 2 on an error.
pub async fn replay(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let report = match options(args) {
        Ok(opts) => run_replay(opts).await.map_err(anyhow::Error::from),
        Err(err) => Err(err),
    };
    let report = match report {
        Ok(report) => report,
        Err(err) => {
            eprintln!("error: {err:#}");
            return Ok(ExitCode::from(ERROR_EXIT));
        }
    };
    if args.json {
        print_json(&report)?;
    } else {
        print_text(&report)?;
    }
    Ok(match report.divergences.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(DIVERGED_EXIT),
    })
}

/// The library's options from the flags.
fn options(args: &ReplayArgs) -> anyhow::Result<ReplayOptions> {
    let fork = match (args.fork, &args.provider) {
        (false, _) => None,
        (true, Some(name)) => Some(crate::provider::named_provider(name, None)?),
        (true, None) => Some(match crate::provider::provider_from_env(None)? {
            Some(config) => config,
            None => tascer::ProviderConfig::from_env()?,
        }),
    };
    Ok(ReplayOptions {
        session_id: args.session.clone(),
        until: args.until.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        fork,
        model: args.model.clone(),
        tree: args.tree.clone(),
        settings: args.settings.clone(),
        keep: args.keep,
        home: None,
    })
}

/// Where the scratch tree came from, in words.
fn tree_words(report: &ReplayReport) -> String {
    let kept = match report.kept {
        true => "kept",
        false => "removed",
    };
    let from = match &report.tree {
        TreeSource::Commit { repo, commit } => {
            format!("a git worktree of {} at {commit}", repo.display())
        }
        TreeSource::Copy { dir } => format!("a copy of {}", dir.display()),
    };
    format!("{from} ({}, {kept})", report.scratch_dir.display())
}

fn print_text(report: &ReplayReport) -> anyhow::Result<()> {
    outln!(
        "replayed session {} as session {} in {}",
        report.source_session,
        report.replay_session,
        tree_words(report)
    );
    for note in &report.notes {
        outln!("note: {note}");
    }
    if report.forked {
        outln!(
            "forked after tool call {}: the live model answered {} requests and made {} tool calls",
            report.until.unwrap_or_default(),
            report.live_requests,
            report.live_calls
        );
    }
    let compared = format!(
        "{} of {} recorded tool calls compared",
        report.compared_calls, report.recorded_calls
    );
    match report.first_divergence() {
        None => outln!("{compared}: 0 divergences"),
        Some(first) => {
            outln!("first divergence: {}", first.line());
            outln!("{compared}: {} divergences", report.divergences.len());
            for divergence in &report.divergences {
                outln!("  {}", divergence.line());
            }
        }
    }
    Ok(())
}

fn print_json(report: &ReplayReport) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(report)?;
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "first_divergence".into(),
            json!(report.first_divergence().map(|d| d.line())),
        );
        map.insert("matches".into(), json!(report.divergences.is_empty()));
    }
    outln!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}
