//! The `policies` object of a settings file (docs/permissions.md): the
//! roots and switches of the built-in file-access policy and the MCP
//! policy's allow and deny lists. Unknown keys are errors: a misspelt
//! restriction must not silently leave a directory open.

use serde::{Deserialize, Serialize};
use tascer_core::Behavior;

use crate::safety::SensitiveAction;

/// The `policies` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoliciesSettings {
    /// The file-access policy (file tools' paths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_access: Option<FileAccessSettings>,
    /// The MCP policy (`mcp__<server>__<tool>` calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpPolicySettings>,
}

/// `policies.fileAccess`. Lists merge across layers; each switch comes
/// from the highest layer that sets it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileAccessSettings {
    /// Directories file tools may use besides the working directory and
    /// `permissions.additionalDirectories` (`~/` allowed; relative ones
    /// are anchored at the project).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_roots: Vec<String>,
    /// Directories no file tool may touch, even inside an allowed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restricted_roots: Vec<String>,
    /// Refuse paths outside the allowed roots (default false: the mode and
    /// rules decide, which asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_outside: Option<bool>,
    /// What writing a sensitive file gets (default `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitive_write: Option<SensitiveAction>,
    /// Also look at literal Bash arguments and redirection targets
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_shell_args: Option<bool>,
}

/// `policies.mcp`. Lists merge across layers (deny wins over allow); the
/// default comes from the highest layer that sets it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpPolicySettings {
    /// Servers (`github`) or tools (`github__search`,
    /// `mcp__github__search`) allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Servers or tools denied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// What calls of an MCP tool on neither list get (default: no
    /// opinion, the rules and the mode decide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Behavior>,
}

impl PoliciesSettings {
    /// Checks what serde cannot: no empty root or name.
    pub fn validate(&self) -> Result<(), String> {
        let empty = |list: &[String]| list.iter().any(|s| s.trim().is_empty());
        if let Some(f) = &self.file_access {
            for (name, list) in [
                ("allowedRoots", &f.allowed_roots),
                ("restrictedRoots", &f.restricted_roots),
            ] {
                if empty(list) {
                    return Err(format!("policies.fileAccess.{name}: an entry is empty"));
                }
            }
        }
        if let Some(m) = &self.mcp {
            for (name, list) in [("allow", &m.allow), ("deny", &m.deny)] {
                if empty(list) {
                    return Err(format!("policies.mcp.{name}: an entry is empty"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_policies_object_reads_and_refuses_unknown_keys_and_empty_entries() {
        let p: PoliciesSettings = serde_json::from_str(
            r#"{"fileAccess": {"restrictedRoots": ["secrets"], "blockOutside": true,
                               "sensitiveWrite": "ask"},
                "mcp": {"deny": ["shell"], "default": "ask"}}"#,
        )
        .unwrap();
        let f = p.file_access.as_ref().unwrap();
        assert_eq!(f.restricted_roots, ["secrets"]);
        assert_eq!(
            (f.block_outside, f.sensitive_write),
            (Some(true), Some(SensitiveAction::Ask))
        );
        assert_eq!(p.mcp.as_ref().unwrap().default, Some(Behavior::Ask));
        assert!(p.validate().is_ok());
        let typo = serde_json::from_str::<PoliciesSettings>(
            r#"{"fileAccess": {"restrictedRoot": ["secrets"]}}"#,
        );
        assert!(typo.unwrap_err().to_string().contains("restrictedRoot"));
        let empty: PoliciesSettings = serde_json::from_str(r#"{"mcp": {"allow": [" "]}}"#).unwrap();
        assert_eq!(
            empty.validate().unwrap_err(),
            "policies.mcp.allow: an entry is empty"
        );
    }
}
