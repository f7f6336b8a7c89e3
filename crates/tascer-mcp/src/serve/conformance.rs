//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server scenarios): the tools,
//! resources and prompts its scenarios call, with the exact names and
//! results they expect.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    McpServerSpec, PromptArg, ServeToolResult, ServedPrompt, ServedResource,
    ServedResourceTemplate, ServedTool, ToolCallContext,
};

/// The resource to subscribe to (`test_update_watched_resource` notifies
/// its subscribers).
const WATCHED: &str = "test://watched-resource";

/// A 1×1 red PNG.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight samples of 8-bit mono silence at 8 kHz.
const WAV_BASE64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn fixed(name: &str, description: &str, result: ServeToolResult) -> ServedTool {
    ServedTool::new(name, description, no_args(), move |_args, _ctx| {
        let result = result.clone();
        async move { result }
    })
}

fn string_arg(args: &Map<String, Value>, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn client_error(what: &str, e: impl std::fmt::Display) -> ServeToolResult {
    ServeToolResult::error(format!("{what} failed: {e}"))
}

async fn with_logging(ctx: ToolCallContext) -> ServeToolResult {
    for (i, msg) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Err(e) = ctx.log("info", json!(msg)).await {
            return client_error("logging", e);
        }
    }
    ServeToolResult::text("Tool with logging executed successfully")
}

async fn with_progress(ctx: ToolCallContext) -> ServeToolResult {
    for (i, p) in [0.0, 50.0, 100.0].iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Err(e) = ctx.progress(*p, Some(100.0), None).await {
            return client_error("progress", e);
        }
    }
    ServeToolResult::text("Tool with progress executed successfully")
}

async fn sampling(args: Map<String, Value>, ctx: ToolCallContext) -> ServeToolResult {
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": string_arg(&args, "prompt")}}],
        "maxTokens": 100,
    });
    match ctx.create_message(params).await {
        Ok(result) => {
            let text = result
                .pointer("/content/text")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| result["content"].to_string());
            ServeToolResult::text(format!("LLM response: {text}"))
        }
        Err(e) => client_error("sampling", e),
    }
}

async fn elicit(ctx: ToolCallContext, params: Value, prefix: &str) -> ServeToolResult {
    match ctx.elicit(params).await {
        Ok(result) => {
            let action = result["action"].as_str().unwrap_or("unknown").to_owned();
            let content = result.get("content").cloned().unwrap_or(json!({}));
            ServeToolResult::text(format!("{prefix}action={action}, content={content}"))
        }
        Err(e) => client_error("elicitation", e),
    }
}

/// The fixture's tools, in the order `tools/list` gives them.
fn tools() -> Vec<ServedTool> {
    let mut tools = content_tools();
    tools.extend(behaviour_tools());
    tools.extend(elicitation_tools());
    tools.extend(schema_and_timing_tools());
    tools
}

/// Fixed results, one per content type.
fn content_tools() -> Vec<ServedTool> {
    vec![
        fixed(
            "test_simple_text",
            "Returns simple text content",
            ServeToolResult::text("This is a simple text response for testing."),
        ),
        fixed(
            "test_image_content",
            "Returns image content",
            ServeToolResult::content(vec![
                json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}),
            ]),
        ),
        fixed(
            "test_audio_content",
            "Returns audio content",
            ServeToolResult::content(vec![
                json!({"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}),
            ]),
        ),
        fixed(
            "test_embedded_resource",
            "Returns embedded resource content",
            ServeToolResult::content(vec![json!({"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            }})]),
        ),
        fixed(
            "test_multiple_content_types",
            "Returns text, image and resource content",
            ServeToolResult::content(vec![
                json!({"type": "text", "text": "Multiple content types test:"}),
                json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}),
                json!({"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}",
                }}),
            ]),
        ),
    ]
}

/// Tools that log, fail, report progress or ask the client's model.
fn behaviour_tools() -> Vec<ServedTool> {
    vec![
        ServedTool::new(
            "test_tool_with_logging",
            "Sends three info log notifications while it runs",
            no_args(),
            |_args, ctx| with_logging(ctx),
        ),
        fixed(
            "test_error_handling",
            "Always fails",
            ServeToolResult::error("This tool intentionally returns an error for testing"),
        ),
        ServedTool::new(
            "test_tool_with_progress",
            "Reports progress 0, 50, 100 of 100",
            no_args(),
            |_args, ctx| with_progress(ctx),
        ),
        ServedTool::new(
            "test_sampling",
            "Asks the client's LLM (sampling/createMessage)",
            json!({"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}, "required": ["prompt"]}),
            sampling,
        ),
    ]
}

/// Tools that ask the user through the client (elicitation/create).
fn elicitation_tools() -> Vec<ServedTool> {
    vec![
        ServedTool::new(
            "test_elicitation",
            "Asks the user for input (elicitation/create)",
            json!({"type": "object", "properties": {"message": {"type": "string", "description": "The message to show the user"}}, "required": ["message"]}),
            |args, ctx| async move {
                let params = json!({
                    "message": string_arg(&args, "message"),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"},
                        },
                        "required": ["username", "email"],
                    },
                });
                elicit(ctx, params, "User response: ").await
            },
        ),
        ServedTool::new(
            "test_elicitation_url",
            "Asks the user to answer on a web page (URL-mode elicitation, SEP-1036)",
            no_args(),
            |_args, ctx| async move {
                let params = json!({
                    "mode": "url",
                    "message": "Sign in to the test service",
                    "url": "https://auth.example.com/authorize?state=test",
                    "elicitationId": "elicit-url-1",
                });
                elicit(ctx, params, "URL elicitation: ").await
            },
        ),
        ServedTool::new(
            "test_elicitation_sep1034_defaults",
            "Elicitation with default values for every primitive type (SEP-1034)",
            no_args(),
            |_args, ctx| async move {
                let params = json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "User name", "default": "John Doe"},
                            "age": {"type": "integer", "description": "User age", "default": 30},
                            "score": {"type": "number", "description": "User score", "default": 95.5},
                            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                            "verified": {"type": "boolean", "description": "Verification status", "default": true},
                        },
                        "required": [],
                    },
                });
                elicit(ctx, params, "Elicitation completed: ").await
            },
        ),
        ServedTool::new(
            "test_elicitation_sep1330_enums",
            "Elicitation with every enum schema variant (SEP-1330)",
            no_args(),
            |_args, ctx| async move {
                let params = json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
                            "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"},
                            ]},
                            "legacyEnum": {"type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                            "untitledMulti": {"type": "array", "description": "Untitled multi-select", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                            "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]}},
                        },
                        "required": [],
                    },
                });
                elicit(ctx, params, "Elicitation completed: ").await
            },
        ),
    ]
}

/// A tool with a JSON Schema 2020-12 input, one that changes the watched
/// resource, and one that answers late.
fn schema_and_timing_tools() -> Vec<ServedTool> {
    vec![
        ServedTool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false,
            }),
            |args, _ctx| async move {
                ServeToolResult::text(format!("Received: {}", Value::Object(args)))
            },
        ),
        ServedTool::new(
            "test_update_watched_resource",
            "Marks test://watched-resource as changed: a client subscribed to it gets \
             notifications/resources/updated",
            no_args(),
            |_args, ctx| async move {
                match ctx.resource_updated(WATCHED).await {
                    Ok(true) => {
                        ServeToolResult::text("Subscribers of the watched resource notified")
                    }
                    Ok(false) => ServeToolResult::text("No subscription to the watched resource"),
                    Err(e) => client_error("resources/updated", e),
                }
            },
        ),
        ServedTool::new(
            "test_reconnection",
            "Returns after a short delay (SSE reconnection scenario)",
            no_args(),
            |_args, _ctx| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                ServeToolResult::text("Reconnection test completed successfully")
            },
        ),
    ]
}

fn prompts() -> Vec<ServedPrompt> {
    vec![
        ServedPrompt::new(
            "test_simple_prompt",
            "A simple prompt without arguments",
            vec![],
            |_args| {
                Ok(
                    json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]),
                )
            },
        ),
        ServedPrompt::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
            vec![
                PromptArg::required("arg1", "First test argument"),
                PromptArg::required("arg2", "Second test argument"),
            ],
            |args| {
                let text = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    string_arg(args, "arg1"),
                    string_arg(args, "arg2")
                );
                Ok(json!([{"role": "user", "content": {"type": "text", "text": text}}]))
            },
        ),
        ServedPrompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt embedding a resource",
            vec![PromptArg::required(
                "resourceUri",
                "URI of the resource to embed",
            )],
            |args| {
                Ok(json!([
                    {"role": "user", "content": {"type": "resource", "resource": {
                        "uri": string_arg(args, "resourceUri"),
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    }}},
                    {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
                ]))
            },
        ),
        ServedPrompt::new(
            "test_prompt_with_image",
            "A prompt with an image",
            vec![],
            |_args| {
                Ok(json!([
                    {"role": "user", "content": {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}},
                    {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
                ]))
            },
        ),
    ]
}

/// The conformance suite's fixture server (`tascer mcp serve
/// --conformance`).
pub fn conformance_spec(version: &str) -> McpServerSpec {
    let mut spec = McpServerSpec::new("tascer-conformance", version)
        .instructions("Fixture server for the MCP conformance suite.")
        .resource(ServedResource::text(
            "test://static-text",
            "Static Text Resource",
            "A static text resource for testing",
            "text/plain",
            "This is the content of the static text resource.",
        ))
        .resource(ServedResource::blob(
            "test://static-binary",
            "Static Binary Resource",
            "A static binary resource (PNG) for testing",
            "image/png",
            PNG_BASE64,
        ))
        .resource(ServedResource::text(
            WATCHED,
            "Watched Resource",
            "A resource to subscribe to",
            "text/plain",
            "Watched resource content",
        ))
        .resource_template(ServedResourceTemplate::new(
            "test://template/{id}/data",
            "Template Resource",
            "A resource template with an id parameter",
            "application/json",
            |uri, vars| {
                let id = vars.get("id")?;
                let text =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Some(
                    json!([{"uri": uri, "mimeType": "application/json", "text": text.to_string()}]),
                )
            },
        ))
        .completion(|_reference, _arg, value| {
            ["paris", "park", "party"]
                .iter()
                .filter(|v| v.starts_with(value))
                .map(|v| (*v).to_owned())
                .collect()
        });
    for tool in tools() {
        spec = spec.tool(tool);
    }
    for prompt in prompts() {
        spec = spec.prompt(prompt);
    }
    spec
}
