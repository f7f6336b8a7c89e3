//! The options contract sessions start from when this command line runs
//! them: `tascer contracts run`, `tascer contracts worker` and a manager
//! session's `ExecuteContracts` tool (`tascer run --execute-contracts`).

use std::path::PathBuf;
use std::sync::Arc;

use tascer::Options;
use tascer_contracts::RunOptions;

use crate::archive_cmds::ContractArchiver;
use crate::provider::provider_from_env;

/// The options contractors start from (see
/// [`tascer_contracts::contractor_base`]), on top of the provider this
/// command line would use.
pub fn contractor_base() -> anyhow::Result<Options> {
    tascer_contracts::contractor_base(|| provider_from_env(None))
}

/// The run options of a manager session's `ExecuteContracts` tool.
pub fn manager_run_options(
    dir: &std::path::Path,
    cwd: Option<PathBuf>,
) -> anyhow::Result<RunOptions> {
    let mut opts = RunOptions::new(dir)
        .base(contractor_base()?)
        .archiver(auto_archiver());
    opts.cwd = cwd;
    Ok(opts)
}

/// The archiver of contract sessions run here: each session is archived
/// when the settings say `archive.auto` (as after `tascer run`).
pub fn auto_archiver() -> Arc<dyn tascer_contracts::SessionArchiver> {
    Arc::new(ContractArchiver {
        home: tascer::tascer_home(),
        to: None,
    })
}
