//! The `## Constraints` section: list items that become enforcement.
//!
//! Each item is `key: value`. Keys are recognised by the words they
//! contain, without regard to case:
//!
//! | key mentions | value | becomes |
//! | --- | --- | --- |
//! | `file` | comma-separated paths/globs (gitignore style) | the write scope |
//! | `tool` | comma-separated tool names | the tool list |
//! | `model` | a model id | the session's model |
//! | `turn`, `time`, `budget`, `cost` | `N turns`, `$X`, `N s/min/h` (several allowed) | `max_turns`, `max_budget_usd`, the wall-clock limit |
//!
//! Any other item is kept as a note and passed to the agent as text.

use std::ops::Range;
use std::time::Duration;

use pulldown_cmark::{Event, Options as MdOptions, Parser, Tag, TagEnd};

/// What a contract's Constraints say.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Constraints {
    /// Paths and globs the agent may change (empty: no file constraint).
    pub files: Vec<String>,
    /// Tools offered to the agent (`None`: the default set).
    pub tools: Option<Vec<String>>,
    /// Turn budget (`max_turns`).
    pub max_turns: Option<u32>,
    /// Cost budget in USD (`max_budget_usd`).
    pub max_budget_usd: Option<f64>,
    /// Wall-clock limit.
    pub time_limit: Option<Duration>,
    /// The model to use.
    pub model: Option<String>,
    /// Lines not recognised, passed to the agent as they are.
    pub notes: Vec<String>,
}

/// An error at a byte offset of the file.
pub(crate) type AtOffset = (usize, String);

impl Constraints {
    /// Parses the list items of `text[body]`.
    pub(crate) fn parse(text: &str, body: Range<usize>) -> Result<Constraints, AtOffset> {
        let mut out = Constraints::default();
        for (range, item) in list_items(text, body) {
            out.apply_item(&item)
                .map_err(|message| (range.start, message))?;
        }
        Ok(out)
    }

    fn apply_item(&mut self, item: &str) -> Result<(), String> {
        let Some((key, value)) = item.split_once(':') else {
            self.notes.push(item.to_string());
            return Ok(());
        };
        let k = key.to_ascii_lowercase();
        let value = value.trim();
        if k.contains("file") {
            self.files.extend(split_names(value));
            if self.files.is_empty() {
                return Err(format!("`{item}` names no files"));
            }
        } else if k.contains("tool") {
            self.tools
                .get_or_insert_with(Vec::new)
                .extend(split_names(value));
        } else if k.contains("model") {
            let model = value.trim_matches('`').trim();
            if model.is_empty() {
                return Err(format!("`{item}` names no model"));
            }
            self.model = Some(model.to_string());
        } else if ["turn", "time", "budget", "cost"]
            .iter()
            .any(|w| k.contains(w))
        {
            self.apply_budget(&k, value, item)?;
        } else {
            self.notes.push(item.to_string());
        }
        Ok(())
    }

    /// `10 turns, $0.50, 5 min` (any subset, any order; `and`, `/`, `,`
    /// separate them). A bare number counts as turns under a `turn` key.
    fn apply_budget(&mut self, key: &str, value: &str, item: &str) -> Result<(), String> {
        let cleaned = value.replace(['`', '*'], " ").replace(" and ", ",");
        let mut found = false;
        for part in cleaned.split([',', ';', '/']) {
            let part = part.trim().to_ascii_lowercase();
            if part.is_empty() {
                continue;
            }
            if let Some(dollars) = part.strip_prefix('$') {
                let usd: f64 = dollars
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{item}`: `{part}` is not a dollar amount like $0.50"))?;
                self.max_budget_usd = Some(usd);
                found = true;
                continue;
            }
            let split = part
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(part.len());
            let (number, unit) = (part[..split].trim(), part[split..].trim());
            let Ok(n) = number.parse::<f64>() else {
                return Err(format!(
                    "`{item}`: cannot read `{part}` (write e.g. `20 turns`, `$1.50` or `10 min`)"
                ));
            };
            let unit = unit.trim_end_matches('.');
            let seconds = match unit {
                "turn" | "turns" => {
                    self.max_turns = Some(whole(n, item)?);
                    found = true;
                    continue;
                }
                "" if key.contains("turn") && !key.contains("time") => {
                    self.max_turns = Some(whole(n, item)?);
                    found = true;
                    continue;
                }
                "s" | "sec" | "secs" | "second" | "seconds" => n,
                "m" | "min" | "mins" | "minute" | "minutes" => n * 60.0,
                "h" | "hr" | "hrs" | "hour" | "hours" => n * 3600.0,
                _ => {
                    return Err(format!(
                        "`{item}`: unknown unit in `{part}` (use turns, $, s, min or h)"
                    ));
                }
            };
            self.time_limit = Some(Duration::from_secs_f64(seconds));
            found = true;
        }
        if found {
            Ok(())
        } else {
            Err(format!(
                "`{item}` gives no budget (write e.g. `20 turns`, `$1.50` or `10 min`)"
            ))
        }
    }

    /// Every constraint as a line of text for the agent's prompt.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.files.is_empty() {
            lines.push(format!(
                "You may only change these files: {} (other writes are refused).",
                self.files.join(", ")
            ));
        }
        if let Some(tools) = &self.tools {
            lines.push(format!("Tools available: {}.", tools.join(", ")));
        }
        if let Some(n) = self.max_turns {
            lines.push(format!("Turn budget: {n} model calls."));
        }
        if let Some(usd) = self.max_budget_usd {
            lines.push(format!("Cost budget: ${usd:.2}."));
        }
        if let Some(t) = self.time_limit {
            lines.push(format!("Time budget: {} s.", t.as_secs()));
        }
        lines.extend(self.notes.iter().cloned());
        lines
    }
}

fn whole(n: f64, item: &str) -> Result<u32, String> {
    if n.fract() == 0.0 && n >= 1.0 && n <= f64::from(u32::MAX) {
        Ok(n as u32)
    } else {
        Err(format!(
            "`{item}`: a turn budget is a whole number of at least 1"
        ))
    }
}

/// Splits `a.txt, src/**` or `` `Read`, `Write` `` into names.
fn split_names(value: &str) -> Vec<String> {
    value
        .split([',', ';'])
        .flat_map(|part| {
            let part = part.trim();
            // "Read and Write" / "Read Write" (tool names have no spaces).
            if part.contains(' ') && !part.contains('(') {
                part.split_whitespace()
                    .filter(|w| !w.eq_ignore_ascii_case("and"))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            } else {
                vec![part.to_string()]
            }
        })
        .map(|s| s.trim_matches('`').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The top-level list items of `text[body]`: their ranges and their text
/// on one line (inline markup kept as written, nested lists included).
fn list_items(text: &str, body: Range<usize>) -> Vec<(Range<usize>, String)> {
    let slice = &text[body.clone()];
    let mut items = Vec::new();
    let mut list_depth = 0usize;
    for (event, range) in Parser::new_ext(slice, MdOptions::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::List(_)) => list_depth += 1,
            Event::End(TagEnd::List(_)) => list_depth = list_depth.saturating_sub(1),
            Event::Start(Tag::Item) if list_depth == 1 => {
                let raw = &slice[range.clone()];
                let line = raw
                    .lines()
                    .map(|l| {
                        let l = l.trim();
                        l.strip_prefix("- ")
                            .or_else(|| l.strip_prefix("* "))
                            .or_else(|| l.strip_prefix("+ "))
                            .unwrap_or(l)
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let line = strip_ordinal(line.trim()).to_string();
                if !line.is_empty() {
                    let abs = body.start + range.start..body.start + range.end;
                    items.push((abs, line));
                }
            }
            _ => {}
        }
    }
    items
}

/// `1. text` → `text`.
fn strip_ordinal(s: &str) -> &str {
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
    if digits > 0 && (s[digits..].starts_with(". ") || s[digits..].starts_with(") ")) {
        s[digits + 2..].trim_start()
    } else {
        s
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Constraints, AtOffset> {
        Constraints::parse(body, 0..body.len())
    }

    #[test]
    fn recognises_keys_and_keeps_the_rest() {
        let c = parse(
            "- Files the agent may touch: `src/lib.rs`, docs/**\n\
             - Tools allowed: Read, Edit and Bash\n\
             * Time/turn budget: 12 turns, 5 min\n\
             - Cost budget: $0.75\n\
             - Model: claude-haiku-4-5\n\
             - Keep the public API stable\n\
             1. Use British spelling: yes\n",
        )
        .unwrap();
        assert_eq!(c.files, vec!["src/lib.rs", "docs/**"]);
        assert_eq!(
            c.tools,
            Some(vec!["Read".into(), "Edit".into(), "Bash".into()])
        );
        assert_eq!(c.max_turns, Some(12));
        assert_eq!(c.time_limit, Some(Duration::from_secs(300)));
        assert_eq!(c.max_budget_usd, Some(0.75));
        assert_eq!(c.model.as_deref(), Some("claude-haiku-4-5"));
        assert_eq!(
            c.notes,
            vec!["Keep the public API stable", "Use British spelling: yes"]
        );
    }

    #[test]
    fn bad_budgets_are_errors_at_their_item() {
        let body = "- Files: a\n- Turn budget: 2.5 turns\n";
        let (offset, msg) = parse(body).unwrap_err();
        assert_eq!(offset, body.find("- Turn").unwrap());
        assert!(msg.contains("whole number"), "{msg}");
        let (_, msg) = parse("- Time budget: 5 fortnights\n").unwrap_err();
        assert!(msg.contains("unknown unit"), "{msg}");
        assert_eq!(parse("- Turn budget: 7\n").unwrap().max_turns, Some(7));
    }
}
