//! In-process ("sdk") servers: Rust closures served as MCP-named tools with
//! no subprocess and no transport.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::names::mcp_tool_name;

type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, ToolOutput> + Send + Sync>;

/// One in-process tool, named `mcp__<server>__<tool>`.
#[derive(Clone)]
pub struct SdkTool {
    full_name: String,
    short_name: String,
    description: String,
    input_schema: Value,
    read_only: bool,
    handler: Handler,
}

impl SdkTool {
    /// The tool's own (unprefixed) name.
    pub fn short_name(&self) -> &str {
        &self.short_name
    }
}

impl std::fmt::Debug for SdkTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdkTool")
            .field("name", &self.full_name)
            .finish_non_exhaustive()
    }
}

impl Tool for SdkTool {
    fn name(&self) -> &str {
        &self.full_name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }
    fn is_read_only(&self) -> bool {
        self.read_only
    }
    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        async move {
            if let Some(missing) = missing_required(&self.input_schema, &input) {
                return ToolOutput::error(format!(
                    "invalid input for {}: missing required field {missing:?}",
                    self.full_name
                ));
            }
            let fut = (self.handler)(input);
            // A panicking handler becomes an error result, as in the SDKs.
            let guarded = std::panic::AssertUnwindSafe(fut).catch_unwind();
            tokio::select! {
                out = guarded => out.unwrap_or_else(|_| ToolOutput::error(format!("tool {} panicked", self.full_name))),
                () = ctx.cancel.cancelled() => ToolOutput::error("tool call interrupted"),
            }
        }
        .boxed()
    }
}

fn missing_required(schema: &Value, input: &Value) -> Option<String> {
    let required = schema.get("required")?.as_array()?;
    required
        .iter()
        .filter_map(Value::as_str)
        .find(|k| input.get(*k).is_none())
        .map(str::to_owned)
}

/// Expands the shorthand `{"a": "number", "b": "string"}` (all properties
/// required) into a JSON Schema; a full schema (with `"type"`) is kept.
pub fn expand_schema(schema: Value) -> Value {
    match &schema {
        Value::Object(map) if !map.contains_key("type") && map.values().all(Value::is_string) => {
            let required: Vec<&String> = map.keys().collect();
            let properties: serde_json::Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), json!({ "type": v })))
                .collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
        Value::Null => json!({"type": "object", "properties": {}}),
        _ => schema,
    }
}

/// An in-process MCP server: `SdkServer::new("calc").tool("add", ...)`.
#[derive(Debug, Clone)]
pub struct SdkServer {
    name: String,
    version: String,
    tools: Vec<SdkTool>,
}

impl SdkServer {
    /// A server with no tools yet.
    pub fn new(name: impl Into<String>) -> Self {
        SdkServer {
            name: name.into(),
            version: "1.0.0".into(),
            tools: Vec::new(),
        }
    }

    /// Sets the reported server version (default `1.0.0`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Adds a tool. `input_schema` is a JSON Schema or the shorthand
    /// accepted by [`expand_schema`]; `handler` gets the input object.
    pub fn tool<F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutput> + Send + 'static,
    {
        self.add(
            name.into(),
            description.into(),
            input_schema,
            false,
            handler,
        )
    }

    /// Like [`SdkServer::tool`], for a tool that changes nothing
    /// (`readOnlyHint`).
    pub fn read_only_tool<F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutput> + Send + 'static,
    {
        self.add(name.into(), description.into(), input_schema, true, handler)
    }

    fn add<F, Fut>(
        mut self,
        name: String,
        description: String,
        input_schema: Value,
        read_only: bool,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutput> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |input| handler(input).boxed());
        self.tools.push(SdkTool {
            full_name: mcp_tool_name(&self.name, &name),
            short_name: name,
            description,
            input_schema: expand_schema(input_schema),
            read_only,
            handler,
        });
        self
    }

    /// Server name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `serverInfo` reported in statuses.
    pub fn server_info(&self) -> Value {
        json!({"name": self.name, "version": self.version})
    }

    /// The tools, ready for the tool registry.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|t| Arc::new(t.clone()) as Arc<dyn Tool>)
            .collect()
    }

    /// The tools' own (unprefixed) names.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.short_name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_schema() {
        let s = expand_schema(json!({"a": "number"}));
        assert_eq!(
            s,
            json!({"type":"object","properties":{"a":{"type":"number"}},"required":["a"]})
        );
        let full = json!({"type":"object","properties":{}});
        assert_eq!(expand_schema(full.clone()), full);
    }
}
