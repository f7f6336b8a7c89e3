//! Builds a session's governance — permission engine, hooks, gates and
//! context capture — from its options and settings files.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tascer_guard::admission::Admission;
use tascer_guard::gates::{GateRegistry, GateRunner, ValidationConfig};
use tascer_guard::hooks::{HookRegistry, HookRunner};
use tascer_guard::permissions::{
    Behavior, PermissionEngine, PermissionRules, RuleOrigin, SandboxEscapePolicy,
};
use tascer_guard::settings::{
    LoadSettings as _, LoadedSettings, SafetyConfig, SettingsLoader, SettingsSource,
};
use tascer_sandbox::CommandSandbox;

use crate::call_context::ContextCapture;
use crate::error::Error;
use crate::options::{DEFAULT_CONTEXT_ENV, Options};

/// What the options and settings configure for a session.
pub(crate) struct GovernanceParts {
    /// Hooks, permissions and gates: decides every tool call.
    pub admission: Admission,
    /// Context capture for the calls' records.
    pub context: ContextCapture,
    /// Environment for tools: the settings' `env` under the options' own.
    pub env: HashMap<String, String>,
    /// The settings' safety chain; its path classes and auto-approve are
    /// already in the admission, its reviewers are for the caller to
    /// connect (they need the session's provider and transcript).
    pub safety: SafetyConfig,
    /// Whether tool records are sealed with their proof hash.
    pub generate_proofs: bool,
    /// Claude Code's configuration directory (the options', else
    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`): `plan-validate` checks
    /// the plans in its `plans/`.
    pub claude_dir: Option<std::path::PathBuf>,
}

/// The home's local SQLite database, for what stays on this host (the
/// reviewers' cache, the webhook outbox): the store's own when the store
/// is SQLite, else `<home>/tascer.db`.
pub(crate) fn local_db(
    store: &tascer_store::SessionStore,
    home: &Path,
) -> Result<Arc<tascer_store::Db>, tascer_store::StoreError> {
    store.backend().local_db(home)
}

/// Reads the settings files the options ask for, for a session: what it
/// cannot honour is a warning on the log (standard error), one line each.
pub(crate) fn load_settings(
    options: &Options,
    cwd: &Path,
    home: &Path,
) -> Result<LoadedSettings, Error> {
    let settings = load_settings_in(options, cwd, None, home)?;
    // Nothing else applies what Tascer does not: every such setting is
    // named (a host under Claude Code leaves the other keys to it).
    for warning in settings.warnings.iter().chain(&settings.unhonoured()) {
        tracing::warn!("{warning}");
    }
    Ok(settings)
}

/// [`load_settings`] with the project and local files read from
/// `project` (the project root) instead of `cwd`.
pub(crate) fn load_settings_in(
    options: &Options,
    cwd: &Path,
    project: Option<&Path>,
    home: &Path,
) -> Result<LoadedSettings, Error> {
    match settings_loader(options, cwd, project, home) {
        Some(loader) => Ok(loader.load()?),
        None => Ok(LoadedSettings::default()),
    }
}

/// The loader [`load_settings_in`] reads with; `None` when the options
/// read no settings at all.
pub(crate) fn settings_loader(
    options: &Options,
    cwd: &Path,
    project: Option<&Path>,
    home: &Path,
) -> Option<SettingsLoader> {
    let sources = &options.setting_sources;
    if sources.is_empty() && options.settings.is_none() {
        return None;
    }
    let has = |s: SettingsSource| sources.contains(&s);
    let mut loader = SettingsLoader::for_home(cwd, home)
        .sources(
            has(SettingsSource::User),
            has(SettingsSource::Project),
            has(SettingsSource::Local),
        )
        .claude_compat(options.claude_settings);
    if let Some(project) = project {
        loader = loader.project_dir(project);
    }
    if let Some(flag) = &options.settings {
        loader = loader.flag_settings(flag.clone());
    }
    Some(loader)
}

/// Builds the governance of a session in `cwd`. `secrets` are the
/// session's own keys, which must never leak into output.
pub(crate) fn build(
    options: &Options,
    settings: &LoadedSettings,
    cwd: &Path,
    secrets: Vec<String>,
    sandbox: Option<&CommandSandbox>,
) -> Result<GovernanceParts, Error> {
    let safety = settings.safety(std::env::home_dir().as_deref());
    let escape = match sandbox {
        Some(_) => Some(crate::sandbox_setup::escape_policy(settings, cwd)?),
        None => None,
    };
    let permissions = Arc::new(permission_engine(options, settings, cwd, &safety, escape)?);
    let admission = admission_over(options, settings, cwd, permissions)?
        .secrets(secrets)
        .sandbox(sandbox.cloned());
    // What each call's record captures: the options, else the validation
    // config (options or settings), else the defaults.
    let validation = admission.validation();
    let context_env = options
        .context_env
        .clone()
        .or_else(|| validation.env_allowlist.clone())
        .unwrap_or_else(|| {
            DEFAULT_CONTEXT_ENV
                .iter()
                .map(|s| (*s).to_string())
                .collect()
        });
    let git = options
        .capture_git_state
        .unwrap_or(validation.capture_git_state);
    let generate_proofs = options
        .generate_proofs
        .unwrap_or(validation.generate_proofs);
    let mut env: HashMap<String, String> = settings.env().into_iter().collect();
    env.extend(options.env.clone());
    let cache = options.context_cache.clone().unwrap_or_default();
    Ok(GovernanceParts {
        admission,
        context: ContextCapture::new(context_env, cache, git),
        env,
        safety,
        generate_proofs,
        claude_dir: options
            .claude_config_dir
            .clone()
            .or_else(crate::memory::default_user_dir),
    })
}

/// The permission engine the options and settings configure: rules,
/// mode, directories, the safety chain's path classes and auto-approve,
/// policies (with the sandbox's way out, when commands are sandboxed),
/// callback, workaround detection.
fn permission_engine(
    options: &Options,
    settings: &LoadedSettings,
    cwd: &Path,
    safety: &SafetyConfig,
    escape: Option<SandboxEscapePolicy>,
) -> Result<PermissionEngine, Error> {
    let user_home = std::env::home_dir();
    let mut builder = settings.apply(PermissionEngine::builder(), user_home.as_deref());
    builder = builder.rules(option_rules(options, cwd)?);
    if let Some(mode) = options.permission_mode {
        builder = builder.mode(mode);
    }
    for dir in &options.additional_directories {
        builder = builder.additional_directory(dir.clone());
    }
    if let Some(home) = &user_home {
        builder = builder.home_dir(home.clone());
    }
    if !options.disable_default_policies {
        builder = builder.default_policies();
    }
    if let Some(classes) = &safety.path_classes {
        builder = builder.path_classes(classes.clone());
    }
    if let Some(tools) = &safety.auto_approve {
        builder = builder.auto_approve(tools.clone());
    }
    if let Some(tools) = &safety.low_risk {
        builder = builder.low_risk_tools(tools.clone());
    }
    for policy in &options.policies {
        builder = builder.policy(Arc::clone(policy));
    }
    if let Some(escape) = escape {
        builder = builder.policy(Arc::new(escape));
    }
    if let Some(cb) = &options.can_use_tool {
        builder = builder.can_use_tool(Arc::clone(cb));
    }
    if let Some(w) = &options.workaround {
        builder = builder.workaround(*w);
    }
    // Permission updates ("always allow") are persisted to Claude Code's
    // files of this project.
    builder = builder.settings_files(SettingsLoader::for_user(cwd).claude_files());
    Ok(builder.build()?)
}

/// The permission engine of a session in `cwd` for a dry run (`tascer
/// policy check`): as [`build`] makes it, with the sandbox's way out
/// whenever the settings enable the sandbox (whether or not this machine
/// could confine commands).
pub(crate) fn dry_run_engine(
    options: &Options,
    settings: &LoadedSettings,
    cwd: &Path,
) -> Result<PermissionEngine, Error> {
    let safety = settings.safety(std::env::home_dir().as_deref());
    let sandboxed = settings
        .sandbox()
        .map_err(|e| Error::InvalidOptions(e.to_string()))?
        .enabled;
    let escape = match sandboxed {
        true => Some(crate::sandbox_setup::escape_policy(settings, cwd)?),
        false => None,
    };
    permission_engine(options, settings, cwd, &safety, escape)
}

/// Admission over `permissions` with the hooks and gates the options and
/// settings configure.
pub(crate) fn admission_over(
    options: &Options,
    settings: &LoadedSettings,
    cwd: &Path,
    permissions: Arc<PermissionEngine>,
) -> Result<Admission, Error> {
    let mut hooks = options.hooks.clone().unwrap_or_default();
    for (source, value) in settings.hooks() {
        let registry = HookRegistry::from_settings(value, cwd)
            .map_err(|e| Error::InvalidOptions(format!("hooks in {source:?} settings: {e}")))?;
        hooks.extend(registry);
    }

    let validation = match &options.validation {
        Some(v) => v.clone(),
        None => settings_validation(settings)?,
    };
    let mut registry = GateRegistry::with_builtins(&validation.gates)?;
    for gate in &options.gates {
        registry.register_arc(Arc::clone(gate));
    }
    registry.validate(&validation)?;

    Ok(Admission::new(permissions)
        .hooks(HookRunner::new(hooks))
        .asker(options.asker.clone())
        .answers_questions(options.user_answerer.is_some())
        .gates(GateRunner::new(registry), validation))
}

/// `allowed_tools` (allow rules) and `disallowed_tools` (deny rules); the
/// settings' rules are added by [`LoadedSettings::apply`].
fn option_rules(options: &Options, cwd: &Path) -> Result<PermissionRules, Error> {
    let mut rules = PermissionRules::new();
    for (behavior, list, flag) in [
        (Behavior::Allow, &options.allowed_tools, "allowedTools"),
        (Behavior::Deny, &options.disallowed_tools, "disallowedTools"),
    ] {
        let origin = RuleOrigin {
            source_file: Some(format!("--{flag}")),
            project_root: Some(cwd.to_path_buf()),
        };
        for raw in list {
            rules
                .add(behavior, raw, &origin)
                .map_err(|e| Error::InvalidOptions(format!("{flag} rule {raw:?}: {e}")))?;
        }
    }
    add_mcp_server_rules(options, cwd, &mut rules)?;
    Ok(rules)
}

/// The per-tool permissions of the MCP servers' configurations
/// (`mcpServers.<name>.permissions`), as rules whose origin names the
/// server's entry.
fn add_mcp_server_rules(
    options: &Options,
    cwd: &Path,
    rules: &mut PermissionRules,
) -> Result<(), Error> {
    for (server, config) in &options.mcp_servers {
        let Some(permissions) = config.tool_permissions() else {
            continue;
        };
        let origin = RuleOrigin {
            source_file: Some(format!("mcpServers.{server}.permissions")),
            project_root: Some(cwd.to_path_buf()),
        };
        for (behavior, rule) in permissions.rules(server) {
            rules.add(behavior, &rule, &origin).map_err(|e| {
                Error::InvalidOptions(format!("mcpServers.{server}.permissions {rule:?}: {e}"))
            })?;
        }
    }
    Ok(())
}

/// The `validation` value of the highest settings layer that has one.
fn settings_validation(settings: &LoadedSettings) -> Result<ValidationConfig, Error> {
    match settings.validation() {
        Some(value) => Ok(ValidationConfig::from_value(value)?),
        None => Ok(ValidationConfig::default()),
    }
}
