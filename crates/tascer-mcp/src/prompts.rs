//! MCP prompts as slash commands: `/mcp__<server>__<prompt> args`.
//!
//! A server that declares the `prompts` capability has its prompts listed
//! on connect (and again after `notifications/prompts/list_changed`).
//! [`McpManager::run_prompt_command`] maps the words after the command to
//! the prompt's declared arguments in order, calls `prompts/get` and turns
//! the returned messages into one prompt text.

use serde_json::{Map, Value};

use crate::error::McpError;
use crate::manager::McpManager;
use crate::names::sanitize_name;

/// One prompt of one server, as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct McpPrompt {
    /// The server's name (its config key).
    pub server: String,
    /// The server's own prompt name.
    pub name: String,
    /// The slash command without its `/`: `mcp__<server>__<prompt>`.
    pub command: String,
    /// Description (empty when the server gave none).
    pub description: String,
    /// Declared arguments, in order.
    pub arguments: Vec<McpPromptArgument>,
}

/// A declared argument of an [`McpPrompt`].
#[derive(Debug, Clone, PartialEq)]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// Description (empty when the server gave none).
    pub description: String,
    /// Whether the prompt needs it.
    pub required: bool,
}

impl McpPrompt {
    /// Reads a wire-shaped `prompts/list` entry; `None` without a name.
    pub fn from_wire(server: &str, entry: &Value) -> Option<McpPrompt> {
        let name = entry.get("name")?.as_str()?.to_owned();
        let text = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let arguments = entry
            .get("arguments")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .filter_map(|a| {
                        Some(McpPromptArgument {
                            name: a.get("name")?.as_str()?.to_owned(),
                            description: text(a, "description"),
                            required: a.get("required").and_then(Value::as_bool) == Some(true),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(McpPrompt {
            server: server.to_owned(),
            command: prompt_command(server, &name),
            description: text(entry, "description"),
            name,
            arguments,
        })
    }

    /// `arg1, arg2?` (optional ones marked with `?`), or `none`.
    pub fn argument_list(&self) -> String {
        if self.arguments.is_empty() {
            return "none".into();
        }
        self.arguments
            .iter()
            .map(|a| {
                if a.required {
                    a.name.clone()
                } else {
                    format!("{}?", a.name)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Maps `words` to the declared arguments in order. Fewer words than
    /// arguments leave the rest unset (an error when one is required);
    /// more words than arguments is an error.
    pub fn map_arguments(&self, words: Vec<String>) -> Result<Map<String, Value>, McpError> {
        let problem = |message: String| McpError::PromptArguments {
            command: self.command.clone(),
            message,
        };
        if words.len() > self.arguments.len() {
            return Err(problem(format!(
                "takes {} argument(s) ({}) but got {}; quote a value that has spaces",
                self.arguments.len(),
                self.argument_list(),
                words.len()
            )));
        }
        let mut out = Map::new();
        let mut words = words.into_iter();
        for arg in &self.arguments {
            match words.next() {
                Some(word) => {
                    out.insert(arg.name.clone(), Value::String(word));
                }
                None if arg.required => {
                    return Err(problem(format!(
                        "missing required argument '{}' (arguments: {})",
                        arg.name,
                        self.argument_list()
                    )));
                }
                None => {}
            }
        }
        Ok(out)
    }
}

/// The slash command (without `/`) of prompt `prompt` of `server`.
pub fn prompt_command(server: &str, prompt: &str) -> String {
    format!("mcp__{}__{}", sanitize_name(server), sanitize_name(prompt))
}

/// Splits a command's arguments into words, shell style: quotes keep
/// spaces, a backslash escapes. `None` for unbalanced quotes.
pub fn split_arguments(args: &str) -> Option<Vec<String>> {
    shlex::split(args)
}

/// The messages of a `prompts/get` result as one prompt text: text as it
/// is, an embedded resource's text under its URI, an image or audio as
/// `[image: <mime>]`, assistant messages marked `[assistant]`; messages
/// are separated by a blank line.
pub fn messages_to_text(result: &Value) -> String {
    let messages = result
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut parts = Vec::new();
    for message in messages {
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(block) => vec![block],
            None => Vec::new(),
        };
        let text = blocks
            .into_iter()
            .map(block_to_text)
            .collect::<Vec<_>>()
            .join("\n");
        if message.get("role").and_then(Value::as_str) == Some("assistant") {
            parts.push(format!("[assistant]\n{text}"));
        } else {
            parts.push(text);
        }
    }
    parts.join("\n\n")
}

fn block_to_text(block: &Value) -> String {
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let mime = || field(block, "mimeType").unwrap_or_else(|| "unknown type".into());
    match block.get("type").and_then(Value::as_str) {
        Some("text") => field(block, "text").unwrap_or_default(),
        Some("image") => format!("[image: {}]", mime()),
        Some("audio") => format!("[audio: {}]", mime()),
        Some("resource") => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = field(resource, "uri").unwrap_or_default();
            match field(resource, "text") {
                Some(text) => format!("[resource: {uri}]\n{text}"),
                None => {
                    let mime = field(resource, "mimeType").unwrap_or_else(|| "binary".into());
                    format!("[resource: {uri} ({mime}, not text)]")
                }
            }
        }
        Some("resource_link") => {
            format!(
                "[resource link: {}]",
                field(block, "uri").unwrap_or_default()
            )
        }
        Some(other) => format!("[{other} content]"),
        None => String::new(),
    }
}

impl McpManager {
    /// Every server's prompts, re-listing servers that have not listed
    /// theirs on the current connection or sent `prompts/list_changed`.
    pub async fn prompts(&self) -> Vec<McpPrompt> {
        futures::future::join_all(
            self.servers()
                .all()
                .iter()
                .map(|s| s.refresh_prompts_if_changed()),
        )
        .await;
        self.prompts_snapshot()
    }

    /// Like [`Self::prompts`] without re-listing.
    pub fn prompts_snapshot(&self) -> Vec<McpPrompt> {
        self.servers()
            .all()
            .iter()
            .flat_map(|s| {
                s.prompts()
                    .iter()
                    .filter_map(|p| McpPrompt::from_wire(s.name(), p))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The server whose prompts' commands start like `command`
    /// (`mcp__<server>__…`), if any.
    pub fn prompt_server(&self, command: &str) -> Option<String> {
        self.servers()
            .all()
            .iter()
            .map(|s| s.name().to_owned())
            .filter(|name| command.starts_with(&format!("mcp__{}__", sanitize_name(name))))
            .max_by_key(String::len)
    }

    /// `prompts/get` of `prompt` of `server` with `args`; the messages as
    /// one prompt text ([`messages_to_text`]).
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        args: Map<String, Value>,
    ) -> Result<String, McpError> {
        let entry = self
            .servers()
            .find(server)
            .ok_or_else(|| McpError::UnknownServer(server.into()))?;
        let result = entry.get_prompt(prompt, args).await?;
        Ok(messages_to_text(&result))
    }

    /// Runs `/<command> <args>`: finds the prompt, maps the words of
    /// `args` to its arguments and returns the prompt text. An unknown
    /// prompt's error lists the server's prompts.
    pub async fn run_prompt_command(&self, command: &str, args: &str) -> Result<String, McpError> {
        let prompts = self.prompts().await;
        let Some(prompt) = prompts.iter().find(|p| p.command == command) else {
            let server = self
                .prompt_server(command)
                .ok_or_else(|| McpError::UnknownServer(command.into()))?;
            let available: Vec<String> = prompts
                .iter()
                .filter(|p| p.server == server)
                .map(|p| format!("/{} ({})", p.command, p.argument_list()))
                .collect();
            return Err(McpError::UnknownPrompt {
                command: command.into(),
                available: if available.is_empty() {
                    format!("server '{server}' offers no prompts")
                } else {
                    format!("server '{server}' offers {}", available.join(", "))
                },
            });
        };
        let words = split_arguments(args).ok_or_else(|| McpError::PromptArguments {
            command: command.into(),
            message: "unbalanced quotes in the arguments".into(),
        })?;
        let map = prompt.map_arguments(words)?;
        self.get_prompt(&prompt.server, &prompt.name, map).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn two_args() -> McpPrompt {
        McpPrompt::from_wire(
            "my server",
            &json!({"name": "p.x", "arguments": [
                {"name": "arg1", "required": true},
                {"name": "arg2", "required": true},
                {"name": "opt"}]}),
        )
        .unwrap()
    }

    #[test]
    fn lists_and_names() {
        let p = two_args();
        assert_eq!(p.command, "mcp__my_server__p_x");
        assert_eq!(p.argument_list(), "arg1, arg2, opt?");
        assert!(McpPrompt::from_wire("s", &json!({"description": "no name"})).is_none());
    }

    #[test]
    fn splits_words_with_quotes() {
        assert_eq!(
            split_arguments(r#""first value" second 'third  one'"#).unwrap(),
            vec!["first value", "second", "third  one"]
        );
        assert_eq!(split_arguments("  ").unwrap(), Vec::<String>::new());
        assert!(split_arguments("\"open").is_none());
    }

    #[test]
    fn maps_words_to_arguments_in_order() {
        let p = two_args();
        let words = split_arguments(r#""first value" second"#).unwrap();
        let map = p.map_arguments(words).unwrap();
        assert_eq!(
            Value::Object(map),
            json!({"arg1": "first value", "arg2": "second"})
        );
        let map = p.map_arguments(vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(map.unwrap()["opt"], "c");

        let err = p.map_arguments(vec!["a".into()]).unwrap_err().to_string();
        assert!(err.contains("missing required argument 'arg2'"), "{err}");
        assert!(err.contains("arg1, arg2, opt?"), "{err}");
        assert!(err.contains("/mcp__my_server__p_x"), "{err}");

        let words = vec!["a".into(), "b".into(), "c".into(), "d".into()];
        let err = p.map_arguments(words).unwrap_err().to_string();
        assert!(err.contains("takes 3 argument(s)"), "{err}");
    }

    #[test]
    fn messages_become_one_text() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://r", "mimeType": "text/plain", "text": "embedded"}}},
            {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
            {"role": "assistant", "content": {"type": "text", "text": "earlier answer"}},
            {"role": "user", "content": [
                {"type": "text", "text": "go on"},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AA=="}}]},
        ]});
        assert_eq!(
            messages_to_text(&result),
            "[resource: test://r]\nembedded\n\n[image: image/png]\n\n\
             [assistant]\nearlier answer\n\ngo on\n[resource: test://b (binary, not text)]"
        );
        assert_eq!(messages_to_text(&json!({})), "");
    }
}
