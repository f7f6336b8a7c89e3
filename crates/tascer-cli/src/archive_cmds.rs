//! `tascer archive …`: archive a session to S3 or a directory, list,
//! verify and fetch archives, prune archived evidence; and the automatic
//! archival after `tascer run` (`archive.auto`). The work is done by
//! `tascer-archive`; this module reads flags and settings and prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;
use tascer::guard::settings::{LoadSettings as _, SettingsLoader};
use tascer_archive::{
    ArchiveReport, ArchiveSettings, Location, archive_session, list_archives, prune_evidence,
    verify_archive,
};
use tascer_ledger::Ledger;
use tascer_ledger::audit::{changed_file_subjects, open_ledger, session_error, trusted_key};

use crate::args::{ArchiveArgs, ArchiveCommand};

/// The `archive` settings: Tascer's user (`$TASCER_HOME/settings.json`),
/// project and local settings files of `cwd`, keys of higher layers
/// overriding lower ones.
pub(crate) fn archive_settings(home: &Path, cwd: &Path) -> anyhow::Result<ArchiveSettings> {
    let loaded = SettingsLoader::for_home(cwd, home)
        .load()
        .context("cannot read the settings")?;
    let merged = loaded.archive()?;
    ArchiveSettings::from_value(Some(&Value::Object(merged)))
        .map_err(|e| anyhow::anyhow!("invalid settings: {e}"))
}

fn destination(to: Option<&str>, settings: &ArchiveSettings) -> anyhow::Result<Location> {
    let url = to.or(settings.to.as_deref()).context(
        "no destination: pass --to s3://BUCKET/PREFIX or --to DIR, or set archive.to in the settings",
    )?;
    Location::parse(url).with_context(|| format!("cannot use the archive location {url}"))
}

/// `tascer archive …`.
pub async fn run(args: ArchiveArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    match args.command {
        None => {
            let session = args.session.clone().unwrap_or_default();
            archive(&home, &cwd, &session, &args).await
        }
        Some(ArchiveCommand::List { location }) => {
            let settings = archive_settings(&home, &cwd)?;
            let loc = destination(location.as_deref(), &settings)?;
            let archives = list_archives(&loc)
                .await
                .with_context(|| format!("cannot list {}", loc.url()))?;
            if archives.is_empty() {
                eprintln!("no archives under {}", loc.url());
            }
            for url in archives {
                println!("{url}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(ArchiveCommand::Verify {
            url,
            key,
            restore,
            json,
        }) => verify(&home, &url, key.as_deref(), restore.as_deref(), json).await,
        Some(ArchiveCommand::Fetch { url, dir, key }) => {
            verify(&home, &url, key.as_deref(), Some(&dir), false).await
        }
        Some(ArchiveCommand::Prune {
            older_than_days,
            dry_run,
        }) => prune(&home, &cwd, older_than_days, dry_run).await,
    }
}

async fn archive(
    home: &Path,
    cwd: &Path,
    session: &str,
    args: &ArchiveArgs,
) -> anyhow::Result<ExitCode> {
    let ledger = open_ledger(home)?;
    let workdir = if args.no_workdir {
        None
    } else if let Some(w) = &args.workdir {
        Some(w.clone())
    } else {
        match tascer_archive::recorded_workdir(&ledger, session)
            .map_err(|e| anyhow::anyhow!("session {session}: {e}"))?
        {
            Some(w) if w.is_dir() => Some(w),
            Some(w) => {
                eprintln!(
                    "warning: the session's working directory {} is gone: archiving without it",
                    w.display()
                );
                None
            }
            None => None,
        }
    };
    let settings = archive_settings(home, workdir.as_deref().unwrap_or(cwd))?;
    let dest = destination(args.to.as_deref(), &settings)?;
    let mut policy = settings.workdir.clone();
    policy.exclude.extend(args.exclude.iter().cloned());
    if let Some(n) = args.max_file_bytes {
        policy.max_file_bytes = n;
    }
    if let Some(n) = args.max_total_bytes {
        policy.max_total_bytes = n;
    }
    let subjects = subjects(&ledger, session)?;
    drop(ledger);
    let (archived, _) =
        archive_session(home, session, &dest, workdir.as_deref(), &policy, subjects)
            .await
            .with_context(|| format!("cannot archive session {session}"))?;
    let m = &archived.manifest;
    eprintln!(
        "archived session {session}: {} objects and a signed manifest, {} working-directory files ({} left out), \
         ledger head {} signed by key {}; verified after upload",
        m.objects.len(),
        m.workdir_files.len(),
        m.skipped.len(),
        m.ledger_head.seq,
        m.signer.key_id
    );
    println!("{}", archived.url);
    Ok(ExitCode::SUCCESS)
}

/// The attestation subjects `tascer export` would use.
fn subjects(ledger: &Ledger, session: &str) -> anyhow::Result<Vec<tascer_ledger::Subject>> {
    let data = ledger
        .report(session)
        .map_err(|e| session_error(session, e))?;
    Ok(changed_file_subjects(&data)?)
}

fn report_lines(report: &ArchiveReport) -> Vec<String> {
    let mut lines = Vec::new();
    let session = report.session_id.as_deref().unwrap_or("(unknown session)");
    let signer = report.signer_key_id.as_deref().unwrap_or("(unknown key)");
    if report.ok {
        let ledger = report.ledger.as_ref();
        let head = match ledger {
            Some(l) if l.signed => format!("{} entries, head signed", l.entries_checked),
            Some(l) => format!("{} entries, head NOT signed", l.entries_checked),
            None => "no ledger".into(),
        };
        lines.push(format!(
            "✓ {}: session {session}: {} objects and {} working-directory files match the \
             manifest signed by {signer}; ledger: {head}",
            report.url, report.objects_checked, report.workdir_files_checked
        ));
        if !report.key_pinned {
            lines.push(
                "    warning: no trusted key was given: the archive is intact, but who signed it \
                 is only as sure as the key id above (pass --key PUBKEY_PEM)"
                    .into(),
            );
        }
        for w in ledger.map(|l| l.warnings.as_slice()).unwrap_or_default() {
            lines.push(format!("    warning: {w}"));
        }
    } else {
        lines.push(format!(
            "✗ {}: session {session}: the archive does not verify",
            report.url
        ));
        for p in &report.problems {
            lines.push(format!("    ✗ {}: {}", p.what, p.detail));
        }
    }
    if let Some(dir) = &report.restored_to {
        lines.push(format!("restored into {}", dir.display()));
    }
    lines
}

async fn verify(
    home: &Path,
    url: &str,
    key: Option<&Path>,
    restore: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let trusted = trusted_key(home, key)?;
    let loc =
        Location::parse(url).with_context(|| format!("cannot use the archive location {url}"))?;
    let report = verify_archive(&loc, trusted.as_ref(), restore)
        .await
        .with_context(|| format!("cannot verify {url}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for line in report_lines(&report) {
            println!("{line}");
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn prune(
    home: &Path,
    cwd: &Path,
    days: Option<u64>,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let settings = archive_settings(home, cwd)?;
    let days = days.or(settings.retention_days).context(
        "no age given: pass --older-than-days N or set archive.retentionDays in the settings",
    )?;
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("AWS_"))
        .collect();
    let outcomes = prune_evidence(home, days, dry_run, &env)
        .await
        .context("cannot prune evidence")?;
    let verb = if dry_run { "would delete" } else { "deleted" };
    for o in &outcomes {
        if o.pruned {
            println!(
                "{verb} the evidence files of {}: {}",
                o.session_id, o.reason
            );
        } else {
            println!("kept {}: {}", o.session_id, o.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Automatic archival after a session (`archive.auto` with `archive.to`):
/// archives `session` and says so on standard error. A failure is reported
/// there too, with how to retry; it does not change the run's outcome (the
/// session stays intact in the local store).
pub(crate) async fn after_session(session: &str) {
    let home = tascer::tascer_home();
    match archive_if_due(&home, session, None, None).await {
        Ok(Some(url)) => eprintln!("archived session {session} to {url}"),
        Ok(None) => {}
        Err(err) => eprintln!(
            "warning: automatic archival of session {session} failed: {err:#}; the session is \
             intact locally, retry with `tascer archive {session}`"
        ),
    }
}

/// Archives `session` of `home` when archival is due: always to `to` when
/// given, else to the settings' `archive.to` when `archive.auto` is on
/// (`Ok(None)` otherwise). The working directory is `workdir`, else the
/// one the session recorded (when it still exists); the settings are read
/// for that directory.
pub(crate) async fn archive_if_due(
    home: &Path,
    session: &str,
    workdir: Option<&Path>,
    to: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let ledger = open_ledger(home);
    let workdir = match (workdir, &ledger) {
        (Some(w), _) => Some(w.to_path_buf()),
        (None, Ok(ledger)) => tascer_archive::recorded_workdir(ledger, session)
            .ok()
            .flatten(),
        (None, Err(_)) => None,
    }
    .filter(|w| w.is_dir());
    let cwd = workdir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let settings = archive_settings(home, &cwd)?;
    if to.is_none() && !settings.auto {
        return Ok(None);
    }
    let ledger = ledger?;
    let dest = destination(to, &settings)?;
    let subjects = subjects(&ledger, session)?;
    drop(ledger);
    let (archived, _) = archive_session(
        home,
        session,
        &dest,
        workdir.as_deref(),
        &settings.workdir,
        subjects,
    )
    .await?;
    Ok(Some(archived.url))
}

/// The archiver of contract sessions (`tascer contracts run`, the
/// `ExecuteContracts` tool, queue workers): [`archive_if_due`] for each
/// contract's session, so contracts archive exactly as `tascer run` does.
#[derive(Debug, Clone)]
pub(crate) struct ContractArchiver {
    /// The Tascer home whose sessions are archived.
    pub home: PathBuf,
    /// Always archive, to this destination (a worker's `--archive-to`);
    /// `None`: only when `archive.auto` is on.
    pub to: Option<String>,
}

impl tascer_contracts::SessionArchiver for ContractArchiver {
    fn archive<'a>(
        &'a self,
        session_id: &'a str,
        workdir: &'a Path,
    ) -> futures::future::BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            archive_if_due(&self.home, session_id, Some(workdir), self.to.as_deref())
                .await
                .map_err(|e| format!("{e:#}"))
        })
    }
}
