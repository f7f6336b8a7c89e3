//! YAML frontmatter of Markdown files (skills, slash commands, agents):
//! a `---` line, YAML, a `---` line, then the body.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::Error;

/// Splits `text` into its frontmatter (parsed as `T`) and its body. A file
/// without frontmatter gives `T::default()` and the whole text.
pub(crate) fn parse<T: DeserializeOwned + Default>(
    text: &str,
    path: &Path,
) -> Result<(T, String), Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((T::default(), text.to_string()));
    };
    let mut yaml_end = None;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            yaml_end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((end, body_start)) = yaml_end else {
        return Err(Error::Definition(format!(
            "{}: the frontmatter opened by `---` on line 1 is never closed by a `---` line",
            path.display()
        )));
    };
    let yaml = &rest[..end];
    let meta = if yaml.trim().is_empty() {
        T::default()
    } else {
        match serde_yaml_ng::from_str(yaml) {
            Ok(meta) => meta,
            // Claude Code's own examples write `argument-hint: [a] [b]`,
            // which is not YAML: read such files as `key: text` lines.
            Err(e) => lenient(yaml).ok_or_else(|| {
                Error::Definition(format!(
                    "{}: invalid frontmatter: {e} (fix the YAML between the `---` lines)",
                    path.display()
                ))
            })?,
        }
    };
    Ok((meta, rest[body_start..].to_string()))
}

/// Frontmatter read as one `key: text` per line (every value a string),
/// when that gives a valid `T`.
fn lenient<T: DeserializeOwned>(yaml: &str) -> Option<T> {
    let mut map = serde_yaml_ng::Mapping::new();
    for line in yaml.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with(char::is_whitespace) || line.trim_start().starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        map.insert(
            serde_yaml_ng::Value::String(key.trim().to_string()),
            serde_yaml_ng::Value::String(value.trim().to_string()),
        );
    }
    serde_yaml_ng::from_value(serde_yaml_ng::Value::Mapping(map)).ok()
}

/// A frontmatter list given as a YAML list or a comma-separated string
/// (`tools: Read, Grep`), as Claude Code accepts both.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum NameList {
    /// `[Read, Grep]`.
    List(Vec<String>),
    /// `Read, Grep`.
    Text(String),
    /// Absent.
    #[default]
    #[serde(skip)]
    None,
}

impl NameList {
    /// The names, or `None` when absent.
    pub fn names(&self) -> Option<Vec<String>> {
        match self {
            NameList::List(items) => Some(
                items
                    .iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
            NameList::Text(text) => Some(split_names(text)),
            NameList::None => None,
        }
    }
}

/// Splits `Read, Bash(git add:*) Grep` on commas and spaces outside
/// parentheses.
fn split_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !current.trim().is_empty() {
                    out.push(current.trim().to_string());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    struct Meta {
        name: Option<String>,
        #[serde(default)]
        tools: NameList,
    }

    #[test]
    fn frontmatter_and_body_are_split() {
        let (meta, body): (Meta, String) = parse(
            "---\nname: x\ntools: Read, Bash(git add:*)\n---\nBody\n",
            Path::new("f.md"),
        )
        .unwrap();
        assert_eq!(meta.name.as_deref(), Some("x"));
        assert_eq!(meta.tools.names().unwrap(), vec!["Read", "Bash(git add:*)"]);
        assert_eq!(body, "Body\n");
        let (meta, body): (Meta, String) = parse("Just text", Path::new("f.md")).unwrap();
        assert!(meta.name.is_none() && meta.tools.names().is_none());
        assert_eq!(body, "Just text");
    }

    #[test]
    fn claude_style_bracket_hints_are_read_as_text() {
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(rename_all = "kebab-case")]
        struct Hint {
            argument_hint: Option<String>,
        }
        let (meta, _): (Hint, String) = parse(
            "---\nargument-hint: [issue] [priority]\n---\nx",
            Path::new("f.md"),
        )
        .unwrap();
        assert_eq!(meta.argument_hint.as_deref(), Some("[issue] [priority]"));
    }

    #[test]
    fn broken_frontmatter_names_the_file() {
        let err =
            parse::<Meta>("---\nname: [\njust words\n---\n", Path::new("x/y.md")).unwrap_err();
        assert!(
            err.to_string().contains("x/y.md: invalid frontmatter"),
            "{err}"
        );
        let err = parse::<Meta>("---\nname: a\n", Path::new("z.md")).unwrap_err();
        assert!(err.to_string().contains("never closed"), "{err}");
    }
}
