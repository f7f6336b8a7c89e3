//! NotebookEdit tests and Read on notebooks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

fn sample() -> Value {
    json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some text"]},
            {"cell_type": "code", "id": "calc", "metadata": {}, "execution_count": 3,
             "source": "x = 1 + 1\nprint(x)",
             "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["2\n"]},
                {"output_type": "execute_result", "execution_count": 3, "metadata": {},
                 "data": {"text/plain": ["2"], "image/png": "AAAA"}},
                {"output_type": "display_data", "metadata": {}, "data": {"image/png": "AAAA"}},
                {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
             ]}
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5
    })
}

fn write_nb(path: &Path, nb: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(nb).unwrap()).unwrap();
}

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn read_renders_cells_with_outputs() {
    let (_d, dir) = tempdir();
    let path = dir.join("nb.ipynb");
    write_nb(&path, &sample());
    let t = tools();
    let out = call(&t.read, &ctx(&dir), json!({"file_path": "nb.ipynb"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        "<cell id=\"intro\"><cell_type>markdown</cell_type># Title\nSome text</cell id=\"intro\">\n\
         <cell id=\"calc\">x = 1 + 1\nprint(x)\n<outputs>\n2\n2\n[image/png output omitted]\n\
         ValueError: bad\n</outputs></cell id=\"calc\">"
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["type"], "notebook");
    assert_eq!(raw["file"]["filePath"], path.display().to_string());
    let cells = raw["file"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["cellType"], "markdown");
    assert_eq!(cells[1]["cell_id"], "calc");
    assert_eq!(cells[1]["execution_count"], 3);
    assert_eq!(cells[1]["outputs"][0]["text"], "2\n");
    assert_eq!(cells[1]["language"], "python");
    assert!(t.state.has_read(&path));
}

#[tokio::test]
async fn read_rejects_invalid_notebook() {
    let (_d, dir) = tempdir();
    std::fs::write(dir.join("bad.ipynb"), "{not json").unwrap();
    std::fs::write(dir.join("nocells.ipynb"), "{}").unwrap();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"file_path": "bad.ipynb"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("is not valid JSON"), "{}", text(&out));
    let out = call(&t.read, &c, json!({"file_path": "nocells.ipynb"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("no cells array"), "{}", text(&out));
}

#[tokio::test]
async fn replace_insert_delete() {
    let (_d, dir) = tempdir();
    let path = dir.join("nb.ipynb");
    write_nb(&path, &sample());
    let t = tools();
    let c = ctx(&dir);
    let p = path.display().to_string();
    call(&t.read, &c, json!({"file_path": p})).await;

    // Replace a code cell: source set, outputs cleared.
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "calc", "new_source": "y = 2"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), "Updated cell calc with y = 2");
    let raw = out.raw.unwrap();
    assert_eq!(raw["old_source"], "x = 1 + 1\nprint(x)");
    assert_eq!(raw["cell_type"], "code");
    assert_eq!(raw["language"], "python");
    assert_eq!(raw["edit_mode"], "replace");
    assert_eq!(raw["notebook_path"], p);
    let nb = load(&path);
    assert_eq!(nb["cells"][1]["source"], "y = 2");
    assert_eq!(nb["cells"][1]["outputs"], json!([]));
    assert_eq!(nb["cells"][1]["execution_count"], Value::Null);
    assert_eq!(nb["nbformat_minor"], 5);
    // Jupyter's layout: one-space indent, final newline.
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.starts_with("{\n \"cells\": ["), "{file}");
    assert!(file.ends_with("}\n"));

    // Insert after "intro", then at the start.
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "intro", "new_source": "import os",
               "cell_type": "code", "edit_mode": "insert"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let new_id = out.raw.unwrap()["cell_id"].as_str().unwrap().to_string();
    assert_eq!(new_id.len(), 8);
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "new_source": "# Top", "cell_type": "markdown",
               "edit_mode": "insert"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let nb = load(&path);
    let ids: Vec<&str> = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(&ids[1..], ["intro", new_id.as_str(), "calc"]);
    assert_eq!(nb["cells"][0]["source"], "# Top");
    assert!(nb["cells"][0].get("outputs").is_none());
    assert_eq!(nb["cells"][2]["outputs"], json!([]));

    // Replace by index with a type change; then delete.
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "cell-3", "new_source": "Now prose",
               "cell_type": "markdown"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let nb = load(&path);
    assert_eq!(nb["cells"][3]["cell_type"], "markdown");
    assert!(nb["cells"][3].get("outputs").is_none());
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "intro", "new_source": "", "edit_mode": "delete"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), "Deleted cell intro");
    assert_eq!(load(&path)["cells"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn notebook_edit_errors() {
    let (_d, dir) = tempdir();
    let path = dir.join("nb.ipynb");
    write_nb(&path, &sample());
    std::fs::write(dir.join("a.txt"), "x").unwrap();
    let t = tools();
    let c = ctx(&dir);
    let p = path.display().to_string();

    // Must be read first.
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "calc", "new_source": "z"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "File has not been read yet. Read it first before writing to it."
    );
    call(&t.read, &c, json!({"file_path": p})).await;

    let cases = [
        (
            json!({"notebook_path": "a.txt", "cell_id": "calc", "new_source": "z"}),
            "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.",
        ),
        (
            json!({"notebook_path": "missing.ipynb", "cell_id": "calc", "new_source": "z"}),
            "Notebook file does not exist:",
        ),
        (
            json!({"notebook_path": p, "cell_id": "nope", "new_source": "z"}),
            "Cell with ID \"nope\" not found in notebook.",
        ),
        (
            json!({"notebook_path": p, "new_source": "z"}),
            "cell_id must be specified when replacing a cell",
        ),
        (
            json!({"notebook_path": p, "new_source": "z", "edit_mode": "insert"}),
            "cell_type is required when using edit_mode=insert.",
        ),
        (
            json!({"notebook_path": p, "new_source": "z", "edit_mode": "delete"}),
            "cell_id must be specified when deleting a cell.",
        ),
        (
            json!({"notebook_path": p, "cell_id": "calc", "new_source": "z", "edit_mode": "append"}),
            "NotebookEdit input is invalid:",
        ),
    ];
    for (input, want) in cases {
        let out = call(&t.notebook_edit, &c, input.clone()).await;
        assert!(out.is_error, "{input}");
        assert!(text(&out).starts_with(want), "{input}: {}", text(&out));
    }
    assert_eq!(load(&path), sample());

    // Changed on disk since read.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": p, "cell_id": "calc", "new_source": "z"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).starts_with("File has been modified since read"));
}

#[tokio::test]
async fn notebook_without_ids_uses_indexes() {
    let (_d, dir) = tempdir();
    let path = dir.join("old.ipynb");
    write_nb(
        &path,
        &json!({"cells": [{"cell_type": "code", "metadata": {}, "source": "a", "outputs": [],
                            "execution_count": null}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 2}),
    );
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"file_path": "old.ipynb"})).await;
    assert_eq!(text(&out), "<cell id=\"cell-0\">a</cell id=\"cell-0\">");
    let out = call(
        &t.notebook_edit,
        &c,
        json!({"notebook_path": "old.ipynb", "cell_id": "cell-0", "new_source": "b",
               "cell_type": "code", "edit_mode": "insert"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.raw.unwrap()["cell_id"], "cell-1");
    let nb = load(&path);
    assert!(nb["cells"][1].get("id").is_none());
    assert_eq!(nb["cells"][1]["source"], "b");
}
