//! The providers of the roles of a contracts run as this command line
//! chooses them (`tascer_contracts::choose_provider` decides; this adds
//! the flags and the CLI's knobs), and the options contract sessions start
//! from: `tascer contracts run`, `tascer contracts worker` and a manager
//! session's `ExecuteContracts` tool (`tascer run --execute-contracts`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use tascer::Options;
use tascer::guard::settings::{LoadSettings as _, SettingsLoader};
use tascer_contracts::{
    Role, RoleChoice, RoleProvider, RunOptions, choices_from_settings, choose_provider,
};

use crate::archive_cmds::ContractArchiver;
use crate::provider::apply_knobs;

/// What the command line says about the roles' providers and models.
#[derive(Debug, Clone, Default)]
pub struct RoleFlags {
    /// `--provider` (the manager's).
    pub provider: Option<String>,
    /// `--model` (the manager's).
    pub model: Option<String>,
    /// `--contractor-provider`.
    pub contractor_provider: Option<String>,
    /// `--contractor-model` (`--model` of `tascer contracts run`).
    pub contractor_model: Option<String>,
    /// `--request-timeout`.
    pub request_timeout: Option<std::time::Duration>,
    /// The working directory whose settings files are read (`--cwd`, else
    /// the process's).
    pub cwd: Option<PathBuf>,
}

/// The settings' `contracts` section (Tascer's user settings and the
/// project's and local ones of the working directory): the manager's and
/// the contractors' choices, below flags and variables.
fn settings_choices(flags: &RoleFlags) -> anyhow::Result<(RoleChoice, RoleChoice)> {
    let cwd = match &flags.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the working directory")?,
    };
    let loaded = SettingsLoader::for_home(&cwd, &tascer::tascer_home())
        .load()
        .context("cannot read the settings")?;
    Ok(choices_from_settings(&loaded.contracts()?)?)
}

/// A provider name from a flag.
fn parse_name(name: Option<&String>) -> anyhow::Result<Option<tascer::ProviderName>> {
    Ok(match name {
        Some(n) => Some(n.parse()?),
        None => None,
    })
}

/// The manager's provider and model: the flags, else the settings'
/// `contracts.managerProvider` / `managerModel`, else chosen from the
/// environment (see `tascer_contracts::choose_provider`).
pub fn manager_provider(flags: &RoleFlags) -> anyhow::Result<RoleProvider> {
    let choice = RoleChoice {
        provider: parse_name(flags.provider.as_ref())?,
        model: flags.model.clone(),
    }
    .or(settings_choices(flags)?.0);
    let env = tascer::EnvProviders::from_env()?;
    let mut provider = choose_provider(Role::Manager, &env, &choice)?;
    apply_knobs(&mut provider.config, flags.request_timeout)?;
    Ok(provider)
}

/// The contractors' provider and model: the flags, else
/// `TASCER_CONTRACTOR_PROVIDER` / `TASCER_CONTRACTOR_MODEL`, else the
/// settings' `contracts.contractorProvider` / `contractorModel`, else
/// chosen from the environment (the `TASCER_CONTRACTOR_*` variables when
/// set).
pub fn contractor_provider(flags: &RoleFlags) -> anyhow::Result<RoleProvider> {
    let choice = RoleChoice {
        provider: parse_name(flags.contractor_provider.as_ref())?,
        model: flags.contractor_model.clone(),
    }
    .or(tascer_contracts::contractor_choice_from_env()?)
    .or(settings_choices(flags)?.1);
    let env = tascer_contracts::contractor_env()?;
    let mut provider = choose_provider(Role::Contractor, &env, &choice)?;
    apply_knobs(&mut provider.config, flags.request_timeout)?;
    Ok(provider)
}

/// The options contractors start from (see
/// [`tascer_contracts::contractor_base`]).
pub fn contractor_base(flags: &RoleFlags) -> anyhow::Result<Options> {
    Ok(tascer_contracts::contractor_base(&contractor_provider(
        flags,
    )?))
}

/// The run options of a manager session's `ExecuteContracts` tool.
pub fn manager_run_options(
    dir: &std::path::Path,
    cwd: Option<PathBuf>,
    flags: &RoleFlags,
) -> anyhow::Result<RunOptions> {
    let mut opts = RunOptions::new(dir)
        .base(contractor_base(flags)?)
        .archiver(auto_archiver());
    opts.cwd = cwd;
    Ok(opts)
}

/// `tascer contracts run --dry-run`'s roles: one line per role (its
/// provider, or why it has none), and whether every role has one.
pub fn describe_roles(flags: &RoleFlags) -> (Vec<String>, bool) {
    let mut ok = true;
    let mut line = |role: Role, p: anyhow::Result<RoleProvider>| match p {
        Ok(p) => p.describe(),
        Err(e) => {
            ok = false;
            format!("{:<11} error: {e:#}", role.as_str())
        }
    };
    let lines = vec![
        line(Role::Manager, manager_provider(flags)),
        line(Role::Contractor, contractor_provider(flags)),
    ];
    (lines, ok)
}

/// The archiver of contract sessions run here: each session is archived
/// when the settings say `archive.auto` (as after `tascer run`).
pub fn auto_archiver() -> Arc<dyn tascer_contracts::SessionArchiver> {
    Arc::new(ContractArchiver {
        home: tascer::tascer_home(),
        to: None,
    })
}
