//! Parsing a contract file with a markdown parser (pulldown-cmark).
//!
//! A contract is a markdown file with a `# Contract: <title>` heading and
//! `##` sections; `Status` and `Task` are required, `Constraints` and
//! `Result` optional, any other section is kept as it is. Section names
//! are matched without regard to case or surrounding spaces.

use std::ops::Range;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options as MdOptions, Parser, Tag, TagEnd};

use crate::constraints::Constraints;
use crate::error::ContractError;

/// Where a contract stands, as written in its `## Status` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not run yet.
    Pending,
    /// An executor is running it (or was, and crashed).
    InProgress,
    /// Done; the Result says what happened.
    Completed,
    /// Not done; the Result says why.
    Failed,
}

impl Status {
    /// The word written into the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }

    /// Parses a status word: case and `_`/`-`/space between `in` and
    /// `progress` do not matter.
    pub fn parse(word: &str) -> Option<Status> {
        let w: String = word
            .trim()
            .trim_matches(|c: char| c == '`' || c == '*' || c == '_')
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c == '-' || c == ' ' { '_' } else { c })
            .collect();
        match w.as_str() {
            "pending" => Some(Status::Pending),
            "in_progress" => Some(Status::InProgress),
            "completed" => Some(Status::Completed),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `##` section: its name and the byte ranges of heading and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// The heading text, lower-cased and trimmed.
    pub key: String,
    /// Bytes from the end of the heading line to the next heading (or EOF).
    pub body: Range<usize>,
}

/// A parsed contract file.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its name: the file name without `.md` (used for branches and leases).
    pub name: String,
    /// The title after `# Contract:` (the file name when there is no such heading).
    pub title: String,
    /// The status.
    pub status: Status,
    /// The task, as written (markdown).
    pub task: String,
    /// The constraints.
    pub constraints: Constraints,
    /// The Result section's text, when it has one.
    pub result: Option<String>,
    /// The file's text, exactly as read.
    pub(crate) text: String,
    /// Byte range of the status word.
    pub(crate) status_range: Range<usize>,
    /// Byte range of the Result section's body, when there is one.
    pub(crate) result_range: Option<Range<usize>>,
}

/// 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Reads and parses the contract at `path`.
pub fn parse(path: impl AsRef<Path>) -> Result<Contract, ContractError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ContractError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, path)
}

/// Parses contract text; `path` names it in errors and gives its name.
pub fn parse_str(text: &str, path: &Path) -> Result<Contract, ContractError> {
    let malformed = |offset: usize, message: String| ContractError::Malformed {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        message,
    };
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (title, sections) = outline(text);
    let find = |key: &str| sections.iter().filter(|s| s.key == key).collect::<Vec<_>>();
    for key in ["status", "task", "constraints", "result"] {
        if let [_, second, ..] = find(key).as_slice() {
            return Err(malformed(
                second.body.start.saturating_sub(1),
                format!("a second `## {key}` section; a contract has one of each"),
            ));
        }
    }
    let Some(status_section) = find("status").first().copied() else {
        return Err(malformed(
            text.len(),
            "no `## Status` section (add one containing `pending`)".into(),
        ));
    };
    let status_range = first_word(text, status_section.body.clone()).ok_or_else(|| {
        malformed(
            status_section.body.start,
            "the `## Status` section is empty (write pending, in_progress, completed or failed)"
                .into(),
        )
    })?;
    let word = &text[status_range.clone()];
    let status = Status::parse(word).ok_or_else(|| {
        malformed(
            status_range.start,
            format!("unknown status `{word}` (expected pending, in_progress, completed or failed)"),
        )
    })?;
    let Some(task_section) = find("task").first().copied() else {
        return Err(malformed(
            text.len(),
            "no `## Task` section (the agent needs a self-contained description)".into(),
        ));
    };
    let task = text[task_section.body.clone()].trim().to_string();
    if task.is_empty() {
        return Err(malformed(
            task_section.body.start,
            "the `## Task` section is empty".into(),
        ));
    }
    let constraints = match find("constraints").first() {
        Some(section) => Constraints::parse(text, section.body.clone())
            .map_err(|(offset, message)| malformed(offset, message))?,
        None => Constraints::default(),
    };
    let result_range = find("result").first().map(|s| s.body.clone());
    let result = result_range
        .clone()
        .map(|r| text[r].trim().to_string())
        .filter(|r| !r.is_empty());
    Ok(Contract {
        path: path.to_path_buf(),
        title: title.unwrap_or_else(|| name.clone()),
        name,
        status,
        task,
        constraints,
        result,
        text: text.to_string(),
        status_range,
        result_range,
    })
}

/// The title of the first `# ` heading (without a leading `Contract:`) and
/// the `##` sections, each running to the next `#`/`##` heading.
fn outline(text: &str) -> (Option<String>, Vec<Section>) {
    let mut title = None;
    let mut sections: Vec<Section> = Vec::new();
    let mut open: Option<(HeadingLevel, String)> = None;
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, MdOptions::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                if level <= HeadingLevel::H2 {
                    if let Some(last) = sections.last_mut()
                        && last.body.end == text.len()
                    {
                        last.body.end = range.start;
                    }
                    open = Some((level, String::new()));
                }
                depth += 1;
            }
            Event::End(TagEnd::Heading(_)) if depth == 1 => {
                depth = 0;
                let Some((level, heading)) = open.take() else {
                    continue;
                };
                let heading = heading.trim().to_string();
                if level == HeadingLevel::H1 {
                    if title.is_none() {
                        let t = strip_prefix_ci(&heading, "contract:").unwrap_or(&heading);
                        title = Some(t.trim().to_string());
                    }
                } else {
                    let body_start = line_end(text, range.end);
                    sections.push(Section {
                        key: heading.to_ascii_lowercase(),
                        body: body_start..text.len(),
                    });
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, heading)) = open.as_mut() {
                    heading.push_str(&t);
                }
            }
            _ => {}
        }
    }
    (title, sections)
}

/// The offset just past the newline ending the line that contains `at - 1`
/// (heading ranges may or may not include their newline).
fn line_end(text: &str, at: usize) -> usize {
    if at > 0 && text.as_bytes().get(at - 1) == Some(&b'\n') {
        return at;
    }
    match text[at..].find('\n') {
        Some(i) => at + i + 1,
        None => text.len(),
    }
}

/// The byte range of the first whitespace-separated word in `range`.
fn first_word(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let body = &text[range.clone()];
    let start = body.find(|c: char| !c.is_whitespace())?;
    let rest = &body[start..];
    let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
    let word = rest[..len].trim_end();
    Some(range.start + start..range.start + start + word.len())
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// The contract files of `dir` (`*.md`, not hidden), in file-name order.
pub fn contract_files(dir: &Path) -> Result<Vec<PathBuf>, ContractError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ContractError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md"))
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const GOOD: &str = "# Contract: Add a greeting\n\n## Status\npending\n\n## Task\nWrite `hello.txt`.\n\n## Constraints\n- Files: hello.txt\n- Tools: Write, Read\n- Turn budget: 5 turns\n\n## Result\n";

    #[test]
    fn parses_the_sections() {
        let c = parse_str(GOOD, Path::new("contracts/01-greet.md")).unwrap();
        assert_eq!(c.name, "01-greet");
        assert_eq!(c.title, "Add a greeting");
        assert_eq!(c.status, Status::Pending);
        assert_eq!(c.task, "Write `hello.txt`.");
        assert_eq!(c.constraints.files, vec!["hello.txt"]);
        assert_eq!(c.constraints.max_turns, Some(5));
        assert_eq!(c.result, None);
        assert_eq!(&GOOD[c.status_range.clone()], "pending");
    }

    #[test]
    fn tolerates_case_spacing_and_extra_sections() {
        let text = "#   contract:   Tidy  \n\nIntro text.\n\n##   STATUS  \n\n   In Progress\n\n## Notes\nkeep me\n\n##  task\n\nDo it.\n### Sub heading\nmore\n";
        let c = parse_str(text, Path::new("x.md")).unwrap();
        assert_eq!(c.title, "Tidy");
        assert_eq!(c.status, Status::InProgress);
        assert_eq!(c.task, "Do it.\n### Sub heading\nmore");
    }

    #[test]
    fn malformed_contracts_name_the_line_and_problem() {
        let err = parse_str(
            "# Contract: x\n## Status\ndone\n## Task\nx\n",
            Path::new("a.md"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("a.md:3"), "{err}");
        assert!(err.contains("unknown status `done`"), "{err}");

        let err = parse_str("# Contract: x\n## Status\npending\n", Path::new("b.md"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no `## Task` section"), "{err}");

        let err = parse_str(
            "# Contract: x\n## Status\npending\n## Task\nx\n## Constraints\n- Turn budget: many\n",
            Path::new("c.md"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("c.md:7"), "{err}");
    }

    #[test]
    fn headings_inside_code_blocks_are_not_sections() {
        let text = "# Contract: x\n## Status\npending\n## Task\n```\n## Status\nfailed\n```\n";
        let c = parse_str(text, Path::new("a.md")).unwrap();
        assert_eq!(c.status, Status::Pending);
        assert!(c.task.contains("failed"));
    }
}
