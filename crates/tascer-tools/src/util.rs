//! Helpers shared by the tools.

use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tascer_core::{ToolContext, ToolOutput};

use crate::error::ToolError;

/// Parses a tool's input, reporting bad input as `"<Tool> input is invalid: …"`.
pub(crate) fn parse_input<T: DeserializeOwned>(
    tool: &'static str,
    input: Value,
) -> Result<T, ToolError> {
    serde_json::from_value(input).map_err(|e| ToolError::InvalidInput {
        tool,
        message: e.to_string(),
    })
}

/// Runs a tool body, turning its error into an error output.
pub(crate) fn finish(result: Result<ToolOutput, ToolError>) -> ToolOutput {
    result.unwrap_or_else(ToolOutput::from)
}

/// The JSON Schema of a tool's input type, in the plain draft-07 form that
/// tool definitions use: no `$schema`/`title`/top-level description, optional
/// fields as their plain type rather than `T | null`, and subschemas inlined.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value: Value = generator.into_root_schema_for::<T>().into();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
    }
    strip_nulls(&mut value);
    value
}

/// Rewrites `"type": [X, "null"]` to `"type": X`, `anyOf: [S, {null}]` to
/// `S`, drops `null` from `enum` lists and integer `format`s, recursively.
fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            if let Some(Value::Array(types)) = obj.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    obj.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = obj.get("anyOf") {
                let non_null: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
                    .cloned()
                    .collect();
                if non_null.len() == 1 && any.len() == 2 {
                    obj.remove("anyOf");
                    if let Some(Value::Object(inner)) = non_null.into_iter().next() {
                        for (k, v) in inner {
                            obj.entry(k).or_insert(v);
                        }
                    }
                }
            }
            // Documented unit enum variants come out as `oneOf` consts;
            // tool schemas use a plain string `enum`.
            if let Some(Value::Array(variants)) = obj.get("oneOf") {
                let consts: Option<Vec<Value>> = variants
                    .iter()
                    .map(|v| {
                        (v.get("type").and_then(Value::as_str) == Some("string"))
                            .then(|| v.get("const").cloned())
                            .flatten()
                    })
                    .collect();
                if let Some(consts) = consts.filter(|c| !c.is_empty()) {
                    obj.remove("oneOf");
                    obj.insert("type".into(), Value::String("string".into()));
                    obj.insert("enum".into(), Value::Array(consts));
                }
            }
            if let Some(Value::Array(values)) = obj.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            // Integer formats such as "uint64" are not standard JSON Schema.
            if obj.get("type").and_then(Value::as_str) == Some("integer") {
                obj.remove("format");
            }
            if obj.get("default") == Some(&Value::Null) {
                obj.remove("default");
            }
            for v in obj.values_mut() {
                strip_nulls(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// Resolves `path` against the context's working directory and removes `.`
/// and `..` components lexically.
pub(crate) fn resolve_path(ctx: &ToolContext, path: &str) -> PathBuf {
    normalize(&ctx.resolve(path))
}

/// Removes `.` and `..` components without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(comp);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The modification time of a file, if it can be read.
pub(crate) fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Cuts `text` to at most `max` characters. Returns the kept text and
/// whether anything was cut.
pub(crate) fn truncate_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((idx, _)) => (&text[..idx], true),
        None => (text, false),
    }
}

/// Runs blocking work off the async runtime.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => Err(ToolError::msg(format!("internal error: {e}"))),
    }
}

/// `"1 file"` / `"2 files"`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
