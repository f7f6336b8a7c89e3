//! Where Claude Code keeps its files: its configuration directory
//! (`$CLAUDE_CONFIG_DIR`, else `~/.claude`) and, under `projects/`, one
//! directory per project holding the sessions' transcripts
//! (`<session id>.jsonl`), named from the project's path as Claude Code
//! names it.

use std::path::{Path, PathBuf};

/// Longest project directory name before a hash is appended (as in
/// Claude Code).
const MAX_PROJECT_DIR_NAME: usize = 200;

/// Claude Code's configuration directory: `$CLAUDE_CONFIG_DIR` when set
/// (and not empty), else `~/.claude`; `None` without a home directory.
pub fn claude_config_dir() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".claude")))
}

/// The directory name Claude Code keeps `project`'s sessions under: every
/// character outside `[A-Za-z0-9]` becomes `-`; a name over 200
/// characters is cut there and gets `-<hash>` appended.
pub fn claude_project_dir_name(project: &Path) -> String {
    let path = project.display().to_string();
    let name: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if name.chars().count() <= MAX_PROJECT_DIR_NAME {
        return name;
    }
    let cut: String = name.chars().take(MAX_PROJECT_DIR_NAME).collect();
    format!("{cut}-{}", path_hash(&path))
}

/// The transcript file of session `session_id` of `project` under the
/// configuration directory `config_dir`.
pub fn claude_transcript_file(config_dir: &Path, project: &Path, session_id: &str) -> PathBuf {
    config_dir
        .join("projects")
        .join(claude_project_dir_name(project))
        .join(format!("{session_id}.jsonl"))
}

/// Claude Code's 32-bit string hash (`h = h * 31 + unit` over UTF-16
/// units, wrapping), its absolute value in base 36.
fn path_hash(text: &str) -> String {
    let mut h: i32 = 0;
    for unit in text.encode_utf16() {
        h = h
            .wrapping_shl(5)
            .wrapping_sub(h)
            .wrapping_add(i32::from(unit));
    }
    let mut n = i64::from(h).unsigned_abs();
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(char::from(digits[(n % 36) as usize]));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_directories_are_named_as_claude_code_names_them() {
        assert_eq!(
            claude_project_dir_name(Path::new("/home/u/my proj.v2")),
            "-home-u-my-proj-v2"
        );
        let long = format!("/{}", "a".repeat(250));
        let name = claude_project_dir_name(Path::new(&long));
        assert!(
            name.starts_with(&format!("-{}-", "a".repeat(199))),
            "{name}"
        );
        // The names the official SDKs compute for these paths.
        assert!(name.ends_with("aaaaa-feo44x"), "{name}");
        let wide = claude_project_dir_name(Path::new(&format!("/tmp/\u{fc}{}", "b".repeat(220))));
        assert!(wide.ends_with("bbbbbbb-jeix8r"), "{wide}");
        // The hash of "abc" is 96354, "22ci" in base 36.
        assert_eq!(path_hash("abc"), "22ci");
        assert_eq!(path_hash(""), "0");
    }

    #[test]
    fn a_transcript_is_under_projects_in_its_project_directory() {
        assert_eq!(
            claude_transcript_file(Path::new("/c"), Path::new("/w/p"), "id"),
            Path::new("/c/projects/-w-p/id.jsonl")
        );
    }
}
