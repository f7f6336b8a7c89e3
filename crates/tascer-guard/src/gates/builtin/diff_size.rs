//! `diff_size_limit`: the call changed at most N lines.
//!
//! The diff comes from the raw output: `structuredPatch` (hunks with
//! `lines`), a unified `diff` string, or `originalFile` against the new
//! content (`content` in the raw output or input, else the file on disk),
//! diffed with `similar`.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "diff_size_limit";

/// Options of `diff_size_limit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiffSizeOptions {
    /// Most changed (added + removed) lines allowed.
    pub max_changed_lines: usize,
}

impl Default for DiffSizeOptions {
    fn default() -> Self {
        DiffSizeOptions {
            max_changed_lines: 500,
        }
    }
}

pub(crate) struct DiffSizeLimit {
    options: DiffSizeOptions,
}

impl DiffSizeLimit {
    pub(crate) fn new(options: DiffSizeOptions) -> Self {
        DiffSizeLimit { options }
    }
}

fn is_change(line: &str) -> bool {
    (line.starts_with('+') && !line.starts_with("+++"))
        || (line.starts_with('-') && !line.starts_with("---"))
}

fn from_structured_patch(patch: &Value) -> Option<usize> {
    let hunks = patch.as_array()?;
    Some(
        hunks
            .iter()
            .filter_map(|h| h.get("lines").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .filter(|l| is_change(l))
            .count(),
    )
}

/// Changed lines between `old` and `new`.
pub(crate) fn changed_lines(old: &str, new: &str) -> usize {
    TextDiff::from_lines(old, new)
        .iter_all_changes()
        .filter(|c| c.tag() != ChangeTag::Equal)
        .count()
}

async fn count(ctx: &GateContext) -> Option<(usize, &'static str)> {
    let raw = ctx.raw()?;
    if let Some(n) = raw.get("structuredPatch").and_then(from_structured_patch) {
        return Some((n, "structuredPatch"));
    }
    if let Some(d) = raw.get("diff").and_then(Value::as_str) {
        return Some((d.lines().filter(|l| is_change(l)).count(), "diff"));
    }
    let original = raw.get("originalFile").and_then(Value::as_str)?;
    let new = match raw
        .get("content")
        .or_else(|| ctx.input.get("content"))
        .and_then(Value::as_str)
    {
        Some(c) => c.to_string(),
        None => tokio::fs::read_to_string(ctx.target_file()?).await.ok()?,
    };
    Some((changed_lines(original, &new), "originalFile"))
}

impl Gate for DiffSizeLimit {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let max = self.options.max_changed_lines;
            match count(ctx).await {
                None => GateResult::pass(NAME, "no diff available; nothing to limit"),
                Some((n, source)) => {
                    let finding = json!({ "changed_lines": n, "max": max, "source": source });
                    if n <= max {
                        GateResult::pass(NAME, format!("{n} changed line(s) (limit {max})"))
                            .with_findings(vec![finding])
                    } else {
                        GateResult::fail(
                            NAME,
                            format!("{n} changed line(s) exceed the limit of {max}"),
                        )
                        .with_findings(vec![finding])
                    }
                }
            }
        })
    }
}
