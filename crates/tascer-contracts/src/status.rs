//! A contract file as `tascer contracts status` lists it: its status and,
//! from its Result section, the session and the outcome.

use std::path::{Path, PathBuf};

use crate::error::ContractError;
use crate::parse::{Status, contract_files, parse};

/// Every contract of `dirs` (the contracts directory, then the completed
/// one), each with its status, in file-name order per directory; a
/// directory that does not exist has none.
pub fn read_statuses(dirs: &[&Path]) -> Result<Vec<ContractStatus>, ContractError> {
    let mut rows = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            continue;
        }
        rows.extend(contract_files(dir)?.into_iter().map(ContractStatus::read));
    }
    Ok(rows)
}

/// One contract file's status.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ContractStatus {
    /// Contract name (file name without `.md`).
    pub name: String,
    /// Its title (empty when malformed).
    pub title: String,
    /// `pending`, `in_progress`, `completed`, `failed` or `malformed`.
    pub status: String,
    /// The file.
    pub path: PathBuf,
    /// `file:line: what is wrong` for a malformed contract.
    pub error: Option<String>,
    /// The session id its Result names.
    pub session: Option<String>,
    /// The Result's outcome line, once completed or failed.
    pub outcome: Option<String>,
}

impl ContractStatus {
    /// Reads the contract at `path`; a file that does not parse is
    /// `malformed`, with the error.
    pub fn read(path: PathBuf) -> ContractStatus {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match parse(&path) {
            Ok(c) => {
                let result = c.result.clone().unwrap_or_default();
                let field = |label: &str| {
                    result.lines().find_map(|l| {
                        l.trim()
                            .strip_prefix(label)
                            .map(|v| v.trim().trim_matches('`').to_string())
                    })
                };
                let outcome = match c.status {
                    Status::Completed | Status::Failed => field("**Outcome:**"),
                    _ => None,
                };
                ContractStatus {
                    name,
                    title: c.title,
                    status: c.status.to_string(),
                    path,
                    error: None,
                    session: field("- Session:").filter(|s| s != "none"),
                    outcome,
                }
            }
            Err(err) => ContractStatus {
                name,
                title: String::new(),
                status: "malformed".to_string(),
                path,
                error: Some(err.to_string()),
                session: None,
                outcome: None,
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_session_and_outcome_come_from_the_result() {
        let dir = tempfile::tempdir().unwrap();
        let done = dir.path().join("a.md");
        std::fs::write(
            &done,
            "# Contract: A\n## Status\ncompleted\n## Task\nDo.\n## Result\n**Outcome:** completed — the agent finished (completed)\n\n- Session: `s-1`\n",
        )
        .unwrap();
        let s = ContractStatus::read(done);
        assert_eq!(s.status, "completed");
        assert_eq!(s.session.as_deref(), Some("s-1"));
        assert_eq!(
            s.outcome.as_deref(),
            Some("completed — the agent finished (completed)")
        );
        let bad = dir.path().join("b.md");
        std::fs::write(&bad, "# Contract: B\n## Status\nfinished\n").unwrap();
        let s = ContractStatus::read(bad);
        assert_eq!(s.status, "malformed");
        assert!(s.error.is_some());
    }
}
