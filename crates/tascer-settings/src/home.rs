//! The Tascer home's own settings file, and what only it may set.
//!
//! `$TASCER_HOME/settings.json` is the user layer of Tascer's settings,
//! and the only file the per-host settings are read from: `store`, where
//! the home's sessions and ledger are kept. A project's settings files
//! cannot move a session's records elsewhere.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::FileError;
use crate::file::read_json;

/// The name of the home's own settings file.
pub const HOME_SETTINGS_FILE: &str = "settings.json";

/// The key naming the store, in the home's own settings file.
pub const STORE: &str = "store";

/// The home's own settings file, `<tascer_home>/settings.json`.
pub fn home_settings_file(tascer_home: &Path) -> PathBuf {
    tascer_home.join(HOME_SETTINGS_FILE)
}

/// The settings only the home's own file sets (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostSettings {
    /// The `store` value, when it is set and not blank (`tascer-store`
    /// interprets it).
    pub store: Option<String>,
}

impl HostSettings {
    /// Reads them from the home's own file (none when it does not exist).
    /// Only these sections are looked at: the rest of the file is read
    /// where it is used.
    pub fn read(tascer_home: &Path) -> Result<HostSettings, FileError> {
        let path = home_settings_file(tascer_home);
        let Some(json) = read_json(&path)? else {
            return Ok(HostSettings::default());
        };
        let store = match json.get(STORE) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(FileError::Invalid {
                    path,
                    message: format!("\"{STORE}\" must be a string, not {other}"),
                });
            }
        };
        Ok(HostSettings { store })
    }
}
