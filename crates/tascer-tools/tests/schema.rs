//! Tool registry and input schemas.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tascer_core::Tool;
use tascer_tools::{ToolState, builtin_tools, tool_names};

fn schema_of(name: &str) -> Value {
    let tools: Vec<Arc<dyn Tool>> = builtin_tools(ToolState::new());
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap()
        .input_schema()
}

#[test]
fn builtin_tools_in_order_with_read_only_flags() {
    let tools = builtin_tools(ToolState::new());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, tool_names());
    assert_eq!(
        names,
        [
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "Bash",
            "BashOutput",
            "KillShell",
            "Glob",
            "Grep",
            "NotebookEdit",
            "TodoWrite",
            "WebFetch",
            "WebSearch",
            "AskUserQuestion",
            "ExitPlanMode",
        ]
    );
    for t in &tools {
        let ro = matches!(
            t.name(),
            "Read"
                | "Glob"
                | "Grep"
                | "BashOutput"
                | "WebFetch"
                | "WebSearch"
                | "AskUserQuestion"
                | "ExitPlanMode"
        );
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
    let s = schema_of("Read");
    assert_eq!(s["required"], json!(["file_path"]));
    assert_eq!(s["properties"]["file_path"]["type"], "string");
    assert_eq!(s["properties"]["offset"]["type"], "integer");
    assert!(s["properties"]["offset"]["description"].is_string());
}

#[test]
fn grep_schema_has_flag_names_and_modes() {
    let s = schema_of("Grep");
    for key in [
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "-o",
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

#[test]
fn new_tool_schemas_match_claude_code_fields() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "MultiEdit",
            &["file_path", "edits"],
            &["file_path", "edits"],
        ),
        ("BashOutput", &["bash_id", "filter"], &["bash_id"]),
        ("KillShell", &["shell_id"], &["shell_id"]),
        (
            "NotebookEdit",
            &[
                "notebook_path",
                "cell_id",
                "new_source",
                "cell_type",
                "edit_mode",
            ],
            &["notebook_path", "new_source"],
        ),
        ("TodoWrite", &["todos"], &["todos"]),
        ("WebFetch", &["url", "prompt"], &["url", "prompt"]),
        (
            "WebSearch",
            &["query", "allowed_domains", "blocked_domains"],
            &["query"],
        ),
        ("AskUserQuestion", &["questions"], &["questions"]),
        ("ExitPlanMode", &["plan"], &["plan"]),
    ];
    for (name, props, required) in cases {
        let s = schema_of(name);
        let mut keys: Vec<&str> = s["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        let mut want = props.to_vec();
        want.sort();
        assert_eq!(keys, want, "{name}: {s}");
        let mut req: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        req.sort();
        let mut want_req = required.to_vec();
        want_req.sort();
        assert_eq!(req, want_req, "{name}: {s}");
    }
    let todo = schema_of("TodoWrite");
    let item = &todo["properties"]["todos"]["items"];
    assert_eq!(
        item["properties"]["status"]["enum"],
        json!(["pending", "in_progress", "completed"])
    );
    assert!(item["properties"].get("activeForm").is_some(), "{todo}");
    let nb = schema_of("NotebookEdit");
    assert_eq!(
        nb["properties"]["edit_mode"]["enum"],
        json!(["replace", "insert", "delete"])
    );
    assert_eq!(
        nb["properties"]["cell_type"]["enum"],
        json!(["code", "markdown"])
    );
    let me = schema_of("MultiEdit");
    assert_eq!(me["properties"]["edits"]["minItems"], 1);
    assert_eq!(
        me["properties"]["edits"]["items"]["required"],
        json!(["old_string", "new_string"])
    );
    let ask = schema_of("AskUserQuestion");
    let q = &ask["properties"]["questions"];
    assert_eq!(q["minItems"], 1);
    assert_eq!(q["maxItems"], 4);
    assert!(
        q["items"]["properties"].get("multiSelect").is_some(),
        "{ask}"
    );
    assert_eq!(schema_of("WebFetch")["properties"]["url"]["format"], "uri");
}
