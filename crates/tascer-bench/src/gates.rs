//! The default validation gates of an `Edit` call (`file_protected` before;
//! `syntax_valid` and `no_secrets_leaked` after), against the cost of the
//! `Edit` tool call itself. `tests_pass` is not a default gate and is left
//! out.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tascer::guard::gates::{
    BuiltinOptions, GateContext, GateRegistry, GateRunner, Phase, ValidationConfig,
};
use tascer::tools::{EditTool, ReadTool, ToolState};
use tascer::{Tool, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::stats::{Stats, Table, ms_since};

/// Timed runs per measure (after warm-up).
const RUNS: usize = 1_000;
/// Untimed runs before each measure.
const WARMUP: usize = 50;

/// A ~200-line Rust file.
fn rust_source() -> String {
    let mut s =
        String::from("//! Generated for the gate benchmark.\n\nuse std::collections::HashMap;\n\n");
    for i in 0..25 {
        s.push_str(&format!(
            "/// Function {i}.\npub fn step_{i}(map: &mut HashMap<String, u64>, key: &str) -> u64 {{\n    \
             let entry = map.entry(key.to_string()).or_insert(0);\n    *entry += {i};\n    \
             if *entry > 1000 {{\n        *entry = 0;\n    }}\n    *entry\n}}\n\n"
        ));
    }
    s.push_str("pub const MARKER: &str = \"VALUE_A\";\n");
    s
}

/// A ~200-line Python file.
fn python_source() -> String {
    let mut s = String::from("\"\"\"Generated for the gate benchmark.\"\"\"\n\nimport os\n\n");
    for i in 0..25 {
        s.push_str(&format!(
            "def step_{i}(mapping, key):\n    \"\"\"Step {i}.\"\"\"\n    value = mapping.get(key, 0) + {i}\n    \
             if value > 1000:\n        value = 0\n    mapping[key] = value\n    return value\n\n"
        ));
    }
    s.push_str("MARKER = \"VALUE_A\"\n");
    s
}

/// A tool context for bench calls in `cwd` (shared by the groups that
/// call tools directly).
pub(crate) fn tool_context(cwd: &Path) -> ToolContext {
    ToolContext {
        session_id: "bench".into(),
        tool_use_id: "toolu_bench".into(),
        cwd: ToolContext::shared_cwd(cwd),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}

fn edit_input(path: &Path, from: &str, to: &str) -> Value {
    json!({"file_path": path, "old_string": from, "new_string": to})
}

struct Measured {
    pre: Stats,
    post: Stats,
    /// Each post-gate alone.
    post_each: Vec<(String, Stats)>,
    total: Stats,
    edit: Stats,
    /// Reading the file as `syntax_valid` does (`tokio::fs`).
    read: Stats,
}

/// Times the gates and the Edit call for one file.
async fn measure(cwd: &Path, file: &Path, runner: &GateRunner) -> anyhow::Result<Measured> {
    let config = ValidationConfig::default();
    let state = ToolState::new();
    let ctx = tool_context(cwd);
    let read = ReadTool::new(state.clone());
    let edit = EditTool::new(state);
    let out = read.call(json!({"file_path": file}), &ctx).await;
    if out.is_error {
        bail!("Read failed: {:?}", out.content);
    }
    let post_output =
        tascer::ToolOutput::text(format!("The file {} has been updated.", file.display()));

    let (mut pre, mut post, mut total, mut edits) = (vec![], vec![], vec![], vec![]);
    let mut reads = Vec::new();
    let post_gates = config.for_tool("Edit").post_gates.clone();
    let mut post_each: Vec<Vec<f64>> = vec![Vec::new(); post_gates.len()];
    for i in 0..(WARMUP + RUNS) {
        let (from, to) = if i % 2 == 0 {
            ("VALUE_A", "VALUE_B")
        } else {
            ("VALUE_B", "VALUE_A")
        };
        let input = edit_input(file, from, to);
        let pre_ctx = GateContext::new(Phase::Pre, "Edit", input.clone(), cwd.to_path_buf());
        let t = Instant::now();
        let pre_results = runner.run(Phase::Pre, &pre_ctx, &config).await;
        let pre_ms = ms_since(t);

        let t = Instant::now();
        let out = edit.call(input.clone(), &ctx).await;
        let edit_ms = ms_since(t);
        if out.is_error {
            bail!("Edit failed: {:?}", out.content);
        }

        let post_ctx = GateContext::new(Phase::Post, "Edit", input, cwd.to_path_buf())
            .with_output(post_output.clone());
        let t = Instant::now();
        let post_results = runner.run(Phase::Post, &post_ctx, &config).await;
        let post_ms = ms_since(t);

        if pre_results.len() != 1 || post_results.len() != 2 {
            bail!("unexpected default gates: {pre_results:?} {post_results:?}");
        }
        if let Some(failed) = pre_results.iter().chain(&post_results).find(|r| !r.passed) {
            bail!("gate {} failed: {}", failed.gate, failed.message);
        }
        for (name, samples) in post_gates.iter().zip(post_each.iter_mut()) {
            let gate = runner
                .registry()
                .get(name)
                .with_context(|| format!("no gate {name}"))?;
            let t = Instant::now();
            std::hint::black_box(gate.check(&post_ctx).await);
            if i >= WARMUP {
                samples.push(ms_since(t));
            }
        }
        let t = Instant::now();
        std::hint::black_box(tokio::fs::read_to_string(file).await?);
        let read_ms = ms_since(t);
        if i >= WARMUP {
            reads.push(read_ms);
            pre.push(pre_ms);
            post.push(post_ms);
            total.push(pre_ms + post_ms);
            edits.push(edit_ms);
        }
    }
    Ok(Measured {
        pre: Stats::of(pre),
        post: Stats::of(post),
        post_each: post_gates
            .into_iter()
            .zip(post_each)
            .map(|(name, samples)| (name, Stats::of(samples)))
            .collect(),
        total: Stats::of(total),
        edit: Stats::of(edits),
        read: Stats::of(reads),
    })
}

/// Runs the gates benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temp dir")?;
    let cwd = tmp.path().canonicalize()?;
    std::fs::create_dir_all(cwd.join("src"))?;
    let rs = cwd.join("src/lib.rs");
    let py = cwd.join("src/app.py");
    std::fs::write(&rs, rust_source())?;
    std::fs::write(&py, python_source())?;
    let registry = GateRegistry::with_builtins(&BuiltinOptions::default())
        .context("cannot build the gate registry")?;
    let runner = GateRunner::new(registry);

    let mut table = Table::new(
        format!("Default gates of an Edit call ({RUNS} edits per file, ~200-line files)"),
        "ratio / Edit call",
    );
    for (label, file) in [("Rust `src/lib.rs`", &rs), ("Python `src/app.py`", &py)] {
        let m = measure(&cwd, file, &runner).await?;
        let r = |s: &Stats| Some(s.median / m.edit.median);
        table.row(
            format!("{label}: pre-gates (`file_protected`)"),
            &m.pre,
            r(&m.pre),
        );
        table.row(
            format!("{label}: post-gates (`syntax_valid` + `no_secrets_leaked`)"),
            &m.post,
            r(&m.post),
        );
        for (name, stats) in &m.post_each {
            table.row(format!("{label}: … `{name}` alone"), stats, r(stats));
        }
        table.row(
            format!("{label}: … part of `syntax_valid`: `tokio::fs::read_to_string` of the file"),
            &m.read,
            r(&m.read),
        );
        table.row(format!("{label}: pre + post"), &m.total, r(&m.total));
        table.row(
            format!("{label}: baseline: the Edit tool call itself"),
            &m.edit,
            Some(1.0),
        );
    }
    table.print();
    Ok(())
}
