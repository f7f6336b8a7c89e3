//! The `Grep` and `Glob` tools against ripgrep on a generated tree.
//!
//! The tree: ~20k source files (.rs/.py/.txt, a few MB) in nested
//! directories, plus a `target/` directory and `*.log` files that
//! `.gitignore` excludes (they contain matches too, so a search that does
//! not honour `.gitignore` finds more). Content comes from a seeded
//! generator, so every run searches the same bytes.
//!
//! `rg` runs as a subprocess with `--hidden --no-require-git` (the tools
//! search hidden files and honour `.gitignore` outside a git repository);
//! its output is read through a pipe, like the tool's output is collected
//! in memory. Both sides are warmed up first (page cache, `rg` binary).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tascer::tools::{GlobTool, GrepTool};
use tascer::{Tool, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::stats::{Stats, Table, ms_since};

/// Searched source files.
const FILES: usize = 20_000;
/// Files under the ignored `target/` directory.
const IGNORED_FILES: usize = 2_000;
/// Ignored `*.log` files.
const LOG_FILES: usize = 500;
/// Measured runs per measure and side (after warm-up).
const RUNS: usize = 15;
/// Warm-up runs per measure and side.
const WARMUP: usize = 2;
/// The regex searched for.
const PATTERN: &str = r"TODO\([a-z]+\): \w+";

/// xorshift64*: a tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "alpha", "buffer", "cache", "delta", "engine", "frame", "graph", "handle", "index", "join",
    "kernel", "ledger", "matrix", "node", "offset", "parser", "query", "record", "signal", "token",
    "update", "vector", "window", "yield", "zone", "batch", "chunk", "digest", "event", "field",
    "gate", "hook", "input", "layer", "model", "output", "policy", "result", "stream", "value",
];

/// One file's content: 2–14 lines, about 1 in 50 with a TODO marker.
fn content(rng: &mut Rng, ext: &str) -> String {
    let lines = 2 + rng.below(13);
    let mut out = String::new();
    for _ in 0..lines {
        let n = rng.below(1000);
        let (a, b, c) = (rng.word(), rng.word(), rng.word());
        if rng.below(50) == 0 {
            let comment = if ext == "py" { "#" } else { "//" };
            out.push_str(&format!("{comment} TODO({a}): {b} the {c}\n"));
            continue;
        }
        let line = match ext {
            "rs" => match rng.below(3) {
                0 => format!("fn {a}_{n}({b}: u32) -> u32 {{ {b} + {n} }}\n"),
                1 => format!("    let {a} = {b}::{c}({n});\n"),
                _ => format!("// {a} {b} {c} {n}\n"),
            },
            "py" => match rng.below(3) {
                0 => format!("def {a}_{n}({b}):\n"),
                1 => format!("    return {b}.{c}({n})\n"),
                _ => format!("# {a} {b} {c}\n"),
            },
            _ => format!("The {a} {b} the {c} after {n} steps.\n"),
        };
        out.push_str(&line);
    }
    out
}

/// Writes the tree; returns its size in bytes.
fn generate(root: &Path) -> anyhow::Result<u64> {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut bytes = 0u64;
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n")?;
    let mut write = |rel: String, ext: &str, rng: &mut Rng| -> anyhow::Result<()> {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let body = content(rng, ext);
        bytes += body.len() as u64;
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))
    };
    for i in 0..FILES {
        let ext = ["rs", "py", "txt"][i % 3];
        let rel = format!(
            "crate{:02}/src/mod{:02}/f{i:05}.{ext}",
            i / 1000,
            (i / 20) % 50
        );
        write(rel, ext, &mut rng)?;
    }
    for i in 0..IGNORED_FILES {
        let rel = format!("target/debug/build/b{:02}/g{i:05}.rs", i / 100);
        write(rel, "rs", &mut rng)?;
    }
    for i in 0..LOG_FILES {
        write(format!("logs/run{i:04}.log"), "txt", &mut rng)?;
    }
    Ok(bytes)
}

fn context(root: &Path) -> ToolContext {
    ToolContext {
        session_id: "bench".into(),
        tool_use_id: "toolu_bench".into(),
        cwd: ToolContext::shared_cwd(root),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}

/// One tool call: time (ms) and the count at `count_key` of its raw output.
async fn tool_run(
    tool: &dyn Tool,
    ctx: &ToolContext,
    input: &Value,
    count_key: &str,
) -> anyhow::Result<(f64, u64)> {
    let start = Instant::now();
    let out = tool.call(input.clone(), ctx).await;
    let ms = ms_since(start);
    if out.is_error {
        bail!("{} failed: {:?}", tool.name(), out.content);
    }
    let count = out
        .raw
        .as_ref()
        .and_then(|r| r[count_key].as_u64())
        .unwrap_or(0);
    Ok((ms, count))
}

/// One `rg` run: time (ms) and its number of output lines.
fn rg_run(args: &[String]) -> anyhow::Result<(f64, u64)> {
    let start = Instant::now();
    let out = Command::new("rg")
        .args(args)
        .output()
        .context("cannot run rg")?;
    let ms = ms_since(start);
    // 1 = no match; anything else is an error.
    if !matches!(out.status.code(), Some(0 | 1)) {
        bail!(
            "rg {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let lines = out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    Ok((ms, lines.count() as u64))
}

/// The installed ripgrep's version line, if any.
fn rg_version() -> Option<String> {
    let out = Command::new("rg").arg("--version").output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    })
}

struct Measure {
    label: &'static str,
    rg_label: String,
    tool: Arc<dyn Tool>,
    input: Value,
    count_key: &'static str,
    rg_args: Vec<String>,
}

/// Runs the search benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temp dir")?;
    let root = tmp.path().join("tree");
    std::fs::create_dir_all(&root)?;
    let started = Instant::now();
    let bytes = generate(&root)?;
    eprintln!(
        "search: generated {} files ({:.1} MB) in {:.1} s",
        FILES + IGNORED_FILES + LOG_FILES,
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let rg = rg_version();
    let ctx = context(&root);
    let mut table = Table::new(
        format!(
            "Grep and Glob tools vs ripgrep ({} searched files + {} ignored, {:.1} MB, {RUNS} runs each, warm cache)",
            FILES,
            IGNORED_FILES + LOG_FILES,
            bytes as f64 / 1e6
        ),
        "ratio tool / rg",
    );
    for m in &measures(&root.display().to_string()) {
        let times = m.time(&ctx, rg.is_some()).await?;
        m.add_rows(&mut table, times, rg.is_some());
    }
    match rg {
        Some(v) => table.note(format!(
            "ripgrep: {v}, run as `rg --hidden --no-require-git …` with output read through a pipe. \
             Goal: tool within 1.3× of rg."
        )),
        None => table.note(
            "ripgrep is not installed (scripts/bench tries `apt-get install -y ripgrep`); rg rows skipped.",
        ),
    }
    table.print();
    Ok(())
}

/// Each tool search and the `rg` command it is compared with.
fn measures(root_s: &str) -> [Measure; 3] {
    let rg_common = ["--hidden", "--no-require-git"].map(String::from);
    let with_common = |args: &[&str]| -> Vec<String> {
        rg_common
            .iter()
            .cloned()
            .chain(args.iter().map(|s| s.to_string()))
            .collect()
    };
    let grep: Arc<dyn Tool> = Arc::new(GrepTool::new());
    let glob: Arc<dyn Tool> = Arc::new(GlobTool::new());
    [
        Measure {
            label: "Grep `files_with_matches`",
            rg_label: format!("`rg -l '{PATTERN}'`"),
            tool: grep.clone(),
            input: json!({"pattern": PATTERN, "path": root_s}),
            count_key: "numFiles",
            rg_args: with_common(&["-l", PATTERN, root_s]),
        },
        Measure {
            label: "Grep `content` (-n)",
            rg_label: format!("`rg -n '{PATTERN}'`"),
            tool: grep.clone(),
            input: json!({"pattern": PATTERN, "path": root_s, "output_mode": "content"}),
            count_key: "numLines",
            rg_args: with_common(&["-n", PATTERN, root_s]),
        },
        Measure {
            label: "Glob `**/*.rs`",
            rg_label: "`rg --files -g '*.rs'`".into(),
            tool: glob.clone(),
            input: json!({"pattern": "**/*.rs", "path": root_s}),
            count_key: "totalMatches",
            rg_args: with_common(&["--files", "-g", "*.rs", root_s]),
        },
    ]
}

/// The timings of one measure, and the result counts of its last run.
struct Times {
    tool: Vec<f64>,
    rg: Vec<f64>,
    tool_count: u64,
    rg_count: u64,
}

impl Measure {
    /// `WARMUP` untimed runs, then `RUNS` timed ones, tool and `rg`
    /// interleaved (`rg` only when installed).
    async fn time(&self, ctx: &ToolContext, with_rg: bool) -> anyhow::Result<Times> {
        for _ in 0..WARMUP {
            tool_run(self.tool.as_ref(), ctx, &self.input, self.count_key).await?;
            if with_rg {
                rg_run(&self.rg_args)?;
            }
        }
        let mut times = Times {
            tool: Vec::new(),
            rg: Vec::new(),
            tool_count: 0,
            rg_count: 0,
        };
        for _ in 0..RUNS {
            let (ms, n) = tool_run(self.tool.as_ref(), ctx, &self.input, self.count_key).await?;
            times.tool.push(ms);
            times.tool_count = n;
            if with_rg {
                let (ms, n) = rg_run(&self.rg_args)?;
                times.rg.push(ms);
                times.rg_count = n;
            }
        }
        Ok(times)
    }

    /// The tool's row and `rg`'s (or a note that `rg` was skipped).
    fn add_rows(&self, table: &mut Table, times: Times, with_rg: bool) {
        let Times {
            tool,
            rg,
            tool_count,
            rg_count,
        } = times;
        let tool_stats = Stats::of(tool);
        if with_rg {
            let rg_stats = Stats::of(rg);
            table.row(
                format!("{} ({tool_count} results)", self.label),
                &tool_stats,
                Some(tool_stats.median / rg_stats.median),
            );
            table.row(
                format!("{} ({rg_count} results)", self.rg_label),
                &rg_stats,
                Some(1.0),
            );
            if tool_count != rg_count {
                table.note(format!(
                    "WARNING: {} found {tool_count} results but rg found {rg_count}.",
                    self.label
                ));
            }
        } else {
            table.row(
                format!("{} ({tool_count} results)", self.label),
                &tool_stats,
                None,
            );
            table.raw_row(
                format!("{} — skipped: rg is not installed", self.rg_label),
                "",
                "",
                "",
            );
        }
    }
}
