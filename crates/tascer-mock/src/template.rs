//! Placeholders a scripted answer fills from the request it answers, so a
//! scenario can act on what the model was told: `{{system:MARKER}}` is the
//! rest of the system prompt's first line containing `MARKER`, trimmed
//! (`{{system:Working directory:}}` → `/tmp/ws`). A marker the system
//! prompt lacks becomes `(MARKER is not in the system prompt)`, so a test
//! sees what went wrong.

use serde_json::Value;

const OPEN: &str = "{{system:";
const CLOSE: &str = "}}";

/// `text` with every `{{system:MARKER}}` filled from `system`.
pub(crate) fn fill_text(text: &str, system: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find(CLOSE) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&lookup(system, &after[..end]));
        rest = &after[end + CLOSE.len()..];
    }
    out.push_str(rest);
    out
}

/// `value` with the placeholders of every string in it filled.
pub(crate) fn fill_value(value: &Value, system: &str) -> Value {
    match value {
        Value::String(s) => Value::String(fill_text(s, system)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill_value(v, system)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_value(v, system)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The rest of the first line of `system` that contains `marker`.
fn lookup(system: &str, marker: &str) -> String {
    system
        .lines()
        .find_map(|line| {
            line.split_once(marker)
                .map(|(_, rest)| rest.trim().to_string())
        })
        .unwrap_or_else(|| format!("({marker} is not in the system prompt)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_from_the_line_holding_the_marker() {
        let system = "Be brief.\n<env>\nWorking directory: /tmp/ws \nPlatform: linux\n</env>";
        assert_eq!(
            fill_text("{{system:Working directory:}}/notes.txt", system),
            "/tmp/ws/notes.txt"
        );
        assert_eq!(
            fill_value(&json!({"a": ["on {{system:Platform:}}"], "n": 1}), system),
            json!({"a": ["on linux"], "n": 1})
        );
        assert_eq!(
            fill_text("{{system:Nope:}} x {{unclosed", system),
            "(Nope: is not in the system prompt) x {{unclosed"
        );
        assert_eq!(fill_text("plain", system), "plain");
    }
}
