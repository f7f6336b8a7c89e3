//! The slash commands `tascer install claude-code` writes: `/commit` and
//! `/push`, Claude Code command files (`.claude/commands/<name>.md` of the
//! project, or `commands/` in the user's Claude Code directory) that call
//! the gatekeeper's MCP tools (`mcp__tascer__commit`, `mcp__tascer__push`)
//! with the session's working directory.
//!
//! Install writes a command file only where there is none or where the
//! one there is Tascer's (it holds [`MARKER`]); uninstall removes only
//! files that are exactly what install wrote.

use std::path::{Path, PathBuf};

use crate::install::InstallError;

/// The line that marks a command file as Tascer's.
pub const MARKER: &str =
    "<!-- Written by `tascer install claude-code`; `tascer uninstall claude-code` removes it. -->";

/// `/commit`: check, review and commit in one call of the `commit` tool.
const COMMIT: &str = "---
description: Check, review and commit the working tree through Tascer (check, then confirm, then commit)
argument-hint: [commit message]
allowed-tools: mcp__tascer__commit
---
Commit the current changes through Tascer's gatekeeper. Call the `mcp__tascer__commit` tool once,
with `working_dir` set to the absolute path of the current working directory, and with `message`
set to the text after the command if there is any (here: \"$ARGUMENTS\"; leave `message` out when
that is empty).

The tool runs the project's checks, then a review of the diff, and commits only when both pass.
Do not commit any other way (no `git commit`). If it refuses, report the step that failed (check
or confirm) and its reason, and stop there. If it commits, report the commit id and message.
";

/// `/push`: the `push` tool.
const PUSH: &str = "---
description: Push the current branch through Tascer's gatekeeper
argument-hint: [remote [branch]]
allowed-tools: mcp__tascer__push
---
Push through Tascer's gatekeeper. Call the `mcp__tascer__push` tool once, with `working_dir` set
to the absolute path of the current working directory. The text after the command (here:
\"$ARGUMENTS\") names the remote and then the branch: pass them as `remote` and `branch` when
given, and leave them out when it is empty.

Do not push any other way (no `git push`). Report what the tool answers: git's output on success,
or the refusal and its reason.
";

/// The command files: name and content (the content ends with
/// [`MARKER`]).
fn commands() -> [(&'static str, String); 2] {
    [
        ("commit.md", format!("{COMMIT}\n{MARKER}\n")),
        ("push.md", format!("{PUSH}\n{MARKER}\n")),
    ]
}

/// What happened to one command file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandFile {
    /// Written (it was missing, or an older version of Tascer's).
    Written,
    /// Already there as install writes it.
    AlreadyThere,
    /// A file of the same name that is not Tascer's: left alone.
    NotOurs,
    /// Removed by uninstall.
    Removed,
    /// Tascer's, but changed since install: left alone by uninstall.
    Changed,
    /// Nothing there.
    Missing,
}

impl std::fmt::Display for CommandFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CommandFile::Written => "written",
            CommandFile::AlreadyThere => "already set up",
            CommandFile::NotOurs => "left alone (a command of yours has this name)",
            CommandFile::Removed => "removed",
            CommandFile::Changed => "left alone (changed since install)",
            CommandFile::Missing => "not there",
        })
    }
}

/// Writes `/commit` and `/push` into the commands directory `dir`
/// (created if missing).
pub fn install_commands(dir: &Path) -> Result<Vec<(PathBuf, CommandFile)>, InstallError> {
    let mut done = Vec::new();
    for (name, content) in commands() {
        let path = dir.join(name);
        let outcome = match std::fs::read_to_string(&path) {
            Ok(existing) if existing == content => CommandFile::AlreadyThere,
            Ok(existing) if !existing.contains(MARKER) => CommandFile::NotOurs,
            Ok(_) => {
                write(dir, &path, &content)?;
                CommandFile::Written
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                write(dir, &path, &content)?;
                CommandFile::Written
            }
            Err(source) => return Err(InstallError::Read { path, source }),
        };
        done.push((path, outcome));
    }
    Ok(done)
}

/// Removes the command files [`install_commands`] wrote into `dir` (and
/// `dir` when that leaves it empty).
pub fn uninstall_commands(dir: &Path) -> Result<Vec<(PathBuf, CommandFile)>, InstallError> {
    let mut done = Vec::new();
    for (name, content) in commands() {
        let path = dir.join(name);
        let outcome = match std::fs::read_to_string(&path) {
            Ok(existing) if existing == content => {
                std::fs::remove_file(&path).map_err(|source| InstallError::Remove {
                    path: path.clone(),
                    source,
                })?;
                CommandFile::Removed
            }
            Ok(existing) if existing.contains(MARKER) => CommandFile::Changed,
            Ok(_) => CommandFile::NotOurs,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => CommandFile::Missing,
            Err(source) => return Err(InstallError::Read { path, source }),
        };
        done.push((path, outcome));
    }
    // Only succeeds when empty.
    let _ = std::fs::remove_dir(dir);
    Ok(done)
}

/// Writes one command file, creating its directory.
fn write(dir: &Path, path: &Path, content: &str) -> Result<(), InstallError> {
    std::fs::create_dir_all(dir).map_err(|source| InstallError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    std::fs::write(path, content).map_err(|source| InstallError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn installs_keeps_the_user_s_own_and_removes_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let commands = dir.path().join("commands");
        let outcomes = |v: Vec<(PathBuf, CommandFile)>| v.into_iter().map(|(_, o)| o).collect();
        let got: Vec<_> = outcomes(install_commands(&commands).unwrap());
        assert_eq!(got, [CommandFile::Written, CommandFile::Written]);
        let commit = std::fs::read_to_string(commands.join("commit.md")).unwrap();
        assert!(commit.contains("mcp__tascer__commit") && commit.contains("working_dir"));
        let got: Vec<_> = outcomes(install_commands(&commands).unwrap());
        assert_eq!(got, [CommandFile::AlreadyThere, CommandFile::AlreadyThere]);
        // The user's own /push stays, through install and uninstall.
        std::fs::write(commands.join("push.md"), "my push\n").unwrap();
        let got: Vec<_> = outcomes(install_commands(&commands).unwrap());
        assert_eq!(got, [CommandFile::AlreadyThere, CommandFile::NotOurs]);
        let got: Vec<_> = outcomes(uninstall_commands(&commands).unwrap());
        assert_eq!(got, [CommandFile::Removed, CommandFile::NotOurs]);
        assert!(!commands.join("commit.md").exists());
        assert_eq!(
            std::fs::read_to_string(commands.join("push.md")).unwrap(),
            "my push\n"
        );
        std::fs::remove_file(commands.join("push.md")).unwrap();
        let got: Vec<_> = outcomes(uninstall_commands(&commands).unwrap());
        assert_eq!(got, [CommandFile::Missing, CommandFile::Missing]);
        assert!(!commands.exists(), "the emptied directory goes");
    }
}
