//! [`project_root`]: the directory whose `.tascer/` and `.claude/` settings
//! apply to a working directory, found as Claude Code finds it.

use std::path::{Path, PathBuf};

/// The environment variable Claude Code sets for its hooks: the project's
/// root directory.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";

/// The project root for `cwd`: the directory Claude Code names
/// (`claude_project_dir`, its `CLAUDE_PROJECT_DIR`) when it is set and not
/// empty, else the root of the git work tree holding `cwd` (the nearest
/// directory with a `.git` entry), else `cwd` itself. So a hook event whose
/// `cwd` is `proj/src` gets the settings of `proj/`.
///
/// Claude Code names the directory it was started in, which may be a
/// subdirectory of the project (`cd proj/src && claude`, with hooks a
/// session loads wherever it starts: a user install). Tascer's settings of
/// the project are not lost then: when that directory has no Tascer
/// settings file (`.tascer/settings.json` or `.tascer/settings.local.json`)
/// of its own, the nearest directory above it, up to the root of its git
/// work tree, that has one is the project.
pub fn project_root(cwd: &Path, claude_project_dir: Option<&Path>) -> PathBuf {
    if let Some(dir) = claude_project_dir.filter(|d| !d.as_os_str().is_empty()) {
        let dir = cwd.join(dir);
        return tascer_settings_dir(&dir).unwrap_or(dir);
    }
    git_root(cwd).map_or_else(|| cwd.to_path_buf(), Path::to_path_buf)
}

/// The nearest directory from `dir` up to the root of its git work tree
/// that holds a Tascer settings file (`.tascer/settings.json` or
/// `.tascer/settings.local.json`); `None` outside a git work tree, or when
/// none does. The user's home directory never counts: its `.tascer/` is
/// Tascer's home (user settings), not a project's.
fn tascer_settings_dir(dir: &Path) -> Option<PathBuf> {
    let top = git_root(dir)?;
    let home = std::env::home_dir();
    dir.ancestors()
        .take_while(|d| d.starts_with(top))
        .filter(|d| home.as_deref() != Some(*d))
        .find(|d| {
            let settings = d.join(".tascer");
            settings.join("settings.json").is_file()
                || settings.join("settings.local.json").is_file()
        })
        .map(Path::to_path_buf)
}

/// The root of the git work tree holding `dir`: the nearest directory with
/// a `.git` entry.
fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_s_directory_then_the_git_root_then_the_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        let src = proj.join("src/deep");
        std::fs::create_dir_all(&src).unwrap();
        assert_eq!(project_root(&src, None), src);
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        assert_eq!(project_root(&src, None), proj);
        let other = tmp.path().join("other");
        assert_eq!(project_root(&src, Some(&other)), other);
        assert_eq!(project_root(&src, Some(Path::new(""))), proj);
    }

    #[test]
    fn claude_code_started_in_a_subdirectory_keeps_the_project_s_tascer_settings() {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        let src = proj.join("src");
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        std::fs::create_dir_all(src.join(".claude")).unwrap();
        // No Tascer settings anywhere: Claude Code's directory, as before.
        assert_eq!(project_root(&src, Some(&src)), src);
        // The project's, above it in the same work tree.
        std::fs::create_dir_all(proj.join(".tascer")).unwrap();
        assert_eq!(project_root(&src, Some(&src)), src, "an empty .tascer/");
        std::fs::write(proj.join(".tascer/settings.json"), "{}").unwrap();
        assert_eq!(project_root(&src, Some(&src)), proj);
        assert_eq!(project_root(&src.join("deep"), Some(&src)), proj);
        // A subdirectory with settings of its own is its own project.
        std::fs::create_dir_all(src.join(".tascer")).unwrap();
        std::fs::write(src.join(".tascer/settings.local.json"), "{}").unwrap();
        assert_eq!(project_root(&src, Some(&src)), src);
        // Not past the work tree's root.
        let outer = tmp.path().join("outer");
        let inner = outer.join("repo/pkg");
        std::fs::create_dir_all(outer.join(".tascer")).unwrap();
        std::fs::write(outer.join(".tascer/settings.json"), "{}").unwrap();
        std::fs::create_dir_all(outer.join("repo/.git")).unwrap();
        std::fs::create_dir_all(&inner).unwrap();
        assert_eq!(project_root(&inner, Some(&inner)), inner);
    }
}
