//! Mapping an MCP `CallToolResult` (wire JSON) to a [`ToolOutput`].

use serde_json::Value;
use tascer_core::{ContentBlock, ImageSource, ToolOutput, ToolResultContent};

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn resource_text(resource: &Value) -> String {
    let uri = str_field(resource, "uri");
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        format!("[resource {uri}]\n{text}")
    } else {
        let mime = str_field(resource, "mimeType");
        let len = str_field(resource, "blob").len();
        format!("[resource {uri} ({mime}): binary, {len} base64 chars]")
    }
}

/// Converts one content block; text-like blocks become text.
fn convert_block(block: &Value) -> ContentBlock {
    match str_field(block, "type") {
        "text" => ContentBlock::text(str_field(block, "text")),
        "image" => ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: str_field(block, "mimeType").to_owned(),
                data: str_field(block, "data").to_owned(),
            },
        },
        "resource" => ContentBlock::text(resource_text(block.get("resource").unwrap_or(block))),
        "resource_link" => ContentBlock::text(format!(
            "[resource link {} {}]",
            str_field(block, "uri"),
            str_field(block, "name")
        )),
        "audio" => ContentBlock::text(format!("[audio ({})]", str_field(block, "mimeType"))),
        other => ContentBlock::text(format!("[unsupported MCP content type {other:?}]")),
    }
}

/// Maps a wire-shaped `CallToolResult`: text joined with newlines (or
/// blocks when there are images), `isError` → `is_error`, the whole result
/// as `raw`.
pub fn call_result_to_output(result: Value) -> ToolOutput {
    let blocks: Vec<ContentBlock> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(convert_block).collect())
        .unwrap_or_default();
    let has_image = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. }));
    let content = if has_image {
        ToolResultContent::Blocks(blocks)
    } else {
        let mut text = blocks
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        if let (true, Some(structured)) = (text.is_empty(), result.get("structuredContent")) {
            text = structured.to_string();
        }
        ToolResultContent::Text(text)
    };
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    ToolOutput {
        content,
        is_error,
        raw: Some(result),
        child_sessions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_text_error_image_resource() {
        let out = call_result_to_output(json!({
            "content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":true}));
        assert_eq!(out.content, ToolResultContent::Text("a\nb".into()));
        assert!(out.is_error);

        let out = call_result_to_output(json!({"content":[
            {"type":"text","text":"pic"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"resource","resource":{"uri":"file:///x","text":"hello"}}]}));
        let ToolResultContent::Blocks(blocks) = &out.content else {
            panic!("expected blocks");
        };
        assert_eq!(blocks.len(), 3);
        assert!(out.content.to_text().contains("hello"));
        assert!(!out.is_error);
    }
}
