//! What can go wrong reading settings.

use std::path::PathBuf;

use thiserror::Error;

/// A failure of the layered read ([`SettingsLoader::read`](crate::SettingsLoader::read)):
/// a file that cannot be read or parsed, a value that does not make sense,
/// or (found by `tascer-guard` as it parses the rules) a malformed
/// permission rule. Each message names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file exists but cannot be read (or a `--settings` file is missing).
    #[error("cannot read settings file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Malformed JSON or wrong value types.
    #[error("invalid settings in {path} at line {line}, column {column}: {message}")]
    Parse {
        /// The file (or `--settings` for inline JSON).
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed JSON whose values do not make sense together.
    #[error("invalid settings in {path}: {message}")]
    Invalid {
        /// The file (or `--settings`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A malformed permission rule.
    #[error("invalid settings in {path}: {source}")]
    Rule {
        /// The file.
        path: String,
        /// The rule error (`tascer_guard::permissions::RuleError`).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A failure reading one section of one file on its own (the home's
/// `store`, a repository's `check`): the file cannot be read, is not JSON,
/// or the section is malformed. The rest of the file is not checked, so a
/// bad value elsewhere does not stop the part that reads this section.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file cannot be written (a settings edit).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{} is not valid JSON: {source}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The section is malformed.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and how it should look.
        message: String,
    },
}
