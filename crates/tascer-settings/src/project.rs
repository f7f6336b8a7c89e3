//! [`project_root`]: the directory whose `.tascer/` and `.claude/` settings
//! apply to a working directory, found as Claude Code finds it.

use std::path::{Path, PathBuf};

/// The environment variable Claude Code sets for its hooks: the project's
/// root directory.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";

/// The project root for `cwd`: `claude_project_dir` (Claude Code's
/// `CLAUDE_PROJECT_DIR`) when it is set and not empty, else the root of the
/// git work tree holding `cwd` (the nearest directory with a `.git` entry),
/// else `cwd` itself. So a hook event whose `cwd` is `proj/src` gets the
/// settings of `proj/`.
pub fn project_root(cwd: &Path, claude_project_dir: Option<&Path>) -> PathBuf {
    if let Some(dir) = claude_project_dir.filter(|d| !d.as_os_str().is_empty()) {
        return cwd.join(dir);
    }
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf)
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
}
