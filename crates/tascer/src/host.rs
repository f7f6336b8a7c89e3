//! Tascer's decision for a host that runs the tools itself: Claude Code
//! (through `tascer hook`) or an MCP client (through `tascer mcp serve`).
//!
//! Both build the same [`Admission`] from Tascer's settings for the call's
//! directory ([`HostGovernance::load`]) and read its answer the same way
//! ([`HostAnswer`], in `tascer-guard`). What they write of that answer in
//! the ledger is what a loop session writes ([`decision_record`],
//! [`gate_outcomes`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tascer_core::ToolCall;
use tascer_guard::admission::{Admission, Admitted, CallRequest};
use tascer_guard::hooks::HookCommon;
pub use tascer_guard::host_answer::{HostAnswer, host_reason};
use tascer_guard::permissions::{PermissionEngine, PermissionMode};
use tascer_guard::reviewers::Reviewers;
use tascer_guard::settings::{LoadedSettings, SafetyConfig, SettingsSource};

use crate::error::Error;
use crate::options::Options;
pub use crate::records::{
    decision_record, gate_outcomes, hook_records, hook_run_entries, hook_run_payload,
};
use crate::setup;

/// Which step of a call the host asks about; each builds only what it
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStep {
    /// Before the call runs: hooks, the permission decision (rules, mode,
    /// policies, workaround detection) and pre-gates.
    Admit,
    /// After the call ran: post-gates and hooks. No permission engine is
    /// built (no rules, no policies): review does not decide permissions.
    Review,
}

/// The admission of a host's calls in one directory, from the settings of
/// its project ([`load_settings`]), with asks deferred to the host.
pub struct HostGovernance {
    admission: Admission,
    safety: SafetyConfig,
}

/// The options a host's calls are governed with: Tascer's three settings
/// files and Claude Code's, in `mode` (`None`: the settings' default
/// mode).
pub fn host_options(mode: Option<PermissionMode>) -> Options {
    let mut options = Options::new();
    options.permission_mode = mode;
    options.setting_sources = vec![
        SettingsSource::User,
        SettingsSource::Project,
        SettingsSource::Local,
    ];
    options.claude_settings = true;
    options
}

/// The project a host's call in `cwd` belongs to, found as Claude Code
/// finds it: `$CLAUDE_PROJECT_DIR`, else the git root of `cwd`, else `cwd`
/// ([`tascer_guard::settings::project_root`]).
pub fn project_root(cwd: &Path) -> PathBuf {
    let dir = std::env::var_os(tascer_guard::settings::CLAUDE_PROJECT_DIR).map(PathBuf::from);
    tascer_guard::settings::project_root(cwd, dir.as_deref())
}

/// Reads the settings for a host's calls in `cwd`, read once and then
/// given to [`HostGovernance::from_settings`] for each step: Tascer's
/// (`$TASCER_HOME/settings.json` from `home`, the project's
/// `.tascer/settings.json` and `.tascer/settings.local.json`) and Claude
/// Code's (`.claude/settings.json`, `.claude/settings.local.json`, the
/// user's `settings.json` in `$CLAUDE_CONFIG_DIR` or `~/.claude`), the
/// project's found by [`project_root`]. Claude Code runs the hooks of its
/// own files itself: they are not Tascer's to run, and are left out.
///
/// A process that keeps the settings between calls reads them again when
/// one of [`settings_files`] changed.
pub fn load_settings(cwd: &Path, home: &Path) -> Result<LoadedSettings, Error> {
    let project = project_root(cwd);
    let mut settings = setup::load_settings_in(&host_options(None), cwd, Some(&project), home)?;
    settings.without_claude_code_hooks();
    Ok(settings)
}

/// Every file [`load_settings`] reads for `cwd`, whether or not it
/// exists (in the order it reads them): what a process that keeps the
/// settings between calls watches.
pub fn settings_files(cwd: &Path, home: &Path) -> Vec<PathBuf> {
    let project = project_root(cwd);
    setup::settings_loader(&host_options(None), cwd, Some(&project), home)
        .map(|loader| loader.files().into_iter().map(|f| f.path).collect())
        .unwrap_or_default()
}

impl HostGovernance {
    /// Reads the settings for `cwd` ([`load_settings`], user settings from
    /// `home`) and builds what `step` needs, in `mode` (`None`: the
    /// settings' default mode).
    pub fn load(
        cwd: &Path,
        home: &Path,
        mode: Option<PermissionMode>,
        step: HostStep,
    ) -> Result<Self, Error> {
        let settings = load_settings(cwd, home)?;
        Self::from_settings(&settings, cwd, mode, step)
    }

    /// Builds what `step` needs from settings already read (see
    /// [`host_options`]).
    pub fn from_settings(
        settings: &LoadedSettings,
        cwd: &Path,
        mode: Option<PermissionMode>,
        step: HostStep,
    ) -> Result<Self, Error> {
        let mut options = host_options(mode);
        let project = project_root(cwd);
        if project != cwd {
            // The whole project is the workspace, wherever in it the call is.
            options.additional_directories.push(project);
        }
        let (admission, safety) = match step {
            HostStep::Admit => {
                // With the host's Bash sandboxed, the way out of the
                // sandbox is guarded and gate commands run sandboxed too.
                let wrapped = settings
                    .sandbox()
                    .is_ok_and(|s| s.enabled && s.claude_code_bash);
                let sandbox = match wrapped {
                    true => crate::sandbox_setup::command_sandbox(&options, settings, cwd)?,
                    false => None,
                };
                let parts = setup::build(&options, settings, cwd, Vec::new(), sandbox.as_ref())?;
                (parts.admission, parts.safety)
            }
            HostStep::Review => {
                let permissions = Arc::new(PermissionEngine::builder().build()?);
                let admission = setup::admission_over(&options, settings, cwd, permissions)?;
                (admission, settings.safety(std::env::home_dir().as_deref()))
            }
        };
        Ok(HostGovernance {
            admission: admission.defer_asks(true),
            safety,
        })
    }

    /// The settings' safety chain (its reviewers are for the host to
    /// connect: they need a provider and the host's transcript).
    pub fn safety(&self) -> &SafetyConfig {
        &self.safety
    }

    /// Asks these LLM reviewers in place of the user.
    pub fn with_reviewers(mut self, reviewers: Option<Arc<Reviewers>>) -> Self {
        self.admission = self.admission.reviewers(reviewers);
        self
    }

    /// Answers every call and stop within `within` (see
    /// [`Admission::answer_within`]).
    pub fn with_deadline(mut self, within: Option<std::time::Duration>) -> Self {
        self.admission = self.admission.answer_within(within);
        self
    }

    /// The admission (for review, redaction and the recorded input).
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// Admits `call` as Tascer would in a session of its own, and says
    /// what that means for the host.
    pub async fn admit(&self, call: &ToolCall, hook_common: HookCommon) -> (Admitted, HostAnswer) {
        let admitted = self
            .admission
            .admit(CallRequest {
                call,
                hook_common,
                agent_id: None,
            })
            .await;
        let answer = HostAnswer::of(&admitted, &call.input);
        (admitted, answer)
    }
}
