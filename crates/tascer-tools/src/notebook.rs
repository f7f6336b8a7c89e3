//! Jupyter notebooks: `NotebookEdit`, and rendering `.ipynb` files for Read.

use std::path::Path;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::state::ToolState;
use crate::util::{finish, input_schema, parse_input, resolve_path, truncate_chars};

const NAME: &str = "NotebookEdit";
/// Characters of one cell's outputs shown by Read.
const MAX_OUTPUT_CHARS: usize = 10_000;

/// The kind of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

/// What NotebookEdit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

impl EditMode {
    fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// Input of [`NotebookEditTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotebookEditInput {
    /// The absolute path to the Jupyter notebook file to edit (must be absolute, not relative).
    notebook_path: String,
    /// The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after
    /// the cell with this ID, or at the beginning if not specified. Cells without an id can be
    /// addressed as "cell-N" (0-based index).
    #[serde(default)]
    cell_id: Option<String>,
    /// The new source for the cell.
    new_source: String,
    /// The type of the cell (code or markdown). If not specified, it defaults to the current
    /// cell type. If using edit_mode=insert, this is required.
    #[serde(default)]
    cell_type: Option<CellType>,
    /// The type of edit to make (replace, insert, delete). Defaults to replace.
    #[serde(default)]
    edit_mode: Option<EditMode>,
}

/// Replaces, inserts or deletes a cell of a Jupyter notebook.
#[derive(Debug, Clone)]
pub struct NotebookEditTool {
    state: ToolState,
}

impl NotebookEditTool {
    /// A `NotebookEdit` tool checking reads against `state`.
    pub fn new(state: ToolState) -> Self {
        NotebookEditTool { state }
    }
}

impl Tool for NotebookEditTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) \
         with new source. The notebook must have been read with the Read tool first. cell_id \
         picks the cell (or \"cell-N\" by 0-based index). Use edit_mode=insert to add a new cell \
         after cell_id (or at the start; cell_type is then required) and edit_mode=delete to \
         delete the cell."
    }

    fn input_schema(&self) -> Value {
        input_schema::<NotebookEditInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input, ctx).await) })
    }
}

/// A cell's source as one string (nbformat allows a string or a list of
/// lines).
pub(crate) fn source_text(source: Option<&Value>) -> String {
    match source {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The cells array of a parsed notebook.
fn cells_of(nb: &Value) -> Option<&Vec<Value>> {
    nb.get("cells").and_then(Value::as_array)
}

/// The notebook's language (`metadata.language_info.name`, else the
/// kernelspec's, else python).
pub(crate) fn language(nb: &Value) -> String {
    nb.pointer("/metadata/language_info/name")
        .or_else(|| nb.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_string()
}

/// A cell's id, or `cell-N` when it has none.
fn cell_id(cell: &Value, index: usize) -> String {
    cell.get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("cell-{index}"))
}

/// The index of the cell `id` names: its `id`, or `cell-N`.
fn find_cell(cells: &[Value], id: &str) -> Option<usize> {
    cells
        .iter()
        .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
        .or_else(|| {
            id.strip_prefix("cell-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < cells.len())
        })
}

/// True when cells of this notebook carry ids (nbformat 4.5 and later).
fn uses_ids(nb: &Value) -> bool {
    let major = nb.get("nbformat").and_then(Value::as_u64).unwrap_or(4);
    let minor = nb
        .get("nbformat_minor")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    major > 4
        || (major == 4 && minor >= 5)
        || cells_of(nb).is_some_and(|c| c.iter().any(|cell| cell.get("id").is_some()))
}

fn new_id(cells: &[Value]) -> String {
    loop {
        let id: String = (0..8)
            .map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0'))
            .collect();
        if find_cell(cells, &id).is_none() {
            return id;
        }
    }
}

/// Serializes like Jupyter: one-space indent and a final newline.
fn to_notebook_json(nb: &Value) -> Result<String, ToolError> {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    nb.serialize(&mut ser)
        .map_err(|e| ToolError::msg(format!("Cannot encode the notebook: {e}")))?;
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    Ok(text)
}

fn parse_notebook(text: &str, shown: &str) -> Result<Value, ToolError> {
    let nb: Value = serde_json::from_str(text)
        .map_err(|e| ToolError::msg(format!("Notebook {shown} is not valid JSON: {e}")))?;
    if cells_of(&nb).is_none() {
        return Err(ToolError::msg(format!(
            "Notebook {shown} is not a valid nbformat 4 notebook: it has no cells array."
        )));
    }
    Ok(nb)
}

/// What one edit did, for the answer.
struct CellEdit {
    id: String,
    cell_type: String,
    old_source: Option<String>,
    text: String,
}

impl NotebookEditTool {
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: NotebookEditInput = parse_input(NAME, input)?;
        let path = resolve_path(ctx, &input.notebook_path);
        let shown = path.display().to_string();
        if path.extension().and_then(|e| e.to_str()) != Some("ipynb") {
            return Err(ToolError::msg(
                "File must be a Jupyter notebook (.ipynb file). For editing other file types, \
                 use the Edit tool.",
            ));
        }
        let mode = input.edit_mode.unwrap_or_default();
        let original = read_notebook_file(&path, &shown).await?;
        self.state.check_fresh(&path).map_err(ToolError::Message)?;
        let mut nb = parse_notebook(&original, &shown)?;
        let lang = language(&nb);
        let with_ids = uses_ids(&nb);

        let cells = nb
            .get_mut("cells")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| ToolError::msg(format!("Notebook {shown} has no cells array.")))?;
        let index = match &input.cell_id {
            Some(id) => Some(find_cell(cells, id).ok_or_else(|| {
                ToolError::msg(format!("Cell with ID \"{id}\" not found in notebook."))
            })?),
            None => None,
        };
        let edit = match mode {
            EditMode::Delete => delete_cell(cells, index)?,
            EditMode::Insert => insert_cell(cells, index, &input, with_ids)?,
            EditMode::Replace => replace_cell(cells, index, &input, &shown)?,
        };

        let updated = to_notebook_json(&nb)?;
        tokio::fs::write(&path, updated.as_bytes())
            .await
            .map_err(|e| ToolError::io(format!("Cannot write {shown}"), e))?;
        self.state.record_read(&path);

        let mut raw = json!({
            "new_source": input.new_source,
            "cell_id": edit.id,
            "cell_type": edit.cell_type,
            "language": lang,
            "edit_mode": mode.as_str(),
            "notebook_path": shown,
            "original_file": original,
            "updated_file": updated,
        });
        if let Some(old) = edit.old_source {
            raw["old_source"] = json!(old);
        }
        Ok(ToolOutput::text(edit.text).with_raw(raw))
    }
}

/// The notebook's text as it is on disk.
async fn read_notebook_file(path: &Path, shown: &str) -> Result<String, ToolError> {
    match tokio::fs::read_to_string(path).await {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::msg(format!(
            "Notebook file does not exist: {shown}"
        ))),
        Err(e) => Err(ToolError::io(format!("Cannot read {shown}"), e)),
    }
}

/// `edit_mode=delete`: removes the cell at `index`.
fn delete_cell(cells: &mut Vec<Value>, index: Option<usize>) -> Result<CellEdit, ToolError> {
    let i =
        index.ok_or_else(|| ToolError::msg("cell_id must be specified when deleting a cell."))?;
    let removed = cells.remove(i);
    let id = cell_id(&removed, i);
    let cell_type = removed
        .get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("code")
        .to_string();
    let old = source_text(removed.get("source"));
    Ok(CellEdit {
        text: format!("Deleted cell {id}"),
        id,
        cell_type,
        old_source: Some(old),
    })
}

/// `edit_mode=insert`: a new cell after the one at `index` (or first).
fn insert_cell(
    cells: &mut Vec<Value>,
    index: Option<usize>,
    input: &NotebookEditInput,
    with_ids: bool,
) -> Result<CellEdit, ToolError> {
    let ty = input
        .cell_type
        .ok_or_else(|| ToolError::msg("cell_type is required when using edit_mode=insert."))?;
    let at = index.map_or(0, |i| i + 1);
    let mut cell = Map::new();
    cell.insert("cell_type".into(), json!(ty.as_str()));
    let id = if with_ids {
        let id = new_id(cells);
        cell.insert("id".into(), json!(id));
        id
    } else {
        format!("cell-{at}")
    };
    cell.insert("metadata".into(), json!({}));
    cell.insert("source".into(), json!(input.new_source));
    if ty == CellType::Code {
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    }
    cells.insert(at, Value::Object(cell));
    Ok(CellEdit {
        text: format!("Inserted cell {id} with {}", input.new_source),
        id,
        cell_type: ty.as_str().to_string(),
        old_source: None,
    })
}

/// `edit_mode=replace`: new source (and maybe type) for the cell at
/// `index`; a code cell's old outputs are cleared.
fn replace_cell(
    cells: &mut [Value],
    index: Option<usize>,
    input: &NotebookEditInput,
    shown: &str,
) -> Result<CellEdit, ToolError> {
    let i = index.ok_or_else(|| {
        ToolError::msg(
            "cell_id must be specified when replacing a cell (use edit_mode=insert \
             to add one).",
        )
    })?;
    let cell = cells[i]
        .as_object_mut()
        .ok_or_else(|| ToolError::msg(format!("Cell {i} of notebook {shown} is not an object.")))?;
    let old = source_text(cell.get("source"));
    let old_type = cell
        .get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("code")
        .to_string();
    let ty = input.cell_type.map_or(old_type, |t| t.as_str().to_string());
    cell.insert("cell_type".into(), json!(ty));
    cell.insert("source".into(), json!(input.new_source));
    if ty == "code" {
        // The old results no longer match the source.
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    } else {
        cell.remove("execution_count");
        cell.remove("outputs");
    }
    let id = cell_id(&cells[i], i);
    Ok(CellEdit {
        text: format!("Updated cell {id} with {}", input.new_source),
        id,
        cell_type: ty,
        old_source: Some(old),
    })
}

/// The text of a cell's outputs: streams, `text/plain` results and errors;
/// other data is noted by type.
fn outputs_text(cell: &Value) -> (String, Vec<Value>) {
    let mut parts = Vec::new();
    let mut raw = Vec::new();
    for out in cell
        .get("outputs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = out.get("output_type").and_then(Value::as_str).unwrap_or("");
        let text = match kind {
            "stream" => source_text(out.get("text")),
            "execute_result" | "display_data" => {
                let data = out.get("data");
                match data.and_then(|d| d.get("text/plain")) {
                    Some(t) => source_text(Some(t)),
                    None => {
                        let types: Vec<&str> = data
                            .and_then(Value::as_object)
                            .map(|m| m.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        format!("[{} output omitted]", types.join(", "))
                    }
                }
            }
            "error" => {
                let name = out.get("ename").and_then(Value::as_str).unwrap_or("Error");
                let value = out.get("evalue").and_then(Value::as_str).unwrap_or("");
                format!("{name}: {value}")
            }
            _ => continue,
        };
        parts.push(text.trim_end_matches('\n').to_string());
        raw.push(json!({"output_type": kind, "text": text}));
    }
    (parts.join("\n"), raw)
}

/// Renders a notebook for Read: each cell with its id, type, source and
/// text outputs. Returns the text and the raw `cells`.
pub(crate) fn render_notebook(text: &str, path: &Path) -> Result<(String, Vec<Value>), ToolError> {
    let shown = path.display().to_string();
    let nb = parse_notebook(text, &shown)?;
    let lang = language(&nb);
    let mut blocks = Vec::new();
    let mut cells_raw = Vec::new();
    for (i, cell) in cells_of(&nb).into_iter().flatten().enumerate() {
        let id = cell_id(cell, i);
        let ty = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        let source = source_text(cell.get("source"));
        let mut block = format!("<cell id=\"{id}\">");
        if ty != "code" {
            block.push_str(&format!("<cell_type>{ty}</cell_type>"));
        }
        block.push_str(&source);
        let (outputs, outputs_raw) = outputs_text(cell);
        if !outputs.is_empty() {
            let (kept, cut) = truncate_chars(&outputs, MAX_OUTPUT_CHARS);
            block.push_str("\n<outputs>\n");
            block.push_str(kept);
            if cut {
                block.push_str("\n… [outputs truncated]");
            }
            block.push_str("\n</outputs>");
        }
        block.push_str(&format!("</cell id=\"{id}\">"));
        blocks.push(block);
        let mut raw = json!({
            "cell_id": id,
            "cellType": ty,
            "source": source,
            "language": lang,
        });
        if ty == "code" {
            raw["execution_count"] = cell.get("execution_count").cloned().unwrap_or(Value::Null);
            raw["outputs"] = Value::Array(outputs_raw);
        }
        cells_raw.push(raw);
    }
    let text = if blocks.is_empty() {
        "<system-reminder>Warning: the notebook exists but has no cells.</system-reminder>"
            .to_string()
    } else {
        blocks.join("\n")
    };
    Ok((text, cells_raw))
}
