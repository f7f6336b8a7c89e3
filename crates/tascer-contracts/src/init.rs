//! `tascer contracts init`: the contract directories, each with a
//! `.gitkeep` so git keeps them empty, and a template contract to copy.

use std::path::{Path, PathBuf};

use crate::error::ContractError;

/// The template's file name in the contracts directory: hidden, so the
/// executor never runs it (it reads only visible `.md` files).
pub const TEMPLATE_NAME: &str = ".template.md";

/// A contract to copy and fill in.
pub const CONTRACT_TEMPLATE: &str = "# Contract: <a short title>

## Status
pending

## Task
<What to do, with everything the agent needs: the files, the expected behaviour, how to
check it. The agent sees only this file and the repository.>

## Constraints
- Files the agent may touch: src/**, tests/**
- Tools allowed: Read, Edit, Write, Bash, Glob, Grep
- Time/turn budget: 30 turns, 15 min
- Cost budget: $2.00
- Model: sonnet

## Notes for the contractor
<Optional: any other section is passed to the agent as written.>
";

/// What [`init`] created (paths that already existed are left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Created {
    /// Directories and files created, in order.
    pub paths: Vec<PathBuf>,
}

/// Creates `dir` and `completed_dir` (and their parents), a `.gitkeep` in
/// each, and [`TEMPLATE_NAME`] in `dir`; what exists is left as it is.
pub fn init(dir: &Path, completed_dir: &Path) -> Result<Created, ContractError> {
    let mut created = Created::default();
    for d in [dir, completed_dir] {
        if !d.is_dir() {
            std::fs::create_dir_all(d).map_err(|source| ContractError::Write {
                path: d.to_path_buf(),
                source,
            })?;
            created.paths.push(d.to_path_buf());
        }
        write_new(&d.join(".gitkeep"), "", &mut created)?;
    }
    write_new(&dir.join(TEMPLATE_NAME), CONTRACT_TEMPLATE, &mut created)?;
    Ok(created)
}

/// Writes `text` to `path` unless it exists.
fn write_new(path: &Path, text: &str, created: &mut Created) -> Result<(), ContractError> {
    if path.exists() {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|source| ContractError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    created.paths.push(path.to_path_buf());
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn init_creates_both_directories_once_and_the_template_parses() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("contracts");
        let done = root.path().join("contracts_completed");
        let created = init(&dir, &done).unwrap();
        assert_eq!(created.paths.len(), 5, "{created:?}");
        assert!(dir.join(".gitkeep").is_file() && done.join(".gitkeep").is_file());
        let template = crate::parse(dir.join(TEMPLATE_NAME)).unwrap();
        assert_eq!(template.status, crate::Status::Pending);
        assert!(crate::contract_files(&dir).unwrap().is_empty(), "never run");
        std::fs::write(dir.join(TEMPLATE_NAME), "mine").unwrap();
        assert!(init(&dir, &done).unwrap().paths.is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.join(TEMPLATE_NAME)).unwrap(),
            "mine"
        );
    }
}
