//! `.env` files outside the workspace: secrets of other projects (and of
//! the directories above this one) that no sandboxed command reads.
//!
//! Landlock cannot deny by name pattern, so the files are found when the
//! policy is made: in every directory from the workspace's parent up to
//! the root, and in the home directory and its subdirectories two levels
//! down (`~/.env`, `~/code/.env`, `~/code/app/.env`). The search is
//! bounded; a file created later, or deeper, is not covered (docs/sandbox.md).

use std::path::{Path, PathBuf};

/// At most this many directories are listed under the home directory.
const MAX_HOME_DIRS: usize = 2_000;
/// At most this many files are denied (each one adds Landlock rules).
const MAX_FILES: usize = 64;

/// True for `.env` and `.env.NAME`, but not for the templates projects
/// commit (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`).
pub fn is_env_file(name: &str) -> bool {
    match name.strip_prefix(".env") {
        Some("") => true,
        Some(rest) => {
            rest.starts_with('.')
                && !matches!(
                    rest,
                    ".example" | ".sample" | ".template" | ".dist" | ".defaults"
                )
        }
        None => false,
    }
}

/// The `.env` files outside `workspace` that the search finds (see the
/// module's documentation).
pub fn env_files_outside(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = workspace
        .ancestors()
        .skip(1)
        .map(Path::to_path_buf)
        .collect();
    if let Some(home) = home {
        dirs.extend(home_dirs(home));
    }
    for dir in dirs {
        if dir.starts_with(workspace) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_str().is_some_and(is_env_file)
                && entry.file_type().is_ok_and(|t| t.is_file())
            {
                let path = entry.path();
                if !found.contains(&path) {
                    found.push(path);
                }
                if found.len() >= MAX_FILES {
                    return found;
                }
            }
        }
    }
    found
}

/// The home directory and its (non-hidden) subdirectories two levels down.
fn home_dirs(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![home.to_path_buf()];
    let mut level = vec![home.to_path_buf()];
    for _ in 0..2 {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                if !hidden && entry.file_type().is_ok_and(|t| t.is_dir()) {
                    next.push(entry.path());
                }
                if out.len() + next.len() >= MAX_HOME_DIRS {
                    break;
                }
            }
        }
        out.extend(next.iter().cloned());
        level = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_and_templates() {
        for name in [".env", ".env.local", ".env.production"] {
            assert!(is_env_file(name), "{name}");
        }
        for name in [
            ".env.example",
            ".envrc",
            "env",
            ".environment",
            ".env.sample",
        ] {
            assert!(!is_env_file(name), "{name}");
        }
    }

    #[test]
    fn finds_files_above_and_beside_but_not_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = home.join("work/app");
        let other = home.join("work/other");
        for d in [&ws, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        for f in [
            home.join(".env"),
            home.join("work/.env.local"),
            other.join(".env"),
            other.join(".env.example"),
            ws.join(".env"),
        ] {
            std::fs::write(f, "KEY=v\n").unwrap();
        }
        let mut found = env_files_outside(&ws, Some(&home));
        found.sort();
        let mut expected = vec![
            home.join(".env"),
            home.join("work/.env.local"),
            other.join(".env"),
        ];
        expected.sort();
        assert_eq!(found, expected);
    }
}
