//! Structured output: the final answer must be a JSON value valid against
//! the session's JSON Schema (`--json-schema`, the SDK's `output_format`).
//!
//! The schema is shown to the model in the system prompt. When the model
//! finishes, its final text is parsed and validated; an invalid answer is
//! sent back with the validator's errors, a bounded number of times.

use serde_json::Value;

use crate::error::Error;
use crate::options::OutputFormat;

/// Fix requests per turn when the options set none.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// At most this many validation errors are shown to the model.
const MAX_ERRORS_SHOWN: usize = 10;

/// A compiled output schema.
pub(crate) struct StructuredOutput {
    validator: jsonschema::Validator,
    schema: Value,
    /// Fix requests allowed per turn.
    pub max_retries: u32,
}

impl StructuredOutput {
    /// Compiles the schema; an invalid schema is an options error.
    pub fn new(format: &OutputFormat, max_retries: Option<u32>) -> Result<Self, Error> {
        let OutputFormat::JsonSchema { schema } = format;
        let validator = jsonschema::validator_for(schema).map_err(|e| {
            Error::InvalidOptions(format!(
                "output_format: the JSON Schema is invalid at {}: {e}",
                display_path(&e.schema_path().to_string())
            ))
        })?;
        Ok(StructuredOutput {
            validator,
            schema: schema.clone(),
            max_retries: max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
        })
    }

    /// The system prompt text that asks for the answer's shape.
    pub fn prompt_section(&self) -> String {
        format!(
            "# Output format\n\
             When the task is done, your final message must be only a JSON value (no other \
             text, no code fences) that is valid against this JSON Schema:\n{}",
            serde_json::to_string_pretty(&self.schema).unwrap_or_else(|_| self.schema.to_string())
        )
    }

    /// The answer as JSON if `text` is valid against the schema, else what
    /// is wrong with it.
    pub fn check(&self, text: &str) -> Result<Value, String> {
        let json = strip_fences(text);
        if json.is_empty() {
            return Err("the final message has no text; it must be a JSON value".into());
        }
        let value: Value = serde_json::from_str(json)
            .map_err(|e| format!("the final message is not valid JSON: {e}"))?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|e| format!("at {}: {e}", display_path(&e.instance_path().to_string())))
            .collect();
        if errors.is_empty() {
            return Ok(value);
        }
        let shown = errors.len().min(MAX_ERRORS_SHOWN);
        let mut problem = format!(
            "the answer does not match the JSON Schema ({} error{}): {}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors[..shown].join("; ")
        );
        if errors.len() > shown {
            problem.push_str("; …");
        }
        Err(problem)
    }

    /// The message that asks the model to fix its answer.
    pub fn fix_request(&self, problem: &str, attempt: u32) -> String {
        format!(
            "Your final answer is not valid structured output: {problem}. Reply again with only \
             the corrected JSON value, valid against the JSON Schema in the system prompt \
             (attempt {attempt} of {}).",
            self.max_retries
        )
    }
}

/// A JSON pointer for people: the document root is `/`.
fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        "/".to_string()
    } else {
        pointer.to_string()
    }
}

/// The text without surrounding whitespace and a Markdown code fence
/// (```` ```json … ``` ````), which models add even when told not to.
fn strip_fences(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // Drop the info string (`json`) on the opening line.
    match body.split_once('\n') {
        Some((_, inner)) => inner.trim(),
        None => body.trim(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output() -> StructuredOutput {
        StructuredOutput::new(
            &OutputFormat::JsonSchema {
                schema: json!({
                    "type": "object",
                    "properties": {"count": {"type": "integer", "minimum": 0}},
                    "required": ["count"],
                    "additionalProperties": false
                }),
            },
            None,
        )
        .unwrap()
    }

    #[test]
    fn a_valid_answer_is_returned_as_json_even_inside_a_fence() {
        let out = output();
        assert_eq!(out.check(r#"{"count": 2}"#).unwrap(), json!({"count": 2}));
        assert_eq!(
            out.check("```json\n{\"count\": 3}\n```").unwrap(),
            json!({"count": 3})
        );
    }

    #[test]
    fn invalid_answers_say_what_is_wrong_and_where() {
        let out = output();
        let err = out.check(r#"{"count": -1, "extra": true}"#).unwrap_err();
        assert!(err.contains("2 errors"), "{err}");
        assert!(err.contains("/count"), "{err}");
        let err = out.check("three files").unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
        let err = out.check("  ").unwrap_err();
        assert!(err.contains("no text"), "{err}");
    }

    #[test]
    fn an_invalid_schema_is_an_options_error() {
        let err = StructuredOutput::new(
            &OutputFormat::JsonSchema {
                schema: json!({"type": "no-such-type"}),
            },
            None,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("JSON Schema is invalid"), "{err}");
    }
}
