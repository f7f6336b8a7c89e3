//! The project's instruction files (`CLAUDE.md`, `.claude/CLAUDE.md`,
//! `CLAUDE.local.md`, …) as `tool-approve` and `tool-appeal` are shown
//! them: each under its name, [`INSTRUCTIONS_BYTES`] in all; and as their
//! cache key holds them: each file's name and digest.

use serde_json::{Value, json};

/// Most bytes of instruction files shown to a reviewer, all files
/// together (a file past the limit is cut, later ones only named).
pub const INSTRUCTIONS_BYTES: usize = 8 * 1024;

/// One instruction file of the project (a memory file: `CLAUDE.md` and
/// the like), as the caller read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Its path (shown to the reviewer as its name).
    pub path: String,
    /// `sha256:<hex>` of its bytes (the cache key holds it, not the text).
    pub sha256: String,
    /// Its text.
    pub content: String,
}

/// The files as the reviewer reads them: each under a `--- <path> ---`
/// line, cut to [`INSTRUCTIONS_BYTES`] in all; `(none)` without files.
pub(crate) fn instructions_text(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return "(none)".to_string();
    }
    let mut left = INSTRUCTIONS_BYTES;
    let mut out = Vec::new();
    for file in files {
        let content = file.content.trim_end();
        if left == 0 {
            out.push(format!(
                "--- {} --- (not shown: past the {INSTRUCTIONS_BYTES}-byte limit)",
                file.path
            ));
            continue;
        }
        let shown = cut_bytes(content, left);
        left -= shown.len();
        let note = if shown.len() < content.len() {
            format!(
                "\n… (cut: {} of {} bytes shown)",
                shown.len(),
                content.len()
            )
        } else {
            String::new()
        };
        out.push(format!("--- {} ---\n{shown}{note}", file.path));
    }
    out.join("\n\n")
}

/// What a verdict depends on of the files: each file's path and digest
/// (so an edit to `CLAUDE.md` asks the question again).
pub(crate) fn instructions_key(files: &[InstructionFile]) -> Value {
    Value::Array(files.iter().map(|f| json!([f.path, f.sha256])).collect())
}

/// The longest prefix of `text` of at most `max` bytes ending on a
/// character boundary.
fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> InstructionFile {
        InstructionFile {
            path: path.into(),
            sha256: format!("sha256:{}", content.len()),
            content: content.into(),
        }
    }

    #[test]
    fn files_are_shown_by_name_within_the_limit() {
        assert_eq!(instructions_text(&[]), "(none)");
        let small = instructions_text(&[file("/p/CLAUDE.md", "Never push.\n")]);
        assert_eq!(small, "--- /p/CLAUDE.md ---\nNever push.");
        let big = "é".repeat(INSTRUCTIONS_BYTES);
        let text = instructions_text(&[
            file("/p/CLAUDE.md", &big),
            file("/p/CLAUDE.local.md", "Use tabs."),
        ]);
        assert!(
            text.contains("… (cut: 8192 of 16384 bytes shown)"),
            "{text}"
        );
        assert!(
            text.ends_with("--- /p/CLAUDE.local.md --- (not shown: past the 8192-byte limit)"),
            "{text}"
        );
        assert!(!text.contains("Use tabs."));
    }
}
