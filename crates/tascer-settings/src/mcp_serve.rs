//! The `mcpServe` section's switches for the gatekeeper (`tascer mcp
//! serve`), other than its `check` commands ([`crate::check_settings`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::FileError;
use crate::file::read_json;
use crate::loader::SettingsLoader;

/// The setting that lets the gatekeeper's `confirm` confirm on a passing
/// check alone when no reviewer model is configured:
/// `{"mcpServe": {"confirmWithoutModel": true}}`. Without it, `confirm`
/// with no model declines (fails closed).
pub const CONFIRM_WITHOUT_MODEL: &str = "/mcpServe/confirmWithoutModel";

/// `mcpServe.confirmWithoutModel` for the repository `repo` under the
/// Tascer home `tascer_home`, with the file that sets it: from
/// `.tascer/settings.local.json`, else `.tascer/settings.json`, else the
/// home's `settings.json` (the first file that sets it wins). `None` when
/// no file sets it; `Err` when a file cannot be read or sets it to
/// something other than `true` or `false`.
pub fn confirm_without_model(
    repo: &Path,
    tascer_home: &Path,
) -> Result<Option<(PathBuf, bool)>, FileError> {
    for file in SettingsLoader::for_home(repo, tascer_home).files() {
        let Some(json) = read_json(&file.path)? else {
            continue;
        };
        match json.pointer(CONFIRM_WITHOUT_MODEL) {
            None => {}
            Some(Value::Bool(yes)) => return Ok(Some((file.path, *yes))),
            Some(_) => {
                return Err(FileError::Invalid {
                    path: file.path,
                    message: "mcpServe.confirmWithoutModel must be true or false".into(),
                });
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_project_file_then_the_home_file_decide() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        assert_eq!(
            confirm_without_model(repo.path(), home.path()).unwrap(),
            None
        );
        let user = home.path().join("settings.json");
        std::fs::write(&user, r#"{"mcpServe": {"confirmWithoutModel": true}}"#).unwrap();
        assert_eq!(
            confirm_without_model(repo.path(), home.path()).unwrap(),
            Some((user, true))
        );
        std::fs::create_dir(repo.path().join(".tascer")).unwrap();
        let project = repo.path().join(".tascer/settings.json");
        std::fs::write(&project, r#"{"mcpServe": {"confirmWithoutModel": false}}"#).unwrap();
        assert_eq!(
            confirm_without_model(repo.path(), home.path()).unwrap(),
            Some((project.clone(), false))
        );
        std::fs::write(&project, r#"{"mcpServe": {"confirmWithoutModel": "yes"}}"#).unwrap();
        let err = confirm_without_model(repo.path(), home.path()).unwrap_err();
        assert!(err.to_string().contains("true or false"), "{err}");
    }
}
