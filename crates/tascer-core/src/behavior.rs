//! [`Behavior`]: allow, ask or deny — the one answer to "may this tool call
//! run?".

use serde::{Deserialize, Serialize};

/// Allow, deny or ask: what a permission rule, a policy, a hook or a
/// decision says about a tool call. Serialized as Claude Code writes it
/// (`"allow"`, `"deny"`, `"ask"`: rule lists, a hook's
/// `permissionDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Behavior {
    /// Run the tool.
    Allow,
    /// Do not run it.
    Deny,
    /// A human (or someone answering for one) must decide.
    Ask,
}

impl Behavior {
    /// `"allow"`, `"deny"` or `"ask"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Behavior::Allow => "allow",
            Behavior::Deny => "deny",
            Behavior::Ask => "ask",
        }
    }

    /// True when `self` is stricter than `other`: deny beats ask beats
    /// allow.
    pub fn is_stricter_than(self, other: Behavior) -> bool {
        self.strictness() > other.strictness()
    }

    fn strictness(self) -> u8 {
        match self {
            Behavior::Allow => 0,
            Behavior::Ask => 1,
            Behavior::Deny => 2,
        }
    }
}

impl std::fmt::Display for Behavior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Behavior;

    #[test]
    fn serializes_as_claude_code_writes_it() {
        for b in [Behavior::Allow, Behavior::Deny, Behavior::Ask] {
            let json = serde_json::to_value(b).ok();
            assert_eq!(json, Some(serde_json::Value::from(b.as_str())));
        }
        assert!(Behavior::Deny.is_stricter_than(Behavior::Ask));
        assert!(Behavior::Ask.is_stricter_than(Behavior::Allow));
        assert!(!Behavior::Ask.is_stricter_than(Behavior::Ask));
    }
}
