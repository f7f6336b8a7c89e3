//! `tascer keys generate`, `tascer verify`, `tascer report`, `tascer export`:
//! the ledger commands. [`verify_sessions`] and [`report_session`] return
//! their results instead of printing them, so `tascer mcp serve`'s
//! `session_verify` / `session_report` tools share them.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value;
use tascer_ledger::keys::{KeyPaths, load_home_signing_key, load_verifying_key};
use tascer_ledger::{
    GateOutcome, Ledger, LedgerError, ReportData, ReportReview, ReportTool, Subject, ToolStatus,
    VerifyReport, VerifyingKey, generate_keypair, key_id,
};

use crate::args::{ExportArgs, ReportArgs, ReportFormat, VerifyArgs};

/// Tools whose input names a file they change, and the input field holding it.
const FILE_CHANGING_TOOLS: [(&str, &str); 4] = [
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// Opens the ledger of the Tascer home without a signing key, refusing to
/// create a database where there is none.
pub(crate) fn open_ledger(home: &Path) -> anyhow::Result<Ledger> {
    open_home_ledger(home, None)
}

/// Opens the ledger of the Tascer home's store (`TASCER_STORE`, the home's
/// `store` setting, else `<home>/tascer.db`) with `key`, refusing to create
/// an SQLite database where there is none.
pub(crate) fn open_home_ledger(
    home: &Path,
    key: Option<tascer_ledger::SigningKey>,
) -> anyhow::Result<Ledger> {
    let config = tascer::store::StoreConfig::for_home(home)?;
    if !config.exists() {
        bail!(
            "no ledger database at {} (no session has been recorded in this Tascer home)",
            config.describe()
        );
    }
    Ledger::open_in_home(home, key)
        .with_context(|| format!("cannot open the ledger in {}", config.describe()))
}

/// Turns "no entries" into the one-line error users should see.
pub(crate) fn session_error(session: &str, err: LedgerError) -> anyhow::Error {
    match err {
        LedgerError::EmptySession(_) => {
            anyhow::anyhow!("unknown session {session}: it has no ledger entries")
        }
        other => anyhow::Error::new(other).context(format!("session {session}")),
    }
}

/// The key trusted for verification: `--key`, else the home's public key
/// (or the public half of its private key), else none.
pub(crate) fn trusted_key(
    home: &Path,
    explicit: Option<&Path>,
) -> anyhow::Result<Option<VerifyingKey>> {
    if let Some(path) = explicit {
        return load_verifying_key(path)
            .map(Some)
            .with_context(|| format!("cannot load the public key {}", path.display()));
    }
    let paths = KeyPaths::in_home(home);
    if paths.public.is_file() {
        return load_verifying_key(&paths.public)
            .map(Some)
            .with_context(|| format!("cannot load the public key {}", paths.public.display()));
    }
    Ok(load_home_signing_key(home)
        .with_context(|| format!("cannot load the key {}", paths.private.display()))?
        .map(|k| k.verifying_key()))
}

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

/// One line (plus indented warnings) describing a verification outcome.
fn verify_lines(report: &VerifyReport, signer: Option<&str>, key_given: bool) -> Vec<String> {
    let id = &report.session_id;
    let mut lines = Vec::new();
    if let Some(b) = &report.first_broken {
        lines.push(format!(
            "✗ {id}: entry {}: {} ({})",
            b.seq,
            b.reason.name(),
            b.detail
        ));
        return lines;
    }
    if !report.summary_mismatches.is_empty() {
        lines.push(format!(
            "✗ {id}: the chain is intact ({} entries) but the stored session summary disagrees \
             with it",
            report.entries_checked
        ));
        for m in &report.summary_mismatches {
            lines.push(format!("    {m}"));
        }
        return lines;
    }
    let n = report.entries_checked;
    let status = if report.signed {
        format!("signed by {}", signer.unwrap_or("(unknown key)"))
    } else if let Some(signer) = signer {
        let hint = if key_given {
            ""
        } else {
            ": pass --key PUBKEY_PEM"
        };
        format!("signed by {signer}, signature NOT checked (no trusted public key{hint})")
    } else {
        "UNSIGNED (no signing key was configured: a rewritten chain or a cut-off tail cannot be \
         detected)"
            .to_string()
    };
    lines.push(format!("✓ {id}: {n} entries, {status}"));
    for w in &report.warnings {
        lines.push(format!("    warning: {w}"));
    }
    lines
}

/// The outcome of verifying one or all sessions.
#[derive(Debug, Default)]
pub(crate) struct VerifyOutcome {
    /// True when every verified session is intact.
    pub ok: bool,
    /// One JSON report per session (or `{session_id, ok: false, error}`).
    pub reports: Vec<Value>,
    /// The lines `tascer verify` prints for people.
    pub lines: Vec<String>,
}

/// Verifies `session`, or every session with ledger entries when it is
/// `None`. An unknown or unreadable single session is an error; with all
/// sessions, such a session counts as failed and the others go on.
pub(crate) fn verify_sessions(
    home: &Path,
    session: Option<&str>,
    key_path: Option<&Path>,
) -> anyhow::Result<VerifyOutcome> {
    let ledger = open_ledger(home)?;
    let key = trusted_key(home, key_path)?;
    let all = session.is_none();
    let sessions = match session {
        Some(session) => vec![session.to_owned()],
        None => ledger
            .store()
            .sessions()
            .context("cannot list the ledger's sessions")?,
    };
    let mut out = VerifyOutcome {
        ok: true,
        ..VerifyOutcome::default()
    };
    if sessions.is_empty() {
        out.lines.push(format!(
            "no sessions with ledger entries in {}",
            home.display()
        ));
        return Ok(out);
    }
    for session in &sessions {
        let report = match ledger.verify(session, key.as_ref()) {
            Ok(r) => r,
            Err(err) if !all => return Err(session_error(session, err)),
            Err(err) => {
                out.ok = false;
                let err = session_error(session, err);
                out.reports.push(serde_json::json!({
                    "session_id": session, "ok": false, "error": format!("{err:#}"),
                }));
                out.lines
                    .push(format!("✗ {session}: cannot verify: {err:#}"));
                continue;
            }
        };
        out.ok &= report.ok;
        let mut value = serde_json::to_value(&report)?;
        let head = ledger.head(session).ok().flatten();
        let signer = head
            .and_then(|h| h.key_id)
            .or_else(|| key.as_ref().filter(|_| report.signed).map(key_id));
        out.lines
            .extend(verify_lines(&report, signer.as_deref(), key.is_some()));
        if !all {
            // Child sessions the session recorded (contracts run by a
            // manager): each must verify and hold the recorded head.
            let children = ledger
                .verify_children(session, key.as_ref())
                .map_err(|err| session_error(session, err))?;
            for node in &children {
                out.ok &= node.ok();
                let indent = "    ".repeat(node.depth);
                let link = format!(
                    "child of {} (entry {}, head {} at entry {})",
                    node.parent, node.link.parent_seq, node.link.head, node.link.seq
                );
                if let Some(err) = &node.error {
                    out.lines
                        .push(format!("{indent}✗ {}: {link}: {err}", node.link.session_id));
                } else if let Some(r) = &node.report {
                    let signer = ledger
                        .head(&node.link.session_id)
                        .ok()
                        .flatten()
                        .and_then(|h| h.key_id);
                    for line in verify_lines(r, signer.as_deref(), key.is_some()) {
                        out.lines.push(format!("{indent}{line}"));
                    }
                    out.lines.push(format!("{indent}    {link}"));
                }
            }
            if !children.is_empty() {
                value["children"] = serde_json::to_value(&children)?;
            }
        }
        out.reports.push(value);
    }
    Ok(out)
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

/// The status a report shows for a tool call: pending until it is closed.
fn tool_status(tool: &ReportTool) -> ToolStatus {
    if tool.closed_seq.is_none() {
        ToolStatus::Pending
    } else {
        tool.record.status
    }
}

/// `gate ✓ (12 ms), other ✗: message` or `none`.
fn gates_text(gates: &[GateOutcome]) -> String {
    if gates.is_empty() {
        return "none".into();
    }
    gates
        .iter()
        .map(|g| {
            let mark = if g.passed { "✓" } else { "✗" };
            let msg = if g.passed || g.message.is_empty() {
                String::new()
            } else {
                format!(": {}", g.message.lines().next().unwrap_or(""))
            };
            format!("{} {mark} ({} ms){msg}", g.gate, g.duration_ms)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The permission decision of a record, as a short word when there is one.
fn permission_text(permission: &Value) -> String {
    match permission {
        Value::Null => "none recorded".into(),
        Value::String(s) => s.clone(),
        Value::Object(map) => ["decision", "behavior"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .map_or_else(|| permission.to_string(), str::to_string),
        other => other.to_string(),
    }
}

/// `tool-approve deny (cached, 12 ms, model m): reason → tool-appeal …`.
fn reviews_text(reviews: &[&ReportReview]) -> String {
    reviews
        .iter()
        .map(|r| {
            let v = &r.verdict;
            let mut how = vec![v.outcome.replace('_', " ")];
            if v.cache_hit {
                how.push("cached".into());
            }
            how.push(format!("{} ms", v.duration_ms));
            if !v.model.is_empty() {
                how.push(format!("model {}", v.model));
            }
            let reason = v.reason.lines().next().unwrap_or_default();
            format!(
                "{} {} ({}): {reason}",
                v.reviewer,
                v.verdict,
                how.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

/// A report for people, as lines.
pub(crate) fn report_lines(
    data: &ReportData,
    verify: &anyhow::Result<VerifyReport>,
    key_given: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    macro_rules! push {
        () => {
            out.push(String::new())
        };
        ($($arg:tt)*) => {
            out.push(format!($($arg)*))
        };
    }
    push!("session {}", data.session_id);
    push!(
        "  model    {}",
        data.model.as_deref().unwrap_or("(unknown)")
    );
    push!(
        "  status   {}",
        data.status
            .as_deref()
            .unwrap_or("(no session_end entry: running, or it crashed)")
    );
    push!(
        "  started  {}   ended {}",
        data.started_at.as_deref().unwrap_or("-"),
        data.ended_at.as_deref().unwrap_or("-")
    );
    if let Some(cost) = data.cost_usd {
        push!("  cost     ${cost:.4}");
    }
    if let Some(usage) = &data.usage {
        push!("  usage    {usage}");
    }
    push!(
        "  entries  {}   permission decisions {}   gate results {}",
        data.entries,
        data.permission_decisions,
        data.gate_results
    );
    push!();
    let counts = data
        .tool_status_counts
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    if data.tools.is_empty() {
        push!("tool calls: none");
    } else {
        push!("tool calls: {} ({counts})", data.tools.len());
    }
    for tool in &data.tools {
        let r = &tool.record;
        let seqs = match (tool.opened_seq, tool.closed_seq) {
            (Some(o), Some(c)) => format!("entries {o}→{c}"),
            (Some(o), None) => format!("entry {o}, never closed"),
            (None, Some(c)) => format!("entry {c}"),
            (None, None) => String::new(),
        };
        push!(
            "  [{}] {} {} ({seqs})",
            tool_status(tool).as_str(),
            r.tool,
            r.tool_use_id
        );
        push!("      pre-gates   {}", gates_text(&r.pre_gates));
        push!("      post-gates  {}", gates_text(&r.post_gates));
        push!(
            "      permission  {}   hooks run {}",
            permission_text(&r.permission),
            r.hooks.len()
        );
        let reviews: Vec<&ReportReview> = data
            .reviews
            .iter()
            .filter(|v| v.verdict.tool_use_id.as_deref() == Some(r.tool_use_id.as_str()))
            .collect();
        if !reviews.is_empty() {
            push!("      reviewers   {}", reviews_text(&reviews));
        }
        let proof = match &r.proof_hash {
            Some(h) if tool.proof_valid => format!("{h} (valid)"),
            Some(h) => format!("{h} (DOES NOT MATCH the record)"),
            None => "none (not sealed)".into(),
        };
        push!("      proof       {proof}");
        push!("      entry hash  {}", tool.entry_hash);
    }
    let stops: Vec<&ReportReview> = data
        .reviews
        .iter()
        .filter(|v| v.verdict.tool_use_id.is_none())
        .collect();
    if !stops.is_empty() {
        push!();
        push!("stop reviews: {}", stops.len());
        for review in stops {
            push!("  entry {}: {}", review.seq, reviews_text(&[review]));
        }
    }
    push!();
    match &data.head {
        Some(h) => {
            let signed = match &h.key_id {
                Some(k) if h.signature.is_some() => format!("signed by {k}"),
                _ => "unsigned".into(),
            };
            push!("ledger head: entry {} {} ({signed})", h.seq, h.hash);
        }
        None => push!("ledger head: none stored"),
    }
    match verify {
        Ok(v) => {
            let signer = data.head.as_ref().and_then(|h| h.key_id.as_deref());
            for line in verify_lines(v, signer, key_given) {
                push!("verify: {line}");
            }
        }
        Err(err) => push!("verify: ✗ cannot verify: {err:#}"),
    }
    out
}

/// The report data of a session and, verified with the home's key, its
/// verification.
pub(crate) fn report_session(
    home: &Path,
    session: &str,
) -> anyhow::Result<(ReportData, anyhow::Result<VerifyReport>, bool)> {
    let ledger = open_ledger(home)?;
    let data = ledger
        .report(session)
        .map_err(|e| session_error(session, e))?;
    let key = trusted_key(home, None)?;
    let verify = ledger
        .verify(session, key.as_ref())
        .map_err(|e| session_error(session, e));
    Ok((data, verify, key.is_some()))
}

/// `tascer report SESSION [--format text|json]`.
pub fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    match args.format {
        ReportFormat::Json => {
            let ledger = open_ledger(&home)?;
            let data = ledger
                .report(&args.session)
                .map_err(|e| session_error(&args.session, e))?;
            outln!("{}", serde_json::to_string_pretty(&data)?);
        }
        ReportFormat::Text => {
            let (data, verify, key_given) = report_session(&home, &args.session)?;
            for line in report_lines(&data, &verify, key_given) {
                outln!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Subjects for an attestation: the files the session's Write/Edit/
/// MultiEdit/NotebookEdit calls changed that still exist, with the SHA-256
/// of their current content. Relative paths are resolved against the
/// record's `context.cwd`; names are relative to it when the file is under it.
pub(crate) fn changed_file_subjects(data: &ReportData) -> anyhow::Result<Vec<Subject>> {
    let mut subjects: BTreeMap<String, Subject> = BTreeMap::new();
    for tool in &data.tools {
        let r = &tool.record;
        if tool_status(tool) == ToolStatus::Blocked {
            continue;
        }
        let Some((_, field)) = FILE_CHANGING_TOOLS.iter().find(|(t, _)| *t == r.tool) else {
            continue;
        };
        let Some(file) = r.input.get(*field).and_then(Value::as_str) else {
            continue;
        };
        let cwd = r
            .context
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from);
        let path = match &cwd {
            Some(cwd) if Path::new(file).is_relative() => cwd.join(file),
            _ => PathBuf::from(file),
        };
        if !path.is_file() {
            continue;
        }
        let name = cwd
            .as_deref()
            .and_then(|c| path.strip_prefix(c).ok())
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let subject = Subject::from_file(name.clone(), &path)
            .with_context(|| format!("cannot hash {}", path.display()))?;
        subjects.insert(name, subject);
    }
    Ok(subjects.into_values().collect())
}

/// `tascer export SESSION --attestation [-o FILE]`.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let paths = KeyPaths::in_home(&home);
    let key = load_home_signing_key(&home)
        .with_context(|| format!("cannot load the signing key {}", paths.private.display()))?
        .with_context(|| {
            format!(
                "no signing key at {}: run `tascer keys generate` first",
                paths.private.display()
            )
        })?;
    let keyid = key_id(&key.verifying_key());
    let ledger = open_home_ledger(&home, Some(key))?;
    let data = ledger
        .report(&args.session)
        .map_err(|e| session_error(&args.session, e))?;
    let subjects = changed_file_subjects(&data)?;
    let n_subjects = subjects.len().max(1);
    let envelope = ledger
        .export_attestation(&args.session, subjects)
        .map_err(|e| session_error(&args.session, e))?;
    let line = serde_json::to_string(&envelope)?;
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
        "wrote {} ({n_subjects} subject(s), signed by key {keyid})",
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}
