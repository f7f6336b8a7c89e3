//! `check_tool_pairing` in both wire formats.

use serde_json::{Value, json};
use tascer_mock::check_tool_pairing;

fn body(messages: Value) -> Value {
    json!({"model": "m", "messages": messages})
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Read", "input": {}})
}

fn tool_result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

fn assistant_call(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "Read", "arguments": "{}"}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn tool_msg(id: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": "ok"})
}

#[test]
fn anthropic_valid_histories() {
    check_tool_pairing(&body(json!([{"role": "user", "content": "hi"}]))).unwrap();
    check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "reading"}, tool_use("a"), tool_use("b")]},
        {"role": "user", "content": [tool_result("b"), tool_result("a"), {"type": "text", "text": "more"}]},
        {"role": "assistant", "content": [tool_use("c")]},
        {"role": "user", "content": [tool_result("c")]},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"}
    ])))
    .unwrap();
}

#[test]
fn anthropic_missing_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a"), tool_use("b")]},
        {"role": "user", "content": [tool_result("a")]}
    ])))
    .unwrap_err();
    assert!(
        err.contains("`b`") && err.contains("no tool_result"),
        "{err}"
    );

    // The result must be in the *next* user message.
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]},
        {"role": "user", "content": "interrupt"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [tool_result("a")]}
    ])))
    .unwrap_err();
    assert!(err.contains("`a`"), "{err}");

    // A trailing tool_use with no answer at all.
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]}
    ])))
    .unwrap_err();
    assert!(err.contains("no tool_result"), "{err}");
}

#[test]
fn anthropic_duplicate_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]},
        {"role": "user", "content": [tool_result("a"), tool_result("a")]}
    ])))
    .unwrap_err();
    assert!(err.contains("2 tool_results"), "{err}");

    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]},
        {"role": "user", "content": [tool_result("a")]},
        {"role": "assistant", "content": [tool_use("a")]},
        {"role": "user", "content": [tool_result("a")]}
    ])))
    .unwrap_err();
    assert!(err.contains("duplicate tool_use id"), "{err}");
}

#[test]
fn anthropic_orphan_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": [tool_result("ghost")]}
    ])))
    .unwrap_err();
    assert!(err.contains("orphan") && err.contains("ghost"), "{err}");

    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("a")]},
        {"role": "user", "content": [tool_result("a"), tool_result("ghost")]}
    ])))
    .unwrap_err();
    assert!(err.contains("orphan") && err.contains("ghost"), "{err}");
}

#[test]
fn openai_valid_histories() {
    check_tool_pairing(&body(json!([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        assistant_call(&["a", "b"]),
        tool_msg("b"),
        tool_msg("a"),
        assistant_call(&["c"]),
        tool_msg("c"),
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"}
    ])))
    .unwrap();
}

#[test]
fn openai_missing_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        assistant_call(&["a", "b"]),
        tool_msg("a"),
        {"role": "user", "content": "next"}
    ])))
    .unwrap_err();
    assert!(
        err.contains("`b`") && err.contains("no following tool message"),
        "{err}"
    );
}

#[test]
fn openai_duplicate_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        assistant_call(&["a"]),
        tool_msg("a"),
        tool_msg("a")
    ])))
    .unwrap_err();
    assert!(err.contains("2 tool messages"), "{err}");
}

#[test]
fn openai_orphan_result() {
    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        tool_msg("ghost")
    ])))
    .unwrap_err();
    assert!(err.contains("orphan") && err.contains("ghost"), "{err}");

    let err = check_tool_pairing(&body(json!([
        {"role": "user", "content": "hi"},
        assistant_call(&["a"]),
        tool_msg("a"),
        {"role": "user", "content": "x"},
        tool_msg("a")
    ])))
    .unwrap_err();
    assert!(err.contains("orphan"), "{err}");
}

#[test]
fn no_messages_is_an_error() {
    assert!(check_tool_pairing(&json!({"model": "m"})).is_err());
}
