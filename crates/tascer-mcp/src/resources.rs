//! `ListMcpResourcesTool` and `ReadMcpResourceTool`, and the
//! [`ResourceUpdate`]s of the resources they subscribed to.

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::server::{ServerEntry, Servers};

/// A `notifications/resources/updated` of a subscribed resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResourceUpdate {
    /// The server's name.
    pub server: String,
    /// The resource's URI.
    pub uri: String,
}

impl ResourceUpdate {
    /// What the model is told (inside a `<system-reminder>`).
    pub fn reminder(&self) -> String {
        format!(
            "The MCP resource {} of server {} changed since it was read; read it again if \
             you need the current content.",
            self.uri, self.server
        )
    }
}

/// Lists resources and resource templates of one server (`{server?}`)
/// or of all servers.
pub struct ListMcpResourcesTool {
    pub(crate) servers: Servers,
}

/// Reads one resource (`{server, uri}`).
pub struct ReadMcpResourceTool {
    pub(crate) servers: Servers,
}

fn json_output(value: Value) -> ToolOutput {
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    ToolOutput::text(text).with_raw(value)
}

impl Tool for ListMcpResourcesTool {
    fn name(&self) -> &str {
        "ListMcpResourcesTool"
    }
    fn description(&self) -> &str {
        "Lists resources offered by the connected MCP servers, and their resource templates \
         (entries with `uriTemplate`: fill in the {variables} and read the URI with \
         ReadMcpResourceTool). Pass `server` to list one server only."
    }
    fn input_schema(&self) -> Value {
        json!({"type":"object","properties":{"server":{"type":"string","description":"Only list this server's resources"}}})
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        async move {
            let filter = input.get("server").and_then(Value::as_str);
            let servers: Vec<_> = match filter {
                Some(name) => match self.servers.find(name) {
                    Some(s) => vec![s],
                    None => return ToolOutput::error(format!("no MCP server named '{name}'")),
                },
                None => self.servers.all().to_vec(),
            };
            let mut all = Vec::new();
            let mut errors = Vec::new();
            for server in servers {
                match server.list_resources().await {
                    Ok(list) => all.extend(list.into_iter().map(|mut r| {
                        if let Some(obj) = r.as_object_mut() {
                            obj.insert("server".into(), server.name().into());
                        }
                        r
                    })),
                    Err(e) => errors.push(e.to_string()),
                }
                all.extend(templates(&server).await);
            }
            if filter.is_some() && !errors.is_empty() {
                return ToolOutput::error(errors.join("\n"));
            }
            if all.is_empty() && !errors.is_empty() {
                return ToolOutput::error(errors.join("\n"));
            }
            json_output(Value::Array(all))
        }
        .boxed()
    }
}

impl Tool for ReadMcpResourceTool {
    fn name(&self) -> &str {
        "ReadMcpResourceTool"
    }
    fn description(&self) -> &str {
        "Reads a resource from an MCP server by URI."
    }
    fn input_schema(&self) -> Value {
        json!({"type":"object","properties":{
            "server":{"type":"string","description":"The MCP server name"},
            "uri":{"type":"string","description":"The resource URI"}},
            "required":["server","uri"]})
    }
    fn is_read_only(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        async move {
            let (Some(name), Some(uri)) = (
                input.get("server").and_then(Value::as_str),
                input.get("uri").and_then(Value::as_str),
            ) else {
                return ToolOutput::error(
                    "ReadMcpResourceTool needs string fields `server` and `uri`",
                );
            };
            let Some(server) = self.servers.find(name) else {
                return ToolOutput::error(format!("no MCP server named '{name}'"));
            };
            match server.read_resource(uri).await {
                Ok(result) => {
                    if let Err(e) = server.subscribe(uri).await {
                        tracing::warn!(server = %name, %uri, error = %e, "resources/subscribe failed");
                    }
                    let contents: Vec<Value> = result
                        .get("contents")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(summarize_content).collect())
                        .unwrap_or_default();
                    json_output(json!({ "contents": contents }))
                }
                Err(e) => ToolOutput::error(e.to_string()),
            }
        }
        .boxed()
    }
}

/// The server's resource templates, each with `server`; none when it
/// has none or cannot list them (`resources/templates/list` is optional).
async fn templates(server: &ServerEntry) -> Vec<Value> {
    match server.list_resource_templates().await {
        Ok(list) => list
            .into_iter()
            .map(|mut t| {
                if let Some(obj) = t.as_object_mut() {
                    obj.insert("server".into(), server.name().into());
                }
                t
            })
            .collect(),
        Err(e) => {
            tracing::debug!(server = %server.name(), error = %e, "no resource templates");
            Vec::new()
        }
    }
}

/// Keeps text; replaces a base64 blob by its size.
fn summarize_content(c: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["uri", "mimeType", "text"] {
        if let Some(v) = c.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(blob) = c.get("blob").and_then(Value::as_str) {
        out.insert("blobBase64Length".into(), blob.len().into());
    }
    Value::Object(out)
}
