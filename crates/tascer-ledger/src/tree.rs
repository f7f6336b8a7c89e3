//! Session trees: a parent session (a manager) records a `checkpoint`
//! entry per child session it ran (a contract), naming the child and the
//! hash of the child's ledger head at that moment. Verifying the parent
//! then covers the tree: each child must verify and must hold that hash at
//! that seq, so a child rewritten or cut after the parent recorded it is
//! detected.

use serde::Serialize;
use serde_json::{Value, json};

use crate::VerifyingKey;
use crate::entry::{EntryKind, LedgerEntry};
use crate::error::Result;
use crate::ledger::Ledger;
use crate::verify::VerifyReport;

/// The payload field that marks a checkpoint as a child-session link.
pub const CHILD_SESSION_FIELD: &str = "child_session";

/// A parent's record of one child session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChildLink {
    /// Seq of the parent's checkpoint entry.
    pub parent_seq: u64,
    /// The child session.
    pub session_id: String,
    /// The child's head hash when it was recorded.
    pub head: String,
    /// The child's entry count (seq of that head) when it was recorded.
    pub seq: u64,
}

/// The payload of a parent's checkpoint naming a child session; `extra`
/// (an object) adds context such as the contract's name.
pub fn child_link_payload(session_id: &str, head: &str, seq: u64, extra: Value) -> Value {
    let mut payload = json!({
        CHILD_SESSION_FIELD: session_id,
        "child_head": head,
        "child_seq": seq,
    });
    if let (Some(obj), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        for (k, v) in extra {
            obj.entry(k).or_insert(v);
        }
    }
    payload
}

/// The child links among a session's entries, in order.
pub fn child_links(entries: &[LedgerEntry]) -> Vec<ChildLink> {
    entries
        .iter()
        .filter(|e| e.kind == EntryKind::Checkpoint)
        .filter_map(|e| {
            Some(ChildLink {
                parent_seq: e.seq,
                session_id: e.payload.get(CHILD_SESSION_FIELD)?.as_str()?.to_string(),
                head: e.payload.get("child_head")?.as_str()?.to_string(),
                seq: e.payload.get("child_seq")?.as_u64()?,
            })
        })
        .collect()
}

/// One child session of a verified tree.
#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    /// The session that recorded it.
    pub parent: String,
    /// Depth below the root (1 for the root's children).
    pub depth: usize,
    /// The link as recorded.
    pub link: ChildLink,
    /// The child's own verification (`None` when it could not be read).
    pub report: Option<VerifyReport>,
    /// What is wrong with the link, if anything (missing child, the
    /// recorded hash is not the child's entry at that seq, unreadable).
    pub error: Option<String>,
}

impl TreeNode {
    /// True when the child verifies and holds the recorded head.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.report.as_ref().is_some_and(|r| r.ok)
    }
}

impl Ledger {
    /// Verifies the children recorded by `session_id`, and theirs, depth
    /// first (a session already seen is not visited again).
    pub fn verify_children(
        &self,
        session_id: &str,
        trusted_key: Option<&VerifyingKey>,
    ) -> Result<Vec<TreeNode>> {
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::from([session_id.to_string()]);
        self.walk(session_id, 1, trusted_key, &mut seen, &mut out)?;
        Ok(out)
    }

    fn walk(
        &self,
        parent: &str,
        depth: usize,
        key: Option<&VerifyingKey>,
        seen: &mut std::collections::BTreeSet<String>,
        out: &mut Vec<TreeNode>,
    ) -> Result<()> {
        let entries = self.store().entries(parent)?;
        for link in child_links(&entries) {
            if !seen.insert(link.session_id.clone()) {
                continue;
            }
            let mut node = TreeNode {
                parent: parent.to_string(),
                depth,
                link: link.clone(),
                report: None,
                error: None,
            };
            match self.verify(&link.session_id, key) {
                Ok(report) => node.report = Some(report),
                Err(e) => node.error = Some(format!("cannot verify the child session: {e}")),
            }
            if node.error.is_none() {
                let child = self.store().entries(&link.session_id)?;
                match child.iter().find(|e| e.seq == link.seq) {
                    Some(e) if e.hash == link.head => {}
                    Some(e) => {
                        node.error = Some(format!(
                            "the parent recorded head {} at entry {}, the child has {}",
                            link.head, link.seq, e.hash
                        ))
                    }
                    None => {
                        node.error = Some(format!(
                            "the parent recorded head {} at entry {}, the child has no such entry",
                            link.head, link.seq
                        ))
                    }
                }
            }
            let descend = node.ok();
            out.push(node);
            if descend {
                self.walk(&link.session_id, depth + 1, key, seen, out)?;
            }
        }
        Ok(())
    }
}
