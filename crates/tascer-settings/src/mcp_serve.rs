//! The `mcpServe` section's switches for the gatekeeper (`tascer mcp
//! serve`), other than its `check` commands ([`crate::check_settings`]):
//! `confirmWithoutModel` and `models` (a model per tool).

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

/// Where `mcpServe.models` is: a model per gatekeeper tool,
/// `{"mcpServe": {"models": {"confirm": "opus", "validateIntent": "sonnet",
/// "commitMessage": "haiku"}}}`.
pub const MCP_MODELS: &str = "/mcpServe/models";

/// The keys `mcpServe.models` takes: the gatekeeper's questions to a model
/// (`confirm`'s review, also in `commit`'s chain; `commit`'s message;
/// `validate_intent`'s judgement).
pub const MCP_MODEL_TOOLS: &[&str] = &["confirm", "commitMessage", "validateIntent"];

/// The model `mcpServe.models.<tool>` names for the repository `repo`
/// under the Tascer home `tascer_home`, with the file that names it: from
/// `.tascer/settings.local.json`, else `.tascer/settings.json`, else the
/// home's `settings.json` (the first file that names one wins). `None`
/// when no file names one. `Err` when a file cannot be read, or its
/// `mcpServe.models` is not an object of model names keyed by
/// [`MCP_MODEL_TOOLS`] (every file is checked, not only the one that
/// wins).
pub fn mcp_model(
    repo: &Path,
    tascer_home: &Path,
    tool: &str,
) -> Result<Option<(PathBuf, String)>, FileError> {
    let mut found = None;
    for file in SettingsLoader::for_home(repo, tascer_home).files() {
        let Some(json) = read_json(&file.path)? else {
            continue;
        };
        let Some(models) = json.pointer(MCP_MODELS) else {
            continue;
        };
        let invalid = |message: String| FileError::Invalid {
            path: file.path.clone(),
            message,
        };
        let Value::Object(models) = models else {
            return Err(invalid(
                "mcpServe.models must be an object: {\"confirm\": \"opus\", …}".into(),
            ));
        };
        for (key, value) in models {
            if !MCP_MODEL_TOOLS.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "mcpServe.models: unknown tool {key:?} (expected one of {})",
                    MCP_MODEL_TOOLS.join(", ")
                )));
            }
            let Some(model) = value.as_str().map(str::trim).filter(|m| !m.is_empty()) else {
                return Err(invalid(format!(
                    "mcpServe.models.{key} must be a model name (a string)"
                )));
            };
            if key == tool && found.is_none() {
                found = Some((file.path.clone(), model.to_string()));
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_model_per_tool_the_first_file_wins_and_unknown_tools_are_errors() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        assert_eq!(
            mcp_model(repo.path(), home.path(), "confirm").unwrap(),
            None
        );
        let user = home.path().join("settings.json");
        std::fs::write(
            &user,
            r#"{"mcpServe": {"models": {"confirm": "opus", "validateIntent": "haiku"}}}"#,
        )
        .unwrap();
        std::fs::create_dir(repo.path().join(".tascer")).unwrap();
        let project = repo.path().join(".tascer/settings.json");
        std::fs::write(
            &project,
            r#"{"mcpServe": {"models": {"confirm": "sonnet"}}}"#,
        )
        .unwrap();
        assert_eq!(
            mcp_model(repo.path(), home.path(), "confirm").unwrap(),
            Some((project.clone(), "sonnet".into()))
        );
        assert_eq!(
            mcp_model(repo.path(), home.path(), "validateIntent").unwrap(),
            Some((user, "haiku".into()))
        );
        assert_eq!(
            mcp_model(repo.path(), home.path(), "commitMessage").unwrap(),
            None
        );
        std::fs::write(&project, r#"{"mcpServe": {"models": {"review": "opus"}}}"#).unwrap();
        let err = mcp_model(repo.path(), home.path(), "confirm").unwrap_err();
        assert!(err.to_string().contains("unknown tool \"review\""), "{err}");
        std::fs::write(&project, r#"{"mcpServe": {"models": {"confirm": 3}}}"#).unwrap();
        let err = mcp_model(repo.path(), home.path(), "confirm").unwrap_err();
        assert!(err.to_string().contains("must be a model name"), "{err}");
    }

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
