//! `syntax_valid`: each changed file still parses, by extension.
//!
//! Rust (`syn`), JSON (`serde_json`), TOML (`toml`), YAML
//! (`serde_yaml_ng`), Python, JavaScript/JSX, TypeScript and TSX
//! (tree-sitter). Other extensions are skipped and say so.

use std::path::Path;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::tree_syntax;
use crate::gates::context::{GateContext, Phase};
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "syntax_valid";

pub(crate) struct SyntaxValid;

/// Parses `text` as the language of `path`'s extension: `None` when the
/// extension is not supported, else the parse result.
fn parse(path: &Path, text: &str) -> Option<Result<(), String>> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let r = match ext.as_str() {
        "rs" => syn::parse_file(text)
            .map(drop)
            .map_err(|e| format!("Rust: {e}")),
        "json" => serde_json::from_str::<Value>(text)
            .map(drop)
            .map_err(|e| e.to_string()),
        "toml" => toml::from_str::<toml::Table>(text)
            .map(drop)
            .map_err(|e| e.to_string()),
        "yaml" | "yml" => yaml_docs(text),
        other => {
            let (language, label) = tree_syntax::language(other)?;
            tree_syntax::check(&language, label, text)
        }
    };
    Some(r)
}

/// Files up to this size are parsed on the calling task: handing them to
/// the blocking pool would cost more than parsing them.
const PARSE_IN_PLACE_LIMIT: usize = 2048;

/// [`parse`] on tokio's blocking pool for all but small files: parsing a
/// few hundred lines takes about half a millisecond, which must not hold
/// an async worker (the model stream, other calls, MCP servers).
async fn parse_off_runtime(path: &Path, text: String) -> Option<Result<(), String>> {
    if text.len() <= PARSE_IN_PLACE_LIMIT {
        return parse(path, &text);
    }
    let owned = path.to_path_buf();
    match tokio::task::spawn_blocking(move || parse(&owned, &text)).await {
        Ok(result) => result,
        Err(err) => Some(Err(format!("the parser failed: {err}"))),
    }
}

fn yaml_docs(text: &str) -> Result<(), String> {
    use serde::Deserialize;
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        serde_yaml_ng::Value::deserialize(doc).map_err(|e| e.to_string())?;
    }
    Ok(())
}

async fn content_of(ctx: &GateContext, path: &Path) -> Result<String, String> {
    if ctx.phase == Phase::Pre
        && ctx.tool_name == "Write"
        && let Some(c) = ctx.input.get("content").and_then(Value::as_str)
    {
        return Ok(c.to_string());
    }
    tokio::fs::read_to_string(path)
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

impl Gate for SyntaxValid {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let mut errors = Vec::new();
            let mut checked = Vec::new();
            let mut skipped = Vec::new();
            for path in &ctx.changed_files {
                let shown = ctx.relative(path).display().to_string();
                let text = match content_of(ctx, path).await {
                    Ok(t) => t,
                    Err(e) => {
                        errors.push(json!({ "path": shown, "error": e }));
                        continue;
                    }
                };
                match parse_off_runtime(path, text).await {
                    None => skipped.push(shown),
                    Some(Ok(())) => checked.push(shown),
                    Some(Err(e)) => errors.push(json!({ "path": shown, "error": e })),
                }
            }
            if errors.is_empty() {
                let mut msg = if checked.is_empty() {
                    "no file with a supported syntax changed".to_string()
                } else {
                    format!("parses: {}", checked.join(", "))
                };
                if !skipped.is_empty() {
                    msg.push_str(&format!("; unsupported, skipped: {}", skipped.join(", ")));
                }
                GateResult::pass(NAME, msg)
            } else {
                let lines: Vec<String> = errors
                    .iter()
                    .map(|e| {
                        format!(
                            "{}: {}",
                            e["path"].as_str().unwrap_or_default(),
                            e["error"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                GateResult::fail(NAME, format!("syntax error: {}", lines.join("; ")))
                    .with_findings(errors)
            }
        })
    }
}
