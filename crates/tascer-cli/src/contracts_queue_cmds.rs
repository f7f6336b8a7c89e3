//! `tascer contracts enqueue|worker` and `tascer contracts status --queue`:
//! contracts run by workers on many hosts from a queue in PostgreSQL
//! (`tascer-fleet`; docs/fleet.md).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tascer_contracts::RunOptions;
use tascer_fleet::{
    EnqueueOptions, Enqueued, JobOutcome, JobView, Queue, WorkerEvent, WorkerOptions, enqueue_dir,
    run_worker,
};
use tokio_util::sync::CancellationToken;

use crate::archive_cmds::{ContractArchiver, archive_settings};
use crate::args::{EnqueueArgs, QueueArgs, WorkerArgs};
use crate::contractor::{RoleFlags, contractor_base};
use crate::table::table;

impl QueueArgs {
    fn url(&self) -> anyhow::Result<&str> {
        self.queue.as_deref().context(
            "no queue: pass --queue postgres://USER@HOST:PORT/DATABASE (or set TASCER_QUEUE)",
        )
    }

    async fn open(&self, connections: usize) -> anyhow::Result<Queue> {
        Ok(Queue::open(self.url()?, &self.queue_name, connections).await?)
    }
}

/// `tascer contracts enqueue`.
pub async fn enqueue(args: EnqueueArgs) -> anyhow::Result<ExitCode> {
    if args.max_attempts == 0 {
        bail!("--max-attempts must be at least 1");
    }
    let queue = args.queue.open(2).await?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let opts = EnqueueOptions {
        dir: cwd.join(&args.dir),
        repo: args.repo.clone(),
        base: args.base.clone(),
        max_attempts: args.max_attempts,
    };
    let report = enqueue_dir(&queue, &opts).await?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let added = report
        .jobs
        .iter()
        .filter(|j| matches!(j.result, Enqueued::Added { .. }))
        .count();
    for job in &report.jobs {
        match &job.result {
            Enqueued::Added { id } => println!("job {id}: {} (queued)", job.contract_path),
            Enqueued::Exists { id, status } => println!(
                "job {id}: {} (already in the queue, {status}: not added again)",
                job.contract_path
            ),
        }
    }
    for (path, status) in &report.skipped {
        println!("skipped {path}: its status is {status}, not pending");
    }
    println!(
        "{added} contract(s) enqueued in queue {} at {} (repository {}, base {})",
        report.queue,
        queue.server(),
        report.repo,
        report.base_commit
    );
    Ok(ExitCode::SUCCESS)
}

/// `tascer contracts worker`.
pub async fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if !(args.lease_secs.is_finite() && args.lease_secs >= 0.3) {
        bail!("--lease-secs must be at least 0.3");
    }
    if !tascer::signing_from_env() {
        bail!(
            "workers sign every session and its archive; unset {} (it is off here)",
            tascer::SIGNING_ENV
        );
    }
    let home = tascer::tascer_home();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let archive_to = match &args.archive_to {
        Some(to) => to.clone(),
        None => archive_settings(&home, &cwd)?.to.context(
            "workers archive every session: pass --archive-to s3://BUCKET/PREFIX or a directory, \
             or set archive.to in the settings (see docs/archive.md)",
        )?,
    };
    tascer_archive::Location::parse(&archive_to)
        .with_context(|| format!("cannot use the archive location {archive_to}"))?;
    let (_, created) =
        tascer::ledger::keys::load_or_create_home_signing_key(&home).with_context(|| {
            format!(
                "cannot load or create the signing key in {}",
                home.display()
            )
        })?;
    if let Some(paths) = created {
        eprintln!(
            "tascer: created a signing key for this home ({}); its public key is {}",
            paths.private.display(),
            paths.public.display()
        );
    }
    // Claims, heartbeats and results are short statements: a few pooled
    // connections serve many concurrent jobs.
    let queue = args.queue.open((args.concurrency + 2).min(16)).await?;
    let (work_dir, _temp) = match &args.work_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let temp = tempfile::Builder::new()
                .prefix("tascer-worker-")
                .tempdir()
                .context("cannot create the worker's directory")?;
            (temp.path().to_path_buf(), Some(temp))
        }
    };
    let mut base = contractor_base(&RoleFlags {
        contractor_provider: args.contractor_provider.clone(),
        contractor_model: args.model.clone(),
        ..RoleFlags::default()
    })?;
    base.home = Some(home.clone());
    let run = RunOptions::new("contracts")
        .base(base)
        .archiver(Arc::new(ContractArchiver {
            home: home.clone(),
            to: Some(archive_to.clone()),
        }));
    let json = args.json;
    let mut opts = WorkerOptions::new(&work_dir, run);
    opts.concurrency = args.concurrency;
    opts.until_empty = args.until_empty;
    opts.push = args.push.clone();
    opts.lease = Duration::from_secs_f64(args.lease_secs);
    opts.poll = Duration::from_millis(args.poll_ms.max(10));
    opts.events = Some(Arc::new(move |event| show(event, json)));
    eprintln!(
        "tascer worker (pid {}): queue {} at {}, {} at once, archiving to {archive_to}",
        std::process::id(),
        queue.name(),
        queue.server(),
        args.concurrency
    );
    let shutdown = CancellationToken::new();
    stop_on_signals(shutdown.clone());
    let summary = run_worker(&queue, &opts, shutdown).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    let bad = summary.count(JobOutcome::Failed)
        + summary.count(JobOutcome::Unrecorded)
        + summary.gave_up.len();
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Ctrl-C or SIGTERM: claim nothing more and finish the running contracts;
/// a second one: exit now (their leases expire and other workers take
/// them over).
fn stop_on_signals(shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut signals = 0;
        loop {
            wait_for_signal().await;
            signals += 1;
            if signals == 1 {
                eprintln!(
                    "tascer worker: stopping — no new contracts; the running ones finish (signal again to stop now)"
                );
                shutdown.cancel();
            } else {
                eprintln!(
                    "tascer worker: stopping now; other workers take over the running contracts when their leases expire"
                );
                std::process::exit(130);
            }
        }
    });
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

/// One line per event: finished contracts on standard output (unless
/// `--json`), the rest on standard error.
fn show(event: WorkerEvent, json: bool) {
    match event {
        WorkerEvent::Claimed {
            id,
            name,
            attempt,
            previous,
        } => {
            let retry = previous
                .map(|p| format!(" (retry: {p})"))
                .unwrap_or_default();
            eprintln!("claimed job {id} ({name}), attempt {attempt}{retry}");
        }
        WorkerEvent::Finished(r) if !json => {
            let mut line = format!(
                "job {} ({}) attempt {}: {} — {}",
                r.id,
                r.name,
                r.attempt,
                r.outcome.as_str(),
                r.why
            );
            if let (Some(branch), Some(commit)) = (&r.branch, &r.commit) {
                line.push_str(&format!("; branch {branch} at {commit}"));
            }
            if let Some(url) = &r.archive_url {
                line.push_str(&format!("; archive {url}"));
            }
            println!("{line}");
        }
        WorkerEvent::Finished(_) => {}
        WorkerEvent::GaveUp(g) => {
            eprintln!("job {} ({}): failed — {}", g.id, g.name, g.why)
        }
        WorkerEvent::Problem(p) => eprintln!("warning: {p}"),
        _ => {}
    }
}

/// `tascer contracts status --queue …`: every job with its status and attempts.
pub async fn status(queue: &QueueArgs, json: bool) -> anyhow::Result<ExitCode> {
    let queue = queue.open(1).await?;
    let jobs = queue.jobs().await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&jobs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if jobs.is_empty() {
        println!(
            "no contracts in queue {} at {}",
            queue.name(),
            queue.server()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![[
        "JOB".to_string(),
        "CONTRACT".to_string(),
        "STATUS".to_string(),
        "ATTEMPTS".to_string(),
        "BRANCH / WORKER".to_string(),
        "WHY".to_string(),
    ]];
    for j in &jobs {
        rows.push(status_row(j));
    }
    print!("{}", table(&rows));
    Ok(ExitCode::SUCCESS)
}

fn status_row(j: &JobView) -> [String; 6] {
    let place = match (&j.lease, &j.branch) {
        (Some(l), _) => format!("pid {} on {}", l.pid, l.host),
        (None, Some(b)) => b.clone(),
        (None, None) => String::new(),
    };
    [
        j.id.to_string(),
        j.contract_path.clone(),
        j.status.to_string(),
        format!("{}/{}", j.attempts, j.max_attempts),
        place,
        j.why.clone().unwrap_or_default(),
    ]
}
