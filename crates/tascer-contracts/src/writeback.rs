//! Writing Status and Result back into a contract file: every other byte
//! stays as it was, and the file is replaced atomically (a temporary file
//! in the same directory, synced, then renamed over it), so a crash leaves
//! either the old or the new file, never a mix.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ContractError;
use crate::parse::{Contract, Status, parse_str};

/// The text of `contract` with its status word replaced and, when given,
/// its Result section's body replaced by `result` (a Result section is
/// appended when there is none).
pub fn render(contract: &Contract, status: Status, result: Option<&str>) -> String {
    let text = &contract.text;
    let mut edits: Vec<(std::ops::Range<usize>, String)> =
        vec![(contract.status_range.clone(), status.as_str().to_string())];
    if let Some(result) = result {
        let result = result.trim_end();
        match &contract.result_range {
            Some(range) => {
                let followed = range.end < text.len();
                let tail = if followed { "\n\n" } else { "\n" };
                edits.push((range.clone(), format!("\n{result}{tail}")));
            }
            None => {
                let sep = if text.ends_with('\n') { "\n" } else { "\n\n" };
                edits.push((
                    text.len()..text.len(),
                    format!("{sep}## Result\n\n{result}\n"),
                ));
            }
        }
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for (range, replacement) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(&replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Writes `status` (and `result`) into the contract's file and returns the
/// contract as now on disk. Refuses when the file no longer holds the text
/// the contract was parsed from.
pub fn write_back(
    contract: &Contract,
    status: Status,
    result: Option<&str>,
) -> Result<Contract, ContractError> {
    let path = &contract.path;
    let current = std::fs::read_to_string(path).map_err(|source| ContractError::Read {
        path: path.clone(),
        source,
    })?;
    if current != contract.text {
        return Err(ContractError::Changed { path: path.clone() });
    }
    let text = render(contract, status, result);
    // Parse before writing: what is written must read back as a contract.
    let updated = parse_str(&text, path)?;
    write_atomic(path, text.as_bytes())?;
    Ok(updated)
}

/// Replaces `path` with `bytes` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ContractError> {
    let err = |source| ContractError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".contract-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// Moves a finished contract into `dir` (created if needed), keeping its
/// file name; when that name is taken, `-2`, `-3`, … are added. Returns
/// the new path.
pub fn move_into(contract_path: &Path, dir: &Path) -> Result<PathBuf, ContractError> {
    std::fs::create_dir_all(dir).map_err(|source| ContractError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let name = contract_path.file_name().ok_or_else(|| {
        ContractError::Other(format!("{} has no file name", contract_path.display()))
    })?;
    let mut target = dir.join(name);
    let stem = contract_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut n = 2;
    while target.exists() {
        target = dir.join(format!("{stem}-{n}.md"));
        n += 1;
    }
    std::fs::rename(contract_path, &target).map_err(|source| ContractError::Write {
        path: target.clone(),
        source,
    })?;
    Ok(target)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TEXT: &str = "# Contract: Greet\n\nPreamble *kept*.\n\n## Status\n\n  pending   \n\n## Task\nSay hi.\n\n## Result\nold\n\n## Notes\nAfter   the result.\n";

    #[test]
    fn only_status_and_result_change() {
        let c = parse_str(TEXT, Path::new("a.md")).unwrap();
        let out = render(&c, Status::Completed, Some("**Outcome:** completed"));
        assert_eq!(
            out,
            "# Contract: Greet\n\nPreamble *kept*.\n\n## Status\n\n  completed   \n\n## Task\nSay hi.\n\n## Result\n\n**Outcome:** completed\n\n## Notes\nAfter   the result.\n"
        );
        let again = parse_str(&out, Path::new("a.md")).unwrap();
        assert_eq!(again.status, Status::Completed);
        assert_eq!(again.result.as_deref(), Some("**Outcome:** completed"));
    }

    #[test]
    fn a_missing_result_section_is_appended() {
        let text = "# Contract: x\n## Status\npending\n## Task\nDo.";
        let c = parse_str(text, Path::new("a.md")).unwrap();
        let out = render(&c, Status::Failed, Some("why"));
        assert_eq!(
            out,
            "# Contract: x\n## Status\nfailed\n## Task\nDo.\n\n## Result\n\nwhy\n"
        );
    }

    #[test]
    fn write_back_is_refused_when_the_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.md");
        std::fs::write(&path, TEXT).unwrap();
        let c = crate::parse::parse(&path).unwrap();
        std::fs::write(&path, TEXT.replace("Say hi", "Say bye")).unwrap();
        assert!(matches!(
            write_back(&c, Status::InProgress, None),
            Err(ContractError::Changed { .. })
        ));
        let c = crate::parse::parse(&path).unwrap();
        let c = write_back(&c, Status::InProgress, None).unwrap();
        assert_eq!(c.status, Status::InProgress);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), c.text);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
