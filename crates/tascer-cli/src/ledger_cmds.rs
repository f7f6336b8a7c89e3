//! `tascer keys generate`, `tascer verify`, `tascer report`, `tascer export`:
//! the ledger commands' arguments, output and exit codes. What they show is
//! gathered and worded by `tascer_ledger::audit` and
//! `tascer_ledger::report_text`, which `tascer mcp serve`'s
//! `session_verify` / `session_report` tools share.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value;
use tascer_ledger::audit::{attest_session, report_session, verify_sessions};
use tascer_ledger::{LedgerError, generate_keypair, key_id};

use crate::args::{ExportArgs, ReportArgs, ReportFormat, VerifyArgs};

/// `tascer keys generate [--force]`.
pub fn keys_generate(force: bool) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let (key, paths) = match generate_keypair(&home, force) {
        Ok(generated) => generated,
        Err(LedgerError::KeyExists(path)) => bail!(
            "{} already exists; pass --force to replace the key pair (the old private key is \
             lost, and sessions it signed then verify only with its public key via --key)",
            path.display()
        ),
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("cannot generate a key pair in {}", home.display())));
        }
    };
    outln!("private key  {} (mode 0600)", paths.private.display());
    outln!("public key   {}", paths.public.display());
    outln!("key id       {}", key_id(&key.verifying_key()));
    Ok(ExitCode::SUCCESS)
}

/// `tascer verify [SESSION | --all] [--key PUBKEY_PEM] [--json]`.
pub fn verify(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let session = if args.all {
        None
    } else {
        args.session.as_deref()
    };
    let outcome = verify_sessions(&home, session, args.key.as_deref())?;
    if args.json && !outcome.reports.is_empty() {
        let out = if args.all {
            Value::Array(outcome.reports)
        } else {
            outcome.reports.into_iter().next().unwrap_or(Value::Null)
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else if !args.json || outcome.lines.len() == 1 && outcome.reports.is_empty() {
        for line in &outcome.lines {
            outln!("{line}");
        }
    }
    Ok(if outcome.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Where `tascer report --ci` writes the proof report, under the working
/// directory.
const CI_REPORT: &str = ".ci/proof-report.json";

/// `tascer report SESSION [--format text|json]`, `tascer report --ci
/// [SESSION]`. Exits 1 when the session's ledger does not verify.
pub fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let session = match &args.session {
        Some(session) => session.clone(),
        None => latest_session_here()?,
    };
    let report = report_session(&home, &session)?;
    if args.ci {
        write_ci_report(&report.proof_report()?)?;
    } else {
        match args.format {
            ReportFormat::Json => {
                outln!("{}", serde_json::to_string_pretty(&report.to_json()?)?);
            }
            ReportFormat::Text => {
                for line in report.lines() {
                    outln!("{line}");
                }
            }
        }
    }
    Ok(if report.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The id of the latest session started in the working directory.
fn latest_session_here() -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = tascer::tascer_home();
    let store = tascer::SessionStore::open_in_home(&home)
        .with_context(|| format!("cannot open the session store in {}", home.display()))?;
    let canonical = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
    for dir in [&cwd, &canonical] {
        if let Some(info) = store.latest_for_cwd(&dir.display().to_string())? {
            return Ok(info.id);
        }
    }
    bail!(
        "no session was run in {} (name one: tascer report --ci SESSION)",
        cwd.display()
    )
}

/// Writes `report` to [`CI_REPORT`] and says where.
fn write_ci_report(report: &Value) -> anyhow::Result<()> {
    let path = PathBuf::from(CI_REPORT);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(
        &path,
        format!("{}\n", serde_json::to_string_pretty(report)?),
    )
    .with_context(|| format!("cannot write {}", path.display()))?;
    let verdict = if report["success"] == Value::Bool(true) {
        "verified"
    } else {
        "NOT verified"
    };
    outln!(
        "wrote {CI_REPORT}: session {} {verdict}, {} record(s)",
        report["session_id"].as_str().unwrap_or("?"),
        report["records"].as_array().map_or(0, Vec::len)
    );
    Ok(())
}

/// `tascer export SESSION --attestation [-o FILE]`.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let attestation = attest_session(&home, &args.session)?;
    let line = serde_json::to_string(&attestation.envelope)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.intoto.jsonl", args.session)));
    if output.as_os_str() == "-" {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").context("cannot write to standard output")?;
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::write(&output, format!("{line}\n"))
        .with_context(|| format!("cannot write {}", output.display()))?;
    outln!(
        "wrote {} ({} subject(s), signed by key {})",
        output.display(),
        attestation.subjects,
        attestation.key_id
    );
    Ok(ExitCode::SUCCESS)
}
