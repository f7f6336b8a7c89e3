//! [`HostBashSandbox`]: Claude Code's own Bash calls, run under Tascer's
//! OS sandbox. Under `tascer hook`, a permitted Bash call is answered with
//! its command rewritten to `tascer sandbox --policy FILE -- bash -c
//! COMMAND` (setting `sandbox.claudeCodeBash`), so what Claude Code runs is
//! confined as a Tascer session's commands are (docs/sandbox.md).

use std::path::{Path, PathBuf};

use serde_json::Value;
use tascer_core::shell_quote;
use tascer_guard::permissions::wants_unsandboxed;
use tascer_guard::settings::LoadedSettings;

use crate::error::Error;

/// How a host's Bash commands are rewritten to run sandboxed.
#[derive(Debug, Clone)]
pub struct HostBashSandbox {
    tascer: PathBuf,
    policy_file: PathBuf,
    temp: PathBuf,
}

impl HostBashSandbox {
    /// The rewriting the settings ask for: `None` when `sandbox.enabled`
    /// or `sandbox.claudeCodeBash` is off, or (with a warning) when this
    /// machine cannot sandbox or this process is not `tascer`. The policy
    /// is the project's (`project` writable, the settings' `allowWrite`,
    /// `denyRead` and `network`), written once under `home` (out of the
    /// sandboxed commands' reach), with a private temporary directory for
    /// the host session `session_id`.
    pub fn from_settings(
        settings: &LoadedSettings,
        project: &Path,
        home: &Path,
        session_id: &str,
    ) -> Result<Option<Self>, Error> {
        let wanted = settings
            .sandbox()
            .map_err(|e| Error::InvalidOptions(e.to_string()))?;
        if !wanted.enabled || !wanted.claude_code_bash {
            return Ok(None);
        }
        let support = tascer_sandbox::support();
        if !support.usable() {
            tracing::warn!(
                "sandbox.claudeCodeBash is on but this machine cannot sandbox ({}): Claude \
                 Code's Bash commands run unconfined",
                support.missing().unwrap_or_default()
            );
            return Ok(None);
        }
        let Some(tascer) = std::env::current_exe()
            .ok()
            .filter(|exe| exe.file_stem().is_some_and(|n| n == "tascer"))
        else {
            tracing::warn!(
                "sandbox.claudeCodeBash is on but no `tascer` executable runs this hook"
            );
            return Ok(None);
        };
        let temp = std::env::temp_dir().join(format!(
            "tascer-claude-{}",
            tascer_ledger::digest::sha256_hex(session_id.as_bytes())
                .get(..16)
                .unwrap_or_default()
        ));
        let io = |what: &str, e: std::io::Error| Error::InvalidOptions(format!("{what}: {e}"));
        std::fs::create_dir_all(&temp)
            .map_err(|e| io("cannot create the sandbox's temporary directory", e))?;
        let policy = crate::sandbox_setup::settings_policy(&wanted, project).allow_write(&temp);
        let json = policy.to_json();
        let dir = home.join("sandbox");
        let policy_file = dir.join(format!(
            "policy-{}.json",
            tascer_ledger::digest::sha256_hex(json.as_bytes())
                .get(..16)
                .unwrap_or_default()
        ));
        if !policy_file.is_file() {
            std::fs::create_dir_all(&dir)
                .map_err(|e| io("cannot create the policy directory", e))?;
            let partial = dir.join(format!(".policy-{}.tmp", std::process::id()));
            std::fs::write(&partial, &json)
                .map_err(|e| io("cannot write the sandbox policy", e))?;
            std::fs::rename(&partial, &policy_file)
                .map_err(|e| io("cannot write the sandbox policy", e))?;
        }
        Ok(Some(HostBashSandbox {
            tascer,
            policy_file,
            temp,
        }))
    }

    /// `input` (a Bash call's) with its command rewritten to run through
    /// `tascer sandbox`; `None` for a call that is not Bash, has no
    /// command, or asks to run outside the sandbox (`dangerouslyDisableSandbox`,
    /// which the permission policy already made an ask or a refusal).
    pub fn wrap(&self, tool_name: &str, input: &Value) -> Option<Value> {
        let call = tascer_core::ToolCall {
            tool_name: tool_name.to_string(),
            input: input.clone(),
            tool_use_id: String::new(),
            cwd: PathBuf::new(),
            session_id: String::new(),
        };
        if tool_name != "Bash" || wants_unsandboxed(&call) {
            return None;
        }
        let command = input.get("command")?.as_str()?;
        let line = format!(
            "TMPDIR={} {} sandbox --policy {} -- bash -c {}",
            shell_quote(&self.temp.to_string_lossy()),
            shell_quote(&self.tascer.to_string_lossy()),
            shell_quote(&self.policy_file.to_string_lossy()),
            shell_quote(command),
        );
        let mut wrapped = input.clone();
        wrapped["command"] = Value::String(line);
        Some(wrapped)
    }
}
