//! What a run reports: how each contract ended ([`ContractReport`],
//! [`RunStatus`]), what its session produced ([`SessionOutcome`]), the
//! run's [`RunSummary`], and the Result section written into a contract.
//! Shared by the runner, the session and the progress events; it imports
//! none of them.

use std::path::PathBuf;

use tascer_core::format_cost;

use crate::parse::Status;

/// What one contract's session produced.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SessionOutcome {
    /// True when the contract is done within its constraints.
    pub completed: bool,
    /// Why it completed or failed, in one sentence.
    pub why: String,
    /// The agent's final text.
    pub summary: Option<String>,
    /// Session id (empty when the session could not start).
    pub session_id: String,
    /// Model calls made.
    pub turns: u32,
    /// Cost, USD (a lower bound when `unpriced_models` is not empty).
    pub cost_usd: f64,
    /// Models the session called whose cost is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Wall time, ms.
    pub duration_ms: u64,
    /// Files the session's edit tools changed, relative to its working
    /// directory when inside it.
    pub files_changed: Vec<String>,
    /// Hash of the session's last ledger entry.
    pub ledger_head: Option<String>,
    /// Number of ledger entries under that head.
    pub ledger_seq: Option<u64>,
    /// Key id of the key that signed the head (`None`: unsigned).
    pub signing_key: Option<String>,
    /// Tool calls that were refused, as `Tool(detail)`.
    pub refused: Vec<String>,
    /// With `--parallel`: the contract's branch.
    pub branch: Option<String>,
    /// With `--parallel`: the commit Tascer made on it (`None`: no changes).
    pub commit: Option<String>,
    /// Where the session was archived (see [`SessionArchiver`](crate::SessionArchiver)).
    pub archive: Option<String>,
    /// Why archiving the session failed, when it did.
    pub archive_error: Option<String>,
}

/// How a contract ended in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// Done; moved to the completed directory.
    Completed,
    /// Not done; left in place with status `failed` and why.
    Failed,
    /// Not a valid contract; left untouched.
    Malformed,
    /// Not run now (another executor holds it).
    Skipped,
}

impl RunStatus {
    /// The name shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Malformed => "malformed",
            RunStatus::Skipped => "skipped",
        }
    }
}

/// One contract's line in the run's summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ContractReport {
    /// Contract name (file name without `.md`).
    pub name: String,
    /// Title.
    pub title: String,
    /// Where the file is now.
    pub path: PathBuf,
    /// How it ended.
    pub status: RunStatus,
    /// Why.
    pub why: String,
    /// The session's outcome, when a session ran.
    pub session: Option<SessionOutcome>,
}

/// What a run did, contract by contract, in file-name order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RunSummary {
    /// One report per contract looked at.
    pub contracts: Vec<ContractReport>,
}

impl RunSummary {
    /// How many contracts ended with `status`.
    pub fn count(&self, status: RunStatus) -> usize {
        self.contracts.iter().filter(|c| c.status == status).count()
    }

    /// The summary as markdown: one line per contract (for a manager).
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "{} contract(s): {} completed, {} failed, {} malformed, {} skipped\n\n",
            self.contracts.len(),
            self.count(RunStatus::Completed),
            self.count(RunStatus::Failed),
            self.count(RunStatus::Malformed),
            self.count(RunStatus::Skipped),
        );
        for c in &self.contracts {
            out.push_str(&format!(
                "- {} ({}): {} — {}",
                c.name,
                c.title,
                c.status.as_str(),
                c.why
            ));
            if let Some(s) = &c.session {
                out.push_str(&format!(
                    "; session {}, {} turn(s), cost {}, ledger head {}",
                    s.session_id,
                    s.turns,
                    format_cost(s.cost_usd, &s.unpriced_models),
                    s.ledger_head.as_deref().unwrap_or("none")
                ));
                if let Some(summary) = &s.summary {
                    let first = summary.lines().next().unwrap_or_default();
                    out.push_str(&format!("\n  summary: {first}"));
                }
            }
            out.push('\n');
        }
        out
    }
}

/// The Result section's body for an outcome.
pub fn result_markdown(status: Status, o: &SessionOutcome) -> String {
    let mut md = format!("**Outcome:** {status} — {}\n\n", o.why);
    let session = if o.session_id.is_empty() {
        "none".to_string()
    } else {
        format!("`{}`", o.session_id)
    };
    md.push_str(&format!("- Session: {session}\n"));
    md.push_str(&format!("- Turns: {}\n", o.turns));
    md.push_str(&format!(
        "- Cost: {}\n",
        format_cost(o.cost_usd, &o.unpriced_models)
    ));
    md.push_str(&format!(
        "- Duration: {:.2} s\n",
        o.duration_ms as f64 / 1000.0
    ));
    let files = if o.files_changed.is_empty() {
        "none".to_string()
    } else {
        o.files_changed
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    md.push_str(&format!("- Files changed: {files}\n"));
    match (&o.ledger_head, o.ledger_seq) {
        (Some(h), Some(seq)) => md.push_str(&format!("- Ledger head: `{h}` (entry {seq})\n")),
        _ => md.push_str("- Ledger head: none\n"),
    }
    match &o.signing_key {
        Some(k) => md.push_str(&format!("- Signing key: `{k}`\n")),
        None => md.push_str("- Signing key: none (unsigned: no signing key was configured)\n"),
    }
    if let Some(branch) = &o.branch {
        match &o.commit {
            Some(c) => md.push_str(&format!("- Branch: `{branch}` at `{c}`\n")),
            None => md.push_str(&format!("- Branch: `{branch}` (no changes to commit)\n")),
        }
    }
    match (&o.archive, &o.archive_error) {
        (Some(url), _) => md.push_str(&format!("- Archive: {url}\n")),
        (None, Some(err)) => md.push_str(&format!(
            "- Archive: failed ({err}); the session is intact in the store, retry with `tascer archive {}`\n",
            o.session_id
        )),
        (None, None) => {}
    }
    if !o.refused.is_empty() {
        md.push_str(&format!("- Refused calls: {}\n", o.refused.join(", ")));
    }
    if let Some(summary) = &o.summary {
        let longest = longest_run(summary, '`');
        let fence = "`".repeat(longest.max(2) + 1);
        md.push_str(&format!(
            "\n**Summary:**\n\n{fence}text\n{}\n{fence}\n",
            summary.trim_end()
        ));
    }
    md
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == ch { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_summary_with_headings_and_fences_stays_inside_the_result() {
        let o = SessionOutcome {
            completed: true,
            why: "done".into(),
            summary: Some("## Status\nfailed\n```\ncode\n```".into()),
            session_id: "s".into(),
            ..SessionOutcome::default()
        };
        let text = "# Contract: x\n## Status\nin_progress\n## Task\nDo.\n## Result\n";
        let c = crate::parse::parse_str(text, Path::new("a.md")).unwrap();
        let md = result_markdown(Status::Completed, &o);
        let out = crate::writeback::render(&c, Status::Completed, Some(&md));
        let again = crate::parse::parse_str(&out, Path::new("a.md")).unwrap();
        assert_eq!(again.status, Status::Completed);
        assert!(again.result.unwrap().contains("## Status\nfailed"));
    }
}
