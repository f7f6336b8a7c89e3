//! `tascer contracts run|status`: markdown contracts run as governed sessions.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use parking_lot::Mutex;
use tascer_contracts::{
    MergeOutcome, Progress, RunOptions, RunStatus, RunSummary, completed_branches, contract_files,
    merge_branches, read_statuses, repo_root, run_all,
};

use crate::args::{
    ContractsArgs, ContractsCommand, ContractsInitArgs, ContractsMergeArgs, ContractsRunArgs,
    ContractsStatusArgs,
};
use crate::contractor::{RoleFlags, auto_archiver, contractor_base, describe_roles};
use crate::contracts_queue_cmds;
use crate::table::table;

/// Runs `tascer contracts …`.
pub async fn run(args: ContractsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ContractsCommand::Run(a) => run_contracts(a).await,
        ContractsCommand::Status(a) if a.queue.queue.is_some() => {
            contracts_queue_cmds::status(&a.queue, a.json).await
        }
        ContractsCommand::Status(a) => status(a),
        ContractsCommand::Init(a) => init(a),
        ContractsCommand::Merge(a) => merge(a).await,
        ContractsCommand::Enqueue(a) => contracts_queue_cmds::enqueue(a).await,
        ContractsCommand::Worker(a) => contracts_queue_cmds::worker(a).await,
    }
}

async fn run_contracts(args: ContractsRunArgs) -> anyhow::Result<ExitCode> {
    let flags = RoleFlags {
        contractor_provider: args.contractor_provider.clone(),
        contractor_model: args.model.clone(),
        ..RoleFlags::default()
    };
    if args.parallel == 0 {
        anyhow::bail!("--parallel must be at least 1");
    }
    if args.dry_run {
        return dry_run(&args, &flags);
    }
    let mut opts = RunOptions::new(&args.dir)
        .parallel(args.parallel)
        .archiver(auto_archiver());
    opts.completed_dir = args.completed_dir.clone();
    let dir = opts.contracts_dir()?;
    if !dir.is_dir() {
        anyhow::bail!(
            "no contracts directory {}: `tascer contracts init {}` creates it with a template \
             (see docs/contracts.md)",
            dir.display(),
            args.dir.display()
        );
    }
    opts.base = contractor_base(&flags)?;
    let display = Display::new();
    let shown = display.clone();
    opts = opts.progress(Arc::new(move |p| shown.update(p)));
    let summary = run_all(&opts).await?;
    display.clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary_table(&summary));
    }
    let bad = summary.count(RunStatus::Failed) + summary.count(RunStatus::Malformed);
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Progress bars: one spinner per running contract (hidden when standard
/// error is not a terminal).
#[derive(Clone)]
pub(crate) struct Display {
    multi: MultiProgress,
    bars: Arc<Mutex<HashMap<String, ProgressBar>>>,
}

impl Display {
    pub(crate) fn new() -> Self {
        Display {
            multi: MultiProgress::new(),
            bars: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn bar(&self, name: &str) -> ProgressBar {
        let mut bars = self.bars.lock();
        bars.entry(name.to_string())
            .or_insert_with(|| {
                let bar = self.multi.add(ProgressBar::new_spinner());
                if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix:.bold} {msg}") {
                    bar.set_style(style);
                }
                bar.set_prefix(name.to_string());
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                bar
            })
            .clone()
    }

    pub(crate) fn update(&self, progress: Progress) {
        match progress {
            Progress::Started { name, title } => self.bar(&name).set_message(title),
            Progress::Turn { name, turn, tool } => {
                let tool = tool.map(|t| format!(" · {t}")).unwrap_or_default();
                self.bar(&name).set_message(format!("turn {turn}{tool}"));
            }
            Progress::Cost {
                name,
                cost_usd,
                unpriced_models,
            } => {
                self.bar(&name)
                    .set_message(tascer::format_cost(cost_usd, &unpriced_models));
            }
            Progress::Finished(report) => {
                let bar = self.bar(&report.name);
                bar.finish_with_message(format!("{} — {}", report.status.as_str(), report.why));
            }
            _ => {}
        }
    }

    pub(crate) fn clear(&self) {
        let _ = self.multi.clear();
    }
}

/// The final table: contract, status, turns, cost, duration, session, why.
pub(crate) fn summary_table(summary: &RunSummary) -> String {
    let mut rows = vec![[
        "CONTRACT".to_string(),
        "STATUS".to_string(),
        "TURNS".to_string(),
        "COST".to_string(),
        "TIME".to_string(),
        "SESSION".to_string(),
        "WHY".to_string(),
    ]];
    for c in &summary.contracts {
        let (turns, cost, time, session) = match &c.session {
            Some(s) => (
                s.turns.to_string(),
                tascer::format_cost(s.cost_usd, &s.unpriced_models),
                format!("{:.1}s", s.duration_ms as f64 / 1000.0),
                s.session_id.clone(),
            ),
            None => Default::default(),
        };
        rows.push([
            c.name.clone(),
            c.status.as_str().to_string(),
            turns,
            cost,
            time,
            session,
            c.why.clone(),
        ]);
    }
    let mut out = table(&rows);
    out.push_str(&format!(
        "{} completed, {} failed, {} malformed, {} skipped\n",
        summary.count(RunStatus::Completed),
        summary.count(RunStatus::Failed),
        summary.count(RunStatus::Malformed),
        summary.count(RunStatus::Skipped)
    ));
    out
}

/// `tascer contracts run --dry-run`: which provider, model and credential
/// each role would use, and the pending contracts with their models.
fn dry_run(args: &ContractsRunArgs, flags: &RoleFlags) -> anyhow::Result<ExitCode> {
    outln!("roles (the manager is `tascer run --execute-contracts`'s session):");
    let (lines, ok) = describe_roles(flags);
    for line in lines {
        outln!("  {line}");
    }
    let code = if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    let mut opts = RunOptions::new(&args.dir);
    opts.completed_dir = args.completed_dir.clone();
    let dir = opts.contracts_dir()?;
    if !dir.is_dir() {
        outln!("no contracts directory {}", dir.display());
        return Ok(code);
    }
    let contractor = crate::contractor::contractor_provider(flags).ok();
    outln!("pending contracts in {}:", dir.display());
    for path in contract_files(&dir)? {
        let contract = match tascer_contracts::parse(&path) {
            Ok(c) if c.status == tascer_contracts::Status::Pending => c,
            Ok(_) => continue,
            Err(err) => {
                outln!("  malformed: {err}");
                continue;
            }
        };
        let model = match (&contract.constraints.model, &contractor) {
            (Some(m), Some(p)) => p.config.resolve_model(m),
            (None, Some(p)) => p.model.clone(),
            (_, None) => "(no provider)".to_string(),
        };
        outln!("  {:<30} model {model}", contract.name);
    }
    Ok(code)
}

/// `tascer contracts init`: the directories, their `.gitkeep`, a template.
fn init(args: ContractsInitArgs) -> anyhow::Result<ExitCode> {
    let mut opts = RunOptions::new(&args.dir);
    opts.completed_dir = args.completed_dir.clone();
    let dir = opts.contracts_dir()?;
    let created = tascer_contracts::init(&dir, &opts.completed_dir()?)?;
    for path in &created.paths {
        outln!("created {}", path.display());
    }
    if created.paths.is_empty() {
        outln!("nothing to do: {} is set up", dir.display());
    }
    outln!(
        "copy {} to {}/01-<name>.md and fill it in",
        dir.join(tascer_contracts::TEMPLATE_NAME).display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn status(args: ContractsStatusArgs) -> anyhow::Result<ExitCode> {
    let mut opts = RunOptions::new(&args.dir);
    opts.completed_dir = args.completed_dir.clone();
    let dir = opts.contracts_dir()?;
    let completed = opts.completed_dir()?;
    let rows = read_statuses(&[&dir, &completed])?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        outln!(
            "no contracts in {} or {}",
            dir.display(),
            completed.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut table_rows = vec![[
        "CONTRACT".to_string(),
        "STATUS".to_string(),
        "SESSION".to_string(),
        "TITLE / OUTCOME".to_string(),
    ]];
    for r in &rows {
        let detail = match (&r.error, &r.outcome) {
            (Some(e), _) => e.clone(),
            (None, Some(o)) => format!("{} — {o}", r.title),
            (None, None) => r.title.clone(),
        };
        table_rows.push([
            r.name.clone(),
            r.status.clone(),
            r.session.clone().unwrap_or_default(),
            detail,
        ]);
    }
    outln!("{}", table(&table_rows).trim_end_matches('\n'));
    Ok(ExitCode::SUCCESS)
}

/// `tascer contracts merge`: merges completed contracts' branches, in
/// file-name order; conflicts are reported and aborted, never forced.
async fn merge(args: ContractsMergeArgs) -> anyhow::Result<ExitCode> {
    let mut opts = RunOptions::new(&args.dir);
    opts.completed_dir = args.completed_dir.clone();
    let cwd = opts.working_dir()?;
    let repo = repo_root(&cwd).await?;
    let branches = completed_branches(&opts.completed_dir()?)?;
    let results = merge_branches(&repo, &branches).await?;
    let ok = results
        .iter()
        .all(|(_, o)| matches!(o, MergeOutcome::Merged { .. } | MergeOutcome::UpToDate));
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|(b, o)| serde_json::json!({"branch": b, "outcome": o}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if results.is_empty() {
        println!("no completed contract branches to merge");
    } else {
        let mut rows = vec![["BRANCH".to_string(), "RESULT".to_string()]];
        for (branch, outcome) in &results {
            let text = match outcome {
                MergeOutcome::Merged { head } => format!("merged ({head})"),
                MergeOutcome::UpToDate => "already merged".to_string(),
                MergeOutcome::Conflict { files } => {
                    format!(
                        "CONFLICT in {} (merge aborted; resolve by hand: git merge {branch})",
                        files.join(", ")
                    )
                }
                MergeOutcome::Refused { message } => format!("not merged: {message}"),
                other => format!("{other:?}"),
            };
            rows.push([branch.clone(), text]);
        }
        print!("{}", table(&rows));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
