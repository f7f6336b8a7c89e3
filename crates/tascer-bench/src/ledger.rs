//! The ledger: append latency and throughput into the SQLite store, verify
//! throughput of a 20 000-entry session with `Ledger::verify` (what
//! `tascer verify` calls), and context capture on a 10 000-file git
//! repository per freshness mode.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tascer::ledger::context::{ContextCapturer, Freshness};
use tascer::ledger::{
    EntryKind, GateOutcome, Ledger, SigningKey, ToolRecord, ToolStatus, sha256_ref,
};

use crate::stats::{Stats, Table, fmt_ms, ms_since};

/// Tool calls in the verified session (four entries each: model response,
/// opened, permission decision, record).
const VERIFY_CALLS: usize = 5_000;
/// Entries appended without a signing key (a quarter as many calls).
const UNSIGNED_ENTRIES: usize = 2_000;
/// Verifications of the verified session.
const VERIFY_RUNS: usize = 5;

use crate::repo::REPO_FILES;
/// Captures per freshness mode.
const CAPTURES: usize = 100;

/// A timestamp for the record (seconds.millis since the epoch; the loop
/// writes RFC 3339 of the same length class).
fn now() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

/// A tool record shaped like the loop's (see `crates/tascer/src/proof.rs`):
/// context, permission decision, one hook run, gate outcomes.
fn record(i: usize) -> ToolRecord {
    let mut r = ToolRecord::open(
        format!("toolu_{i:08}"),
        "Bash",
        json!({"command": format!("cargo test -p crate{} --lib", i % 17), "timeout": 120_000}),
        now(),
    );
    r.context = json!({
        "git": {"head": "3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a", "branch": "main",
                "dirty": ["src/lib.rs"], "untracked": [], "diff_digest": "sha256:00"},
        "env": {"PATH": "/usr/local/bin:/usr/bin:/bin"},
    });
    r.permission = json!({
        "behavior": "allow", "decided_by": "rule", "rule": "Bash(cargo test:*)",
        "reason": "allowed by rule Bash(cargo test:*) from .claude/settings.json",
    });
    r.hooks = vec![json!({
        "event": "PreToolUse", "hook": "audit", "kind": "in_process",
        "outcome": "success", "duration_ms": 0,
    })];
    r.pre_gates = vec![GateOutcome {
        gate: "command_allowed".into(),
        passed: true,
        message: "no denied command".into(),
        duration_ms: 0,
    }];
    r
}

/// Appends `calls` tool calls the way the loop does: the opened record
/// (with a permission decision and a model response before it, all in one
/// transaction), then the closing record with its output as evidence in
/// one transaction. Returns the per-transaction times (ms) of the opening
/// batch and of the close, and the entries written.
pub(crate) fn append_calls(
    ledger: &Ledger,
    session: &str,
    calls: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>, usize)> {
    let mut opens = Vec::with_capacity(calls);
    let mut closes = Vec::with_capacity(calls);
    let mut entries = 0;
    for i in 0..calls {
        let mut r = record(i);
        let response = format!("[{{\"type\":\"tool_use\",\"id\":\"toolu_{i:06}\"}}]");
        let t = Instant::now();
        let batch = vec![
            (
                EntryKind::ModelResponse,
                json!({"content_digest": sha256_ref(response.as_bytes()), "model": "bench",
                       "evidence": [sha256_ref(response.as_bytes())]}),
            ),
            (EntryKind::ToolCallOpened, r.to_payload()?),
            (EntryKind::PermissionDecision, r.permission.clone()),
        ];
        entries += batch.len();
        ledger.append_many(session, batch, &[response.into_bytes()])?;
        opens.push(ms_since(t));

        let output = format!(
            "running 12 tests\n{}test result: ok. call {i}\n",
            "test x ... ok\n".repeat(12)
        );
        let t = Instant::now();
        let digest = sha256_ref(output.as_bytes());
        r.output_digest = Some(digest.clone());
        r.evidence.push(digest);
        r.output = Some(Value::String(output.clone()));
        r.finished_at = Some(now());
        r.status = ToolStatus::Validated;
        r.seal()?;
        ledger.append_with_evidence(
            session,
            EntryKind::ToolRecord,
            r.to_payload()?,
            &[output.into_bytes()],
        )?;
        closes.push(ms_since(t));
        entries += 1;
    }
    Ok((opens, closes, entries))
}

/// `n` standalone `put_evidence` calls of distinct ~200 B outputs.
fn evidence_puts(ledger: &Ledger, session: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let output = format!("standalone evidence {i}: {}", "x".repeat(180));
        let t = Instant::now();
        ledger.put_evidence(session, output.as_bytes())?;
        times.push(ms_since(t));
    }
    Ok(times)
}

/// The same row written with a bare INSERT in its own transaction through
/// the ledger's connection: what SQLite alone costs.
fn bare_inserts(ledger: &Ledger, n: usize) -> anyhow::Result<Vec<f64>> {
    let payload = record(1).to_payload()?.to_string();
    let times =
        tascer::store::baseline::bare_insert_times(ledger.store().backend().as_ref(), &payload, n)
            .context("cannot time the baseline inserts")?;
    Ok(times.iter().map(|t| t.as_secs_f64() * 1000.0).collect())
}

/// Times turning a tool record into its payload, canonical JSON and hash:
/// the CPU part of an append.
fn canonical_hash_times(n: usize) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let r = record(i);
        let t = Instant::now();
        let payload = r.to_payload()?;
        let text = tascer::ledger::jcs::canonical_string(&payload)?;
        std::hint::black_box(tascer::ledger::sha256_hex(text.as_bytes()));
        out.push(ms_since(t));
    }
    Ok(out)
}

/// `CAPTURES` captures after a warm one; times (ms) and full recomputations.
fn captures(root: &Path, freshness: Freshness) -> anyhow::Result<(Vec<f64>, u64)> {
    let mut c = ContextCapturer::new(root, ["PATH"]).with_freshness(freshness);
    if c.capture().git.is_none() {
        bail!("context capture found no git state in {}", root.display());
    }
    let before = c.stats().full_refreshes;
    let mut times = Vec::with_capacity(CAPTURES);
    for _ in 0..CAPTURES {
        let t = Instant::now();
        std::hint::black_box(c.capture());
        times.push(ms_since(t));
    }
    Ok((times, c.stats().full_refreshes - before))
}

fn git_status_runs(root: &Path, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let o = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .context("cannot run git status")?;
        out.push(ms_since(t));
        if !o.status.success() {
            bail!("git status failed");
        }
    }
    Ok(out)
}

/// `count` items in `ms` milliseconds as a rate per second.
fn per_second(count: usize, ms: f64) -> String {
    let rate = count as f64 / (ms / 1000.0);
    if rate >= 1e6 {
        format!("{:.2} M", rate / 1e6)
    } else if rate >= 1e4 {
        format!("{:.0} k", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}

/// Runs the ledger benchmark and prints its tables.
pub async fn run() -> anyhow::Result<()> {
    tokio::task::spawn_blocking(run_blocking)
        .await
        .context("ledger bench panicked")?
}

fn run_blocking() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temp dir")?;
    append_and_verify(tmp.path())?;
    context_capture(&tmp.path().join("repo"))
}

/// The session `append_and_verify` verifies.
const VERIFIED_SESSION: &str = "bench-verify";

/// Appends to a signed and an unsigned ledger under `dir`, verifies the
/// signed session, and prints the table.
fn append_and_verify(dir: &Path) -> anyhow::Result<()> {
    let key = SigningKey::from_bytes(&[7u8; 32]);
    let verifying = key.verifying_key();
    let signed = Ledger::open(
        dir.join("signed/tascer.db"),
        dir.join("signed/evidence"),
        Some(key),
    )?;
    let unsigned = Ledger::open(
        dir.join("unsigned/tascer.db"),
        dir.join("unsigned/evidence"),
        None,
    )?;
    let appends = measure_appends(&signed, &unsigned)?;
    let verify = measure_verify(&signed, &verifying, appends.entries)?;
    appends.print(&verify);
    Ok(())
}

/// Append timings, in milliseconds per transaction.
struct AppendTimes {
    signed_opens: Vec<f64>,
    signed_closes: Vec<f64>,
    /// Entries of the signed session.
    entries: usize,
    unsigned_opens: Vec<f64>,
    unsigned_closes: Vec<f64>,
    unsigned_entries: usize,
    puts: Vec<f64>,
    bare: Vec<f64>,
    hashing: Vec<f64>,
}

/// Append: the signed session that is verified below, an unsigned one,
/// standalone evidence, and the baselines.
fn measure_appends(signed: &Ledger, unsigned: &Ledger) -> anyhow::Result<AppendTimes> {
    let (signed_opens, signed_closes, entries) =
        append_calls(signed, VERIFIED_SESSION, VERIFY_CALLS)?;
    let (unsigned_opens, unsigned_closes, unsigned_entries) =
        append_calls(unsigned, "bench-unsigned", UNSIGNED_ENTRIES / 4)?;
    let puts = evidence_puts(unsigned, "bench-evidence", UNSIGNED_ENTRIES / 4)?;
    let bare = bare_inserts(unsigned, UNSIGNED_ENTRIES)?;
    let hashing = canonical_hash_times(UNSIGNED_ENTRIES)?;
    Ok(AppendTimes {
        signed_opens,
        signed_closes,
        entries,
        unsigned_opens,
        unsigned_closes,
        unsigned_entries,
        puts,
        bare,
        hashing,
    })
}

/// Verify, as `tascer verify` does: a warm-up, then `VERIFY_RUNS` timed
/// runs, each checked.
fn measure_verify(
    signed: &Ledger,
    verifying: &tascer::ledger::VerifyingKey,
    entries: usize,
) -> anyhow::Result<Stats> {
    let mut verify_times = Vec::with_capacity(VERIFY_RUNS);
    for _ in 0..=VERIFY_RUNS {
        let t = Instant::now();
        let report = signed.verify(VERIFIED_SESSION, Some(verifying))?;
        verify_times.push(ms_since(t));
        if !report.ok || !report.signed || report.entries_checked != entries as u64 {
            bail!("verification failed: {report:?}");
        }
    }
    verify_times.remove(0); // warm-up
    Ok(Stats::of(verify_times))
}

impl AppendTimes {
    fn print(self, verify: &Stats) {
        let entries = self.entries;
        let signed_sum: f64 = self.signed_opens.iter().chain(&self.signed_closes).sum();
        let unsigned_sum: f64 = self
            .unsigned_opens
            .iter()
            .chain(&self.unsigned_closes)
            .sum();
        let so = Stats::of(self.signed_opens);
        let sc = Stats::of(self.signed_closes);
        let uo = Stats::of(self.unsigned_opens);
        let uc = Stats::of(self.unsigned_closes);
        let ba = Stats::of(self.bare);
        let ev = Stats::of(self.puts);
        let mut table = Table::new(
            format!(
                "Ledger append and verify (SQLite WAL, synchronous=NORMAL; tool records of ~1 KB canonical JSON; {entries}-entry signed session)"
            ),
            "ratio / bare INSERT",
        );
        table.row(
            "before a tool runs: model response + tool_call_opened + permission decision, one transaction, signed head",
            &so,
            Some(so.median / ba.median),
        );
        table.row(
            "after it: tool_record with its output as evidence, one transaction, signed head",
            &sc,
            Some(sc.median / ba.median),
        );
        table.row(
            "… the same, unsigned: before",
            &uo,
            Some(uo.median / ba.median),
        );
        table.row(
            "… the same, unsigned: after",
            &uc,
            Some(uc.median / ba.median),
        );
        table.row(
            "baseline: bare INSERT of the same payload, own transaction, same connection",
            &ba,
            Some(1.0),
        );
        let hs = Stats::of(self.hashing);
        table.row(
            "part of append: tool record → payload, RFC 8785 canonical JSON + SHA-256",
            &hs,
            Some(hs.median / ba.median),
        );
        table.row(
            "put_evidence alone (≈200 B, a blob in the database, own transaction)",
            &ev,
            Some(ev.median / ba.median),
        );
        table.raw_row(
            format!(
                "verify {entries}-entry signed session (`Ledger::verify`, as `tascer verify`; {} evidence blobs)",
                entries / 2
            ),
            fmt_ms(verify.median),
            fmt_ms(verify.p99),
            "",
        );
        table.note(format!(
            "Throughput (the loop's two transactions per call, back to back): append signed {} entries/s, \
             unsigned {} entries/s; verify {} entries/s.",
            per_second(entries, signed_sum),
            per_second(self.unsigned_entries, unsigned_sum),
            per_second(entries, verify.median),
        ));
        table.print();
    }
}

/// Context capture on a fresh `REPO_FILES`-file repository at `repo`: the
/// first capture, each freshness mode, and `git status`; prints the table.
fn context_capture(repo: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(repo)?;
    let t = Instant::now();
    crate::repo::make_repo(repo, REPO_FILES)?;
    eprintln!(
        "ledger: {REPO_FILES}-file git repository set up in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    // Leave the racy window behind so the steady state is measured.
    std::thread::sleep(Duration::from_millis(100));
    let mut first = ContextCapturer::new(repo, ["PATH"]);
    let t = Instant::now();
    std::hint::black_box(first.capture());
    let first_ms = ms_since(t);
    let (fp, fp_refreshes) = captures(repo, Freshness::Fingerprint)?;
    let (always, always_refreshes) = captures(repo, Freshness::Always)?;
    let status = Stats::of(git_status_runs(repo, 20)?);
    let fp = Stats::of(fp);
    let always = Stats::of(always);
    let mut table = Table::new(
        format!(
            "Context capture ({REPO_FILES}-file git repository, 3 modified + 1 untracked, {CAPTURES} captures per mode)"
        ),
        "ratio / `git status`",
    );
    table.raw_row(
        "first capture (discover + open + full status)",
        fmt_ms(first_ms),
        "",
        crate::stats::fmt_ratio(first_ms / status.median),
    );
    table.row(
        format!("capture, `Fingerprint` mode (default; {fp_refreshes} full recomputations)"),
        &fp,
        Some(fp.median / status.median),
    );
    table.row(
        format!("capture, `Always` mode ({always_refreshes} full recomputations)"),
        &always,
        Some(always.median / status.median),
    );
    table.row(
        "baseline: `git status --porcelain` (subprocess, 20 runs)",
        &status,
        Some(1.0),
    );
    table.print();
    Ok(())
}
