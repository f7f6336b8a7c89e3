//! [`SettingsLoader`]: which settings files there are for a working
//! directory, and reading them into [`LayeredSettings`].

use std::path::{Path, PathBuf};

use crate::edit::ClaudeSettingsFiles;
use crate::error::SettingsError;
use crate::file::{parse, read_text};
use crate::home::home_settings_file;
use crate::layers::{LayeredSettings, SettingsLayer, SettingsSource};

/// One settings file the loader would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    /// Which source it is.
    pub source: SettingsSource,
    /// Where it is.
    pub path: PathBuf,
    /// The directory its rules and relative paths are anchored at.
    pub project_root: PathBuf,
}

/// Finds, reads and layers settings files.
#[derive(Debug, Clone)]
pub struct SettingsLoader {
    cwd: PathBuf,
    project_root: Option<PathBuf>,
    claude_config: Option<PathBuf>,
    home: Option<PathBuf>,
    claude: bool,
    flag: Option<String>,
    user_file: Option<PathBuf>,
    user: bool,
    project: bool,
    local: bool,
}

impl SettingsLoader {
    /// A loader for a session in `cwd`; reads Tascer's user (when a home is
    /// given), project and local files.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        SettingsLoader {
            cwd: cwd.into(),
            project_root: None,
            claude_config: None,
            home: None,
            claude: false,
            flag: None,
            user_file: None,
            user: true,
            project: true,
            local: true,
        }
    }

    /// A loader for a session in `cwd` under the Tascer home `tascer_home`:
    /// the user settings are the home's own file
    /// ([`home_settings_file`]), the user's home directory (for `~/`) is
    /// the process's, and Claude Code's user file is in
    /// `$CLAUDE_CONFIG_DIR` when it is set.
    pub fn for_home(cwd: impl Into<PathBuf>, tascer_home: &Path) -> Self {
        Self::for_user(cwd).user_settings_file(home_settings_file(tascer_home))
    }

    /// A loader for a session in `cwd` of this process's user: the user's
    /// home directory is the process's, and Claude Code's user file is in
    /// `$CLAUDE_CONFIG_DIR` when it is set (Tascer's user file is
    /// `<home>/.tascer/settings.json` unless
    /// [`user_settings_file`](Self::user_settings_file) says otherwise).
    pub fn for_user(cwd: impl Into<PathBuf>) -> Self {
        let mut loader = Self::new(cwd);
        if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            loader = loader.claude_config_dir(dir);
        }
        match std::env::home_dir() {
            Some(user_home) => loader.home(user_home),
            None => loader,
        }
    }

    /// Reads the project and local files from `dir` (the project root,
    /// see [`project_root`](crate::project_root)) instead of the working
    /// directory; rules there are anchored at it.
    pub fn project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_root = Some(dir.into());
        self
    }

    /// Reads Claude Code's user settings from `<dir>/settings.json`
    /// (`$CLAUDE_CONFIG_DIR`) instead of `<home>/.claude/settings.json`.
    pub fn claude_config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.claude_config = Some(dir.into());
        self
    }

    /// The home directory holding the user files.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Reads Tascer's user settings from this file instead of
    /// `<home>/.tascer/settings.json` (e.g. `$TASCER_HOME/settings.json`).
    pub fn user_settings_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.user_file = Some(path.into());
        self
    }

    /// Also read Claude Code's `.claude/settings*.json` files.
    pub fn claude_compat(mut self, yes: bool) -> Self {
        self.claude = yes;
        self
    }

    /// The `--settings` value: a file path (relative to cwd) or inline JSON.
    pub fn flag_settings(mut self, value: impl Into<String>) -> Self {
        self.flag = Some(value.into());
        self
    }

    /// Which filesystem layers to read (`--setting-sources`); flag settings
    /// are always read.
    pub fn sources(mut self, user: bool, project: bool, local: bool) -> Self {
        self.user = user;
        self.project = project;
        self.local = local;
        self
    }

    /// Reads every layer that exists, highest precedence first, each
    /// typed and checked as it is read. (`tascer-guard`'s `LoadSettings`
    /// adds the permission rules, parsed.)
    pub fn read(&self) -> Result<LayeredSettings, SettingsError> {
        let mut layers: Vec<SettingsLayer> = self.flag_layer()?.into_iter().collect();
        for file in self.files() {
            if let Some(layer) = read_layer(file)? {
                layers.push(layer);
            }
        }
        Ok(LayeredSettings { layers })
    }

    /// The `--settings` layer: inline JSON, or a file that must exist.
    fn flag_layer(&self) -> Result<Option<SettingsLayer>, SettingsError> {
        let Some(flag) = &self.flag else {
            return Ok(None);
        };
        let trimmed = flag.trim_start();
        if trimmed.starts_with('{') {
            return Ok(Some(SettingsLayer {
                source: SettingsSource::Flag,
                path: None,
                project_root: self.cwd.clone(),
                settings: parse(trimmed, "--settings")?,
            }));
        }
        let path = self.cwd.join(flag);
        let text = std::fs::read_to_string(&path).map_err(|source| SettingsError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let settings = parse(&text, &path.display().to_string())?;
        Ok(Some(SettingsLayer {
            source: SettingsSource::Flag,
            project_root: self.cwd.clone(),
            path: Some(path),
            settings,
        }))
    }

    /// Claude Code's settings files of this session by destination, where
    /// permission updates are persisted (whether or not they are read:
    /// [`claude_compat`](Self::claude_compat)).
    pub fn claude_files(&self) -> ClaudeSettingsFiles {
        let cwd = self.project_root.as_ref().unwrap_or(&self.cwd);
        let user = match (&self.claude_config, &self.home) {
            (Some(dir), _) => Some(dir.join("settings.json")),
            (None, Some(home)) => Some(home.join(".claude/settings.json")),
            (None, None) => None,
        };
        ClaudeSettingsFiles {
            local: cwd.join(".claude/settings.local.json"),
            project: cwd.join(".claude/settings.json"),
            user,
        }
    }

    /// The settings files to read (the `--settings` flag aside), highest
    /// precedence first.
    pub fn files(&self) -> Vec<SettingsFile> {
        let mut files = Vec::new();
        let cwd = self.project_root.as_ref().unwrap_or(&self.cwd);
        let mut push = |source, path, project_root| {
            files.push(SettingsFile {
                source,
                path,
                project_root,
            });
        };
        if self.local {
            let local = cwd.join(".tascer/settings.local.json");
            push(SettingsSource::Local, local, cwd.clone());
            if self.claude {
                let local = cwd.join(".claude/settings.local.json");
                push(SettingsSource::ClaudeLocal, local, cwd.clone());
            }
        }
        if self.project {
            push(
                SettingsSource::Project,
                cwd.join(".tascer/settings.json"),
                cwd.clone(),
            );
            if self.claude {
                let project = cwd.join(".claude/settings.json");
                push(SettingsSource::ClaudeProject, project, cwd.clone());
            }
        }
        if self.user {
            let user_file = self
                .user_file
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join(".tascer/settings.json")));
            if let Some(file) = user_file {
                let root = self.home.clone().unwrap_or_else(|| cwd.clone());
                push(SettingsSource::User, file, root);
            }
        }
        if self.user
            && self.claude
            && let Some(home) = &self.home
        {
            let user = match &self.claude_config {
                Some(dir) => dir.join("settings.json"),
                None => home.join(".claude/settings.json"),
            };
            push(SettingsSource::ClaudeUser, user, home.clone());
        }
        files
    }
}

/// One settings file as a layer; `None` when it does not exist.
fn read_layer(file: SettingsFile) -> Result<Option<SettingsLayer>, SettingsError> {
    let name = file.path.display().to_string();
    let Some(text) = read_text(&file.path).map_err(|source| SettingsError::Io {
        path: name.clone(),
        source,
    })?
    else {
        return Ok(None);
    };
    let settings = parse(&text, &name)?;
    Ok(Some(SettingsLayer {
        source: file.source,
        path: Some(file.path),
        project_root: file.project_root,
        settings,
    }))
}
