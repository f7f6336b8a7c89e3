//! Reading one settings file: its text, then either the whole file typed
//! and checked ([`parse`]) or its JSON for a section read on its own
//! ([`read_json`]).

use std::path::Path;

use serde_json::Value;

use crate::error::{FileError, SettingsError};
use crate::sections::Settings;

/// The text of the file at `path`; `None` when it does not exist.
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, std::io::Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A settings file's text, typed and checked ([`Settings::validate`]);
/// errors name it `path` (`--settings` for inline JSON).
pub fn parse(text: &str, path: &str) -> Result<Settings, SettingsError> {
    let settings: Settings = serde_json::from_str(text).map_err(|e| SettingsError::Parse {
        path: path.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    settings
        .validate()
        .map_err(|message| SettingsError::Invalid {
            path: path.to_string(),
            message,
        })?;
    Ok(settings)
}

/// The JSON of the settings file at `path`, unchecked beyond being JSON
/// (for a section read on its own, see [`FileError`]); `None` when the
/// file does not exist.
pub fn read_json(path: &Path) -> Result<Option<Value>, FileError> {
    let Some(text) = read_text(path).map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?
    else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| FileError::NotJson {
            path: path.to_path_buf(),
            source,
        })
}
