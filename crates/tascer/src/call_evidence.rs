//! The evidence a call's record keeps, by the kinds its validation names
//! (`evidence`: `stdout`, `stderr`, `diff`, `file`): what the files it
//! writes held before it ran, then what it produced.
//!
//! - `stdout`: the tool's standard output (`raw.stdout`, Bash), else the
//!   output text; every tool has one.
//! - `stderr`: the tool's standard error (`raw.stderr`); only tools that
//!   have one (Bash).
//! - `diff`: a unified diff of each file a writing tool names (Write,
//!   Edit, MultiEdit, NotebookEdit), before against after.
//! - `file`: each such file's content after the call.
//!
//! A kind the tool cannot produce is left out; a kind it can produce but
//! that could not be captured (a file that cannot be read) is `missing`,
//! which fails a call whose validation requires proof. Text is stored as
//! the session gives it (redacted for tools `no_secrets_leaked` checks).

use std::path::{Path, PathBuf};

use serde_json::Value;
use similar::TextDiff;
use tascer_core::ToolOutput;
use tascer_guard::gates::EvidenceKind;

use crate::call_context::changed_files;

/// What was read before a call, for the evidence taken after it.
pub(crate) struct CallEvidence {
    kinds: Vec<EvidenceKind>,
    /// The files the call writes, each with its content before the call
    /// (`None`: it did not exist or could not be read), when a diff is
    /// kept.
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

/// The evidence taken after a call.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// Each piece with its kind, in the order of [`EvidenceKind::ALL`].
    pub pieces: Vec<(EvidenceKind, Vec<u8>)>,
    /// Kinds the call could produce but that could not be captured.
    pub missing: Vec<EvidenceKind>,
}

impl CallEvidence {
    /// Reads what the evidence of `kinds` needs before the call of
    /// `tool_name` with `input` in `cwd` runs: the files a diff is taken
    /// of. Reads nothing when no kind is configured.
    pub fn before(kinds: Vec<EvidenceKind>, tool_name: &str, input: &Value, cwd: &Path) -> Self {
        let wants_files = kinds
            .iter()
            .any(|k| matches!(k, EvidenceKind::Diff | EvidenceKind::File));
        let files = if wants_files {
            let keep_before = kinds.contains(&EvidenceKind::Diff);
            changed_files(tool_name, input, cwd)
                .into_iter()
                .map(|f| {
                    let before = keep_before.then(|| std::fs::read(&f).ok()).flatten();
                    (f, before)
                })
                .collect()
        } else {
            Vec::new()
        };
        CallEvidence { kinds, files }
    }

    /// True when nothing is to be captured.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The evidence of a call that ran and returned `output`, each text
    /// passed through `store` (redaction) first.
    pub fn after(
        self,
        output: &ToolOutput,
        cwd: &Path,
        store: impl Fn(&str) -> String,
    ) -> Captured {
        let mut captured = Captured::default();
        for kind in EvidenceKind::ALL {
            if !self.kinds.contains(&kind) {
                continue;
            }
            match kind {
                EvidenceKind::Stdout => {
                    let text =
                        raw_text(output, "stdout").unwrap_or_else(|| output.content.to_text());
                    captured.pieces.push((kind, store(&text).into_bytes()));
                }
                EvidenceKind::Stderr => {
                    if let Some(text) = raw_text(output, "stderr") {
                        captured.pieces.push((kind, store(&text).into_bytes()));
                    }
                }
                EvidenceKind::Diff => self.diffs(cwd, &store, &mut captured),
                EvidenceKind::File => self.contents(&store, &mut captured),
                _ => {}
            }
        }
        captured
    }

    /// A unified diff of each file, before against after.
    fn diffs(&self, cwd: &Path, store: &impl Fn(&str) -> String, captured: &mut Captured) {
        for (file, before) in &self.files {
            let Ok(after) = std::fs::read(file) else {
                captured.missing.push(EvidenceKind::Diff);
                continue;
            };
            let before = String::from_utf8_lossy(before.as_deref().unwrap_or_default());
            let after = String::from_utf8_lossy(&after);
            let name = file.strip_prefix(cwd).unwrap_or(file).display().to_string();
            let diff = TextDiff::from_lines(before.as_ref(), after.as_ref())
                .unified_diff()
                .header(&format!("a/{name}"), &format!("b/{name}"))
                .to_string();
            captured
                .pieces
                .push((EvidenceKind::Diff, store(&diff).into_bytes()));
        }
    }

    /// Each file's content after the call (text redacted, other bytes as
    /// they are).
    fn contents(&self, store: &impl Fn(&str) -> String, captured: &mut Captured) {
        for (file, _) in &self.files {
            match std::fs::read(file) {
                Ok(bytes) => {
                    let bytes = match std::str::from_utf8(&bytes) {
                        Ok(text) => store(text).into_bytes(),
                        Err(_) => bytes,
                    };
                    captured.pieces.push((EvidenceKind::File, bytes));
                }
                Err(_) => captured.missing.push(EvidenceKind::File),
            }
        }
    }
}

/// A string field of the output's raw value.
fn raw_text(output: &ToolOutput, field: &str) -> Option<String> {
    output
        .raw
        .as_ref()?
        .get(field)?
        .as_str()
        .map(str::to_string)
}
