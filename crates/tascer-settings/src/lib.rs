//! Tascer's settings reader: the one place that finds, reads and layers
//! the settings files, for every part that reads a section of them, and
//! that writes permission changes into Claude Code's files
//! ([`edit_permissions`], for the SDKs' permission updates).
//!
//! Sources, highest precedence first (Claude Code §6.4, with Tascer's own
//! files ahead of Claude Code's at the same level; `<cwd>` is the project
//! directory when one is given, [`SettingsLoader::project_dir`], which
//! hosts find as Claude Code does, [`project_root`]):
//!
//! 1. flag settings (`--settings FILE_OR_JSON`)
//! 2. local: `<cwd>/.tascer/settings.local.json`, then `<cwd>/.claude/settings.local.json`
//! 3. project: `<cwd>/.tascer/settings.json`, then `<cwd>/.claude/settings.json`
//! 4. user: `<home>/.tascer/settings.json` (Tascer's sessions and hosts
//!    read `$TASCER_HOME/settings.json`, see [`SettingsLoader::for_home`]),
//!    then `<home>/.claude/settings.json`
//!
//! Claude Code's files are read only with [`SettingsLoader::claude_compat`].
//! [`SettingsLoader::read`] returns [`LayeredSettings`], each layer a
//! typed [`Settings`]; how each section layers:
//!
//! - Permission rule lists merge across all sources (`tascer-guard` parses
//!   them); single values (`defaultMode`, each `env` variable) come from
//!   the highest source that sets them; `disableBypassPermissionsMode:
//!   "disable"` anywhere wins.
//! - The `safety` object (docs/reviewers.md) merges part by part (in
//!   `tascer-guard`): each of `autoApprove`, each reviewer and
//!   `reviewers.model` comes from the highest layer that sets it;
//!   `pathClasses` takes its switch and `sensitiveAction` from the highest
//!   layer and the union of every layer's `trusted` and `sensitive` lists.
//! - `webhooks` are the union of every layer's (one per URL, the highest
//!   layer's); `hooks` run from every layer.
//! - `validation` comes whole from the highest layer that has one;
//!   `archive` merges key by key.
//!
//! Unknown keys at the top level are kept in [`Settings::other`] and named
//! in a warning ([`LayeredSettings::unhonoured`]), never silently
//! dropped; inside `safety`, `policies` and `webhooks` they are errors.
//!
//! Two sections are read from one file on their own, not layered, and
//! without checking the rest of the file (so a bad value elsewhere does
//! not stop them; errors are [`FileError`]s): `store`, a per-host setting
//! that only the home's own file sets ([`HostSettings`]), and `check`,
//! the repository's lint and test commands ([`check_settings`]).
//! `mcpServe.confirmWithoutModel` and `mcpServe.models` are read the same
//! way, from the project's files and then the home's
//! ([`confirm_without_model`], [`mcp_model`]).

mod check;
mod claude_paths;
mod edit;
mod error;
mod file;
mod home;
mod layers;
mod loader;
mod mcp_serve;
pub mod policies;
mod project;
pub mod safety;
mod sandbox;
mod sections;
mod telemetry;
mod unhonoured;

pub use check::{CheckSettings, check_settings};
pub use claude_paths::{claude_config_dir, claude_project_dir_name, claude_transcript_file};
pub use edit::{ClaudeSettingsFiles, PermissionsEdit, SettingsDestination, edit_permissions};
pub use error::{FileError, SettingsError};
pub use file::{parse, read_json};
pub use home::{HOME_SETTINGS_FILE, HostSettings, STORE, home_settings_file};
pub use layers::{LayeredSettings, SettingsLayer, SettingsSource};
pub use loader::{SettingsFile, SettingsLoader};
pub use mcp_serve::{
    CONFIRM_WITHOUT_MODEL, MCP_MODEL_TOOLS, MCP_MODELS, confirm_without_model, mcp_model,
};
pub use policies::{FileAccessSettings, McpPolicySettings, PoliciesSettings};
pub use project::{CLAUDE_PROJECT_DIR, project_root};
pub use sandbox::{SANDBOX, SandboxSettings};
pub use sections::{ARCHIVE, CONTRACTS, PermissionsSettings, Settings, VALIDATION};
pub use telemetry::{OTLP_PROTOCOLS, OtlpSettings, OtlpSignalSettings, TelemetrySettings};
pub use unhonoured::HONOURED_KEYS;
