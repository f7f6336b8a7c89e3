//! Tool registry and input schemas.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tascer_tools::{ToolState, builtin_tools, tool_names};

#[test]
fn builtin_tools_in_order_with_read_only_flags() {
    let tools = builtin_tools(ToolState::new());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, tool_names());
    assert_eq!(names, ["Read", "Write", "Edit", "Bash", "Glob", "Grep"]);
    for t in &tools {
        let ro = matches!(t.name(), "Read" | "Glob" | "Grep");
        assert_eq!(t.is_read_only(), ro, "{}", t.name());
        assert!(!t.description().is_empty());
    }
}

#[test]
fn schemas_are_clean_objects() {
    for t in builtin_tools(ToolState::new()) {
        let s = t.input_schema();
        println!(
            "{}: {}",
            t.name(),
            serde_json::to_string_pretty(&s).unwrap()
        );
        assert_eq!(s["type"], "object", "{}", t.name());
        assert!(s.get("$schema").is_none());
        assert!(s.get("title").is_none());
        assert_eq!(s["additionalProperties"], false, "{}", t.name());
        let text = s.to_string();
        assert!(!text.contains("null"), "{}: {text}", t.name());
    }
}

#[test]
fn read_schema_shape() {
    let tools = builtin_tools(ToolState::new());
    let s = tools[0].input_schema();
    assert_eq!(s["required"], json!(["file_path"]));
    assert_eq!(s["properties"]["file_path"]["type"], "string");
    assert_eq!(s["properties"]["offset"]["type"], "integer");
    assert!(s["properties"]["offset"]["description"].is_string());
}

#[test]
fn grep_schema_has_flag_names_and_modes() {
    let tools = builtin_tools(ToolState::new());
    let s = tools[5].input_schema();
    for key in [
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "type",
        "glob",
        "head_limit",
        "offset",
        "multiline",
    ] {
        assert!(s["properties"].get(key).is_some(), "missing {key}: {s}");
    }
    assert_eq!(
        s["properties"]["output_mode"]["enum"],
        json!(["content", "files_with_matches", "count"])
    );
    assert_eq!(s["required"], json!(["pattern"]));
}
