//! MCP servers' questions (elicitation) asked of the person at the
//! terminal: the server's name and message, then one prompt per property
//! of the requested schema (the MCP elicitation subset: string, number,
//! integer, boolean, single and multiple choice), re-asked when the value
//! does not fit, then accept / decline / cancel. `url` mode shows the page
//! and asks whether the user finished there. End of input cancels.

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tascer::mcp::{ElicitationRequest, ElicitationResponse, Elicitor};

/// Asks on `/dev/tty` (falls back to standard error / input).
pub struct TerminalElicitor;

impl Elicitor for TerminalElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || converse(&request, &mut crate::asker::prompt_line))
                .await
                .unwrap_or_else(|_| {
                    ElicitationResponse::Decline("the elicitation prompt failed".into())
                })
        })
    }
}

/// Shows a text and reads the line typed after it (`None`: end of input).
type Ask<'a> = dyn FnMut(&str) -> Option<String> + 'a;

/// Asks `request` through `ask`.
fn converse(request: &ElicitationRequest, ask: &mut Ask<'_>) -> ElicitationResponse {
    let intro = format!(
        "\n? MCP server '{}' asks: {}\n",
        request.server, request.message
    );
    if let Some(url) = &request.url {
        return url_mode(&intro, url, ask);
    }
    let schema = &request.requested_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut pending = intro;
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let field = Field {
                name,
                schema: property,
                required: required.contains(&name.as_str()),
            };
            loop {
                let text = format!("{pending}{}", field.prompt());
                pending.clear();
                let Some(line) = ask(&text) else {
                    return ElicitationResponse::Cancel;
                };
                match field.parse(line.trim()) {
                    Ok(Some(value)) => {
                        content.insert(name.clone(), value);
                        break;
                    }
                    Ok(None) => break,
                    Err(problem) => pending = format!("  ! {problem}\n"),
                }
            }
        }
    }
    loop {
        let text = format!("{pending}  [a] accept (default)  [d] decline  [c] cancel\n> ");
        let Some(line) = ask(&text) else {
            return ElicitationResponse::Cancel;
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "" | "a" | "accept" => return ElicitationResponse::Accept(content),
            "d" | "decline" => {
                return ElicitationResponse::Decline("the user declined at the terminal".into());
            }
            "c" | "cancel" => return ElicitationResponse::Cancel,
            _ => pending = "  ! type a, d or c\n".into(),
        }
    }
}

/// `url` mode: the user answers on a page.
fn url_mode(intro: &str, url: &str, ask: &mut Ask<'_>) -> ElicitationResponse {
    let text = format!(
        "{intro}  open this page and answer there:\n  {url}\n  \
         [y] I finished there  [n] decline  [c] cancel (default)\n> "
    );
    match ask(&text).map(|l| l.trim().to_ascii_lowercase()).as_deref() {
        Some("y" | "yes") => ElicitationResponse::Accept(Map::new()),
        Some("n" | "no" | "d" | "decline") => {
            ElicitationResponse::Decline("the user declined to open the page".into())
        }
        _ => ElicitationResponse::Cancel,
    }
}

/// One property of the requested schema.
struct Field<'a> {
    name: &'a str,
    schema: &'a Value,
    required: bool,
}

impl Field<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.schema.get(key).and_then(Value::as_str)
    }

    fn kind(&self) -> &str {
        self.str("type").unwrap_or("string")
    }

    /// The choices of an enum (single choice) or of an array's items
    /// (multiple choice): (value, title).
    fn choices(&self) -> Vec<(Value, String)> {
        let holder = if self.kind() == "array" {
            self.schema.get("items").unwrap_or(&Value::Null)
        } else {
            self.schema
        };
        if let Some(values) = holder.get("enum").and_then(Value::as_array) {
            let names = holder.get("enumNames").and_then(Value::as_array);
            return values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let title = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| plain(v), str::to_string);
                    (v.clone(), title)
                })
                .collect();
        }
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|key| holder.get(*key).and_then(Value::as_array))
            .flatten()
            .filter_map(|option| {
                let value = option.get("const")?.clone();
                let title = option
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| plain(&value), str::to_string);
                Some((value, title))
            })
            .collect()
    }

    /// What the user sees before typing the value.
    fn prompt(&self) -> String {
        let mut text = format!("  {}", self.str("title").unwrap_or(self.name));
        if self.str("title").is_some() {
            text.push_str(&format!(" ({})", self.name));
        }
        if let Some(description) = self.str("description") {
            text.push_str(&format!(" — {description}"));
        }
        if self.required {
            text.push_str(" (required)");
        }
        if let Some(default) = self.schema.get("default") {
            text.push_str(&format!(" [default: {}]", plain(default)));
        }
        text.push('\n');
        let choices = self.choices();
        for (i, (value, title)) in choices.iter().enumerate() {
            let value = plain(value);
            if *title == value {
                text.push_str(&format!("    [{}] {title}\n", i + 1));
            } else {
                text.push_str(&format!("    [{}] {title} ({value})\n", i + 1));
            }
        }
        let hint = match (self.kind(), choices.is_empty()) {
            ("array", _) => "numbers or values separated by commas",
            (_, false) => "a number or a value",
            ("boolean", _) => "y or n",
            ("integer", _) => "a whole number",
            ("number", _) => "a number",
            _ => "text",
        };
        format!("{text}  {hint}\n> ")
    }

    /// The value of `line`: `Ok(None)` leaves the field out, `Err` says
    /// why the line does not fit (the field is asked again).
    fn parse(&self, line: &str) -> Result<Option<Value>, String> {
        if line.is_empty() {
            if let Some(default) = self.schema.get("default") {
                return Ok(Some(default.clone()));
            }
            if self.required {
                return Err(format!("{} is required", self.name));
            }
            return Ok(None);
        }
        let choices = self.choices();
        let value = match self.kind() {
            "array" => {
                let picked = line
                    .split(',')
                    .map(|part| choose(&choices, part.trim()))
                    .collect::<Result<Vec<_>, _>>()?;
                self.check_count(picked.len())?;
                Value::Array(picked)
            }
            _ if !choices.is_empty() => choose(&choices, line)?,
            "boolean" => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err("type y or n".into()),
            },
            "integer" => {
                let n: i64 = line
                    .parse()
                    .map_err(|_| format!("{line:?} is not a whole number"))?;
                self.check_range(n as f64)?;
                json!(n)
            }
            "number" => {
                let n: f64 = line
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| format!("{line:?} is not a number"))?;
                self.check_range(n)?;
                json!(n)
            }
            _ => {
                self.check_length(line.chars().count())?;
                Value::String(line.to_string())
            }
        };
        Ok(Some(value))
    }

    fn bound(&self, key: &str) -> Option<f64> {
        self.schema.get(key).and_then(Value::as_f64)
    }

    fn check_range(&self, n: f64) -> Result<(), String> {
        match (self.bound("minimum"), self.bound("maximum")) {
            (Some(min), _) if n < min => Err(format!("at least {min}")),
            (_, Some(max)) if n > max => Err(format!("at most {max}")),
            _ => Ok(()),
        }
    }

    fn check_length(&self, chars: usize) -> Result<(), String> {
        let chars = chars as f64;
        match (self.bound("minLength"), self.bound("maxLength")) {
            (Some(min), _) if chars < min => Err(format!("at least {min} characters")),
            (_, Some(max)) if chars > max => Err(format!("at most {max} characters")),
            _ => Ok(()),
        }
    }

    fn check_count(&self, items: usize) -> Result<(), String> {
        let items = items as f64;
        match (self.bound("minItems"), self.bound("maxItems")) {
            (Some(min), _) if items < min => Err(format!("pick at least {min}")),
            (_, Some(max)) if items > max => Err(format!("pick at most {max}")),
            _ => Ok(()),
        }
    }
}

/// The choice `typed` names: its number, value or title.
fn choose(choices: &[(Value, String)], typed: &str) -> Result<Value, String> {
    if let Ok(n) = typed.parse::<usize>()
        && let Some((value, _)) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(value.clone());
    }
    choices
        .iter()
        .find(|(value, title)| plain(value) == typed || title.eq_ignore_ascii_case(typed))
        .map(|(value, _)| value.clone())
        .ok_or_else(|| format!("{typed:?} is not one of the choices 1–{}", choices.len()))
}

/// A value as the user would type it (strings without quotes).
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Answers `lines` in turn and keeps what was shown.
    fn script(lines: &[&str]) -> impl FnMut(&str) -> Option<String> {
        let mut lines: Vec<String> = lines.iter().rev().map(|l| l.to_string()).collect();
        move |_text: &str| lines.pop()
    }

    fn form(schema: Value) -> ElicitationRequest {
        ElicitationRequest {
            server: "conf".into(),
            message: "Who are you?".into(),
            requested_schema: schema,
            url: None,
            elicitation_id: None,
        }
    }

    #[test]
    fn every_kind_of_field_is_read_and_wrong_values_are_asked_again() {
        let request = form(json!({"type": "object", "properties": {
            "a_name": {"type": "string", "title": "Name", "minLength": 2},
            "b_age": {"type": "integer", "minimum": 0},
            "c_score": {"type": "number", "default": 9.5},
            "d_ok": {"type": "boolean"},
            "e_pick": {"type": "string", "oneOf": [
                {"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]},
            "f_many": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
            "g_note": {"type": "string"}
        }, "required": ["a_name", "b_age"]}));
        let mut shown = Vec::new();
        let mut lines = vec![
            "", "A", "Ann", "old", "-1", "41", "", "maybe", "y", "3", "second", "1, z", "", "a",
        ]
        .into_iter()
        .rev()
        .map(String::from)
        .collect::<Vec<_>>();
        let answer = converse(&request, &mut |text: &str| {
            shown.push(text.to_string());
            lines.pop()
        });
        let ElicitationResponse::Accept(content) = answer else {
            panic!("{answer:?}");
        };
        assert_eq!(
            Value::Object(content),
            json!({"a_name": "Ann", "b_age": 41, "c_score": 9.5, "d_ok": true,
                   "e_pick": "v2", "f_many": ["x", "z"]})
        );
        let shown = shown.concat();
        assert!(
            shown.contains("MCP server 'conf' asks: Who are you?"),
            "{shown}"
        );
        assert!(shown.contains("Name (a_name) (required)"), "{shown}");
        assert!(shown.contains("a_name is required"), "{shown}");
        assert!(shown.contains("at least 2 characters"), "{shown}");
        assert!(shown.contains("\"old\" is not a whole number"), "{shown}");
        assert!(shown.contains("[default: 9.5]"), "{shown}");
        assert!(shown.contains("[2] Second (v2)"), "{shown}");
        assert!(
            shown.contains("\"3\" is not one of the choices 1–2"),
            "{shown}"
        );
    }

    #[test]
    fn decline_cancel_end_of_input_and_url_mode() {
        let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        let mut ask = script(&["hi", "d"]);
        assert!(matches!(
            converse(&form(schema.clone()), &mut ask),
            ElicitationResponse::Decline(_)
        ));
        let mut ask = script(&["hi", "c"]);
        assert_eq!(
            converse(&form(schema.clone()), &mut ask),
            ElicitationResponse::Cancel
        );
        let mut ask = script(&[]);
        assert_eq!(
            converse(&form(schema), &mut ask),
            ElicitationResponse::Cancel
        );
        let url = ElicitationRequest {
            url: Some("https://example.com/auth".into()),
            requested_schema: Value::Null,
            ..form(Value::Null)
        };
        let mut shown = String::new();
        let answer = converse(&url, &mut |text: &str| {
            shown.push_str(text);
            Some("y".into())
        });
        assert_eq!(answer, ElicitationResponse::Accept(Map::new()));
        assert!(shown.contains("https://example.com/auth"), "{shown}");
        let mut ask = script(&["n"]);
        assert!(matches!(
            converse(&url, &mut ask),
            ElicitationResponse::Decline(_)
        ));
    }
}
