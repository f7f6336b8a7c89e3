//! The divergence report: each replayed tool call against its record, in
//! the order the model asked for them — the input, the permission
//! decision, how the call ended, its result and the files it changed.

use serde::Serialize;
use serde_json::Value;
use tascer_ledger::ToolRecord;

use super::paths::PathMap;
use crate::policy_check::RecordedCall;

/// Longest excerpt of a differing text in a divergence, in characters.
const EXCERPT_CHARS: usize = 120;

/// What differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aspect {
    /// The tool's input (after the path mapping).
    Input,
    /// The permission decision (allow, ask, deny, and who decided).
    Decision,
    /// How the call ended (validated, failed, blocked).
    Status,
    /// The tool's result text.
    Result,
    /// The files the call changed (their diff or content evidence).
    Files,
    /// The recorded call was not made in the replay.
    Missing,
}

impl Aspect {
    fn says(self) -> &'static str {
        match self {
            Aspect::Input => "input differs",
            Aspect::Decision => "decision differs",
            Aspect::Status => "outcome differs",
            Aspect::Result => "result differs",
            Aspect::Files => "files changed differ",
            Aspect::Missing => "not made in the replay",
        }
    }
}

/// One difference between a replayed call and its record.
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    /// The call's number in the session (1 = the first tool call).
    pub call: usize,
    /// The tool.
    pub tool: String,
    /// What it acted on (a path, a command, a pattern).
    pub target: String,
    /// What differs.
    pub aspect: Aspect,
    /// The recorded side (an excerpt).
    pub recorded: String,
    /// The replayed side (an excerpt).
    pub replayed: String,
}

impl Divergence {
    /// One line: `tool call #7 Read src/a.txt: result differs: recorded "…" / replayed "…"`.
    pub fn line(&self) -> String {
        format!(
            "tool call #{} {} {}: {}: recorded {} / replayed {}",
            self.call,
            self.tool,
            self.target,
            self.aspect.says(),
            quoted(&self.recorded),
            quoted(&self.replayed)
        )
    }
}

/// How closely a replayed result matches its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exactness {
    /// Byte for byte.
    Exact,
    /// The same once the scratch tree's directory is written as the
    /// original's.
    PathMapped,
    /// The same lines in another order (Glob lists files by modification
    /// time, which a fresh checkout does not keep).
    Reordered,
    /// Different (a divergence).
    Differs,
    /// No result on one side (not run, or not replayed).
    Absent,
}

/// One compared call.
#[derive(Debug, Clone, Serialize)]
pub struct CallMatch {
    /// The call's number.
    pub call: usize,
    /// The model's `tool_use` id (the same in the record and the replay).
    pub tool_use_id: String,
    /// The tool.
    pub tool: String,
    /// What it acted on.
    pub target: String,
    /// How its result matches.
    pub result: Exactness,
    /// Whether anything about it diverged.
    pub diverged: bool,
}

/// The texts behind evidence digests of one session.
pub(crate) trait Texts {
    /// The text of `digest` in `session`, if it is kept.
    fn text(&self, session: &str, digest: &str) -> Option<String>;
}

/// Compares one call; `texts` reads evidence of the two sessions.
pub(crate) struct CallPair<'a> {
    pub call: usize,
    pub recorded_session: &'a str,
    pub replayed_session: &'a str,
    pub recorded: &'a ToolRecord,
    pub replayed: Option<&'a ToolRecord>,
    pub paths: &'a PathMap,
}

impl CallPair<'_> {
    /// The call's match and its divergences.
    pub fn compare(&self, texts: &dyn Texts) -> (CallMatch, Vec<Divergence>) {
        let target = target(&self.recorded.input);
        let diverge = |aspect, recorded: String, replayed: String| Divergence {
            call: self.call,
            tool: self.recorded.tool.clone(),
            target: target.clone(),
            aspect,
            recorded,
            replayed,
        };
        let mut found = Vec::new();
        let Some(replayed) = self.replayed else {
            found.push(diverge(
                Aspect::Missing,
                status(self.recorded),
                "no call".into(),
            ));
            return (self.matched(&target, Exactness::Absent, true), found);
        };
        let input = self.paths.to_scratch(&self.recorded.input);
        if input != replayed.input || self.recorded.tool != replayed.tool {
            found.push(diverge(
                Aspect::Input,
                format!("{} {}", self.recorded.tool, self.recorded.input),
                format!("{} {}", replayed.tool, replayed.input),
            ));
        }
        let (before, after) = (decision(self.recorded), decision(replayed));
        if before.0 != after.0 {
            found.push(diverge(Aspect::Decision, before.1, after.1));
        } else if self.recorded.status != replayed.status {
            found.push(diverge(
                Aspect::Status,
                status(self.recorded),
                status(replayed),
            ));
        }
        let result = self.result(texts, replayed);
        if let (Exactness::Differs, Some((a, b))) = &result {
            found.push(diverge(Aspect::Result, a.clone(), b.clone()));
        }
        if let Some((a, b)) = self.files(texts, replayed) {
            found.push(diverge(Aspect::Files, a, b));
        }
        let diverged = !found.is_empty();
        (self.matched(&target, result.0, diverged), found)
    }

    fn matched(&self, target: &str, result: Exactness, diverged: bool) -> CallMatch {
        CallMatch {
            call: self.call,
            tool_use_id: self.recorded.tool_use_id.clone(),
            tool: self.recorded.tool.clone(),
            target: target.to_string(),
            result,
            diverged,
        }
    }

    /// How the result matches, with the first differing lines when it
    /// differs.
    fn result(
        &self,
        texts: &dyn Texts,
        replayed: &ToolRecord,
    ) -> (Exactness, Option<(String, String)>) {
        let (Some(a), Some(b)) = (&self.recorded.output_digest, &replayed.output_digest) else {
            return match (&self.recorded.output_digest, &replayed.output_digest) {
                (None, None) => (Exactness::Absent, None),
                _ => (
                    Exactness::Differs,
                    Some((output_or_none(self.recorded), output_or_none(replayed))),
                ),
            };
        };
        if a == b {
            return (Exactness::Exact, None);
        }
        let before = texts
            .text(self.recorded_session, a)
            .unwrap_or_else(|| inline(self.recorded));
        let after = self.paths.to_recorded(
            &texts
                .text(self.replayed_session, b)
                .unwrap_or_else(|| inline(replayed)),
        );
        if before == after {
            return (Exactness::PathMapped, None);
        }
        if sorted_lines(&before) == sorted_lines(&after) {
            return (Exactness::Reordered, None);
        }
        (Exactness::Differs, Some(first_difference(&before, &after)))
    }

    /// The files' evidence (`diff`, `file`) when it differs.
    fn files(&self, texts: &dyn Texts, replayed: &ToolRecord) -> Option<(String, String)> {
        for kind in ["diff", "file"] {
            let empty = Vec::new();
            let a = self.recorded.evidence_by_kind.get(kind).unwrap_or(&empty);
            let b = replayed.evidence_by_kind.get(kind).unwrap_or(&empty);
            if a == b {
                continue;
            }
            let read = |session: &str, digests: &[String], map: bool| -> String {
                let joined: Vec<String> = digests
                    .iter()
                    .map(|d| texts.text(session, d).unwrap_or_else(|| d.clone()))
                    .collect();
                let text = joined.join("\n");
                if map {
                    self.paths.to_recorded(&text)
                } else {
                    text
                }
            };
            let before = read(self.recorded_session, a, false);
            let after = read(self.replayed_session, b, true);
            if before != after {
                return Some(first_difference(&before, &after));
            }
        }
        None
    }
}

/// `(comparable, shown)`: the decision's behavior and who decided, and
/// the line that says so.
fn decision(record: &ToolRecord) -> ((Option<&'static str>, String), String) {
    let call = RecordedCall::from_record("", record, std::path::Path::new(""));
    let behavior = call.behavior.map(|b| b.as_str());
    let kind = call.decider_kind().to_string();
    let shown = match (behavior, kind.is_empty()) {
        (Some(b), false) => format!("{b} ({kind}): {}", call.reason),
        (Some(b), true) => format!("{b}: {}", call.reason),
        (None, _) => "no decision".into(),
    };
    ((behavior, kind), shown)
}

/// The call's status as a word.
fn status(record: &ToolRecord) -> String {
    record.status.as_str().to_string()
}

/// The inline output as text.
fn inline(record: &ToolRecord) -> String {
    match &record.output {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn output_or_none(record: &ToolRecord) -> String {
    match record.output_digest {
        Some(_) => inline(record),
        None => "no result".into(),
    }
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

/// The first line where `a` and `b` differ, from each (cut short).
fn first_difference(a: &str, b: &str) -> (String, String) {
    let mut la = a.lines();
    let mut lb = b.lines();
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return (cut(x.unwrap_or("(end)")), cut(y.unwrap_or("(end)")));
            }
        }
    }
}

/// What a call acts on: a path, command, pattern or URL, else its input.
pub(crate) fn target(input: &Value) -> String {
    let named = [
        "file_path",
        "notebook_path",
        "command",
        "pattern",
        "path",
        "url",
    ]
    .iter()
    .find_map(|k| input.get(*k).and_then(Value::as_str));
    cut(named
        .map_or_else(|| input.to_string(), String::from)
        .as_str())
}

/// `text` on one line, cut to [`EXCERPT_CHARS`] with `…`.
fn cut(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    match line.char_indices().nth(EXCERPT_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// `text` in double quotes, as JSON writes it.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_lines_are_shown() {
        assert_eq!(
            first_difference("a\nb\nc", "a\nB\nc"),
            ("b".to_string(), "B".to_string())
        );
        assert_eq!(first_difference("a", "a\nb"), ("(end)".into(), "b".into()));
    }

    #[test]
    fn a_divergence_reads_as_one_line() {
        let d = Divergence {
            call: 7,
            tool: "Read".into(),
            target: "src/a.txt".into(),
            aspect: Aspect::Result,
            recorded: "1\tfoo".into(),
            replayed: "1\tbar".into(),
        };
        assert_eq!(
            d.line(),
            r#"tool call #7 Read src/a.txt: result differs: recorded "1\tfoo" / replayed "1\tbar""#
        );
    }
}
