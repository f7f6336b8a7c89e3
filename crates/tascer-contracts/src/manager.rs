//! The manager's side: what its system prompt teaches when it is offered
//! `ExecuteContracts`, and whether its run did what it was started for
//! ([`ManagerWatch`]): a refused or failed `ExecuteContracts` call makes the
//! run fail.

use std::collections::HashSet;

use tascer_core::{ContentBlock, Message, ResultMessage, UserContent};

use crate::options::EXECUTE_CONTRACTS_TOOL_NAME;

/// What a manager session's system prompt says when it is offered
/// `ExecuteContracts`: its job, and the contract file format.
pub const MANAGER_SYSTEM_PROMPT: &str = "You are a manager: you split the user's request into \
contracts, self-contained tasks that other agents (contractors) carry out, run them with the \
ExecuteContracts tool, and review the results.

How to work:
1. Decompose the request into independent tasks, each small enough for one agent session. \
A contractor sees only its contract (and the repository), never this conversation: put \
everything it needs into the contract.
2. Write each contract as a markdown file in the contracts directory (contracts/ unless told \
otherwise), named so that file-name order is the order to run them in: 01-short-name.md, \
02-…. Contracts run one after another in file-name order (or in parallel when the run is \
configured so).
3. Call ExecuteContracts once all contracts are written. It runs every pending contract and \
returns a summary: per contract its status (completed or failed), why, cost and the \
contractor's summary. Completed contracts move to contracts_completed/ with a Result section.
4. Review the results (read the changed files, the Result sections); write and run follow-up \
contracts for what failed or is missing; then answer the user with what was done.

The contract format (the Status and Task sections are required; Constraints are enforced):

```markdown
# Contract: <title>

## Status
pending

## Task
<what to do, with every detail the contractor needs: files, expected behaviour, how to check it>

## Constraints
- Files the agent may touch: src/greeting.rs, tests/**
- Tools allowed: Read, Edit, Write, Bash, Glob, Grep
- Time/turn budget: 20 turns, 10 min
- Cost budget: $1.00
- Model: sonnet
- <any other line is passed to the contractor as an instruction>

## Notes for the contractor
<optional: any other section is passed on as written>
```

Writes outside the listed files are refused, and a contract fails when it exceeds its \
budget. Leave out the constraints you do not need.";

/// Watches a manager session's messages: a call to `ExecuteContracts`
/// whose result is an error (refused by permissions, unable to run, or
/// with contracts that failed) and that no later successful call
/// replaced makes the run a failure.
#[derive(Debug, Default)]
pub struct ManagerWatch {
    /// Ids of the `ExecuteContracts` calls seen.
    calls: HashSet<String>,
    /// The last call's error text (`None`: it succeeded, or none ended).
    failure: Option<String>,
}

impl ManagerWatch {
    /// A watch that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks at one message of the session (subagents' included).
    pub fn observe(&mut self, message: &Message) {
        match message {
            Message::Assistant(a) => {
                for block in &a.message.content {
                    if let ContentBlock::ToolUse { id, name, .. } = block
                        && name == EXECUTE_CONTRACTS_TOOL_NAME
                    {
                        self.calls.insert(id.clone());
                    }
                }
            }
            Message::User(u) => {
                let UserContent::Blocks(blocks) = &u.message.content else {
                    return;
                };
                for block in blocks {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        ..
                    } = block
                        && self.calls.contains(tool_use_id)
                    {
                        self.failure = is_error
                            .unwrap_or(false)
                            .then(|| first_line(&content.to_text()));
                    }
                }
            }
            _ => {}
        }
    }

    /// Why the run failed, when its last `ExecuteContracts` call failed.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .as_ref()
            .map(|why| format!("{EXECUTE_CONTRACTS_TOOL_NAME} failed: {why}"))
    }

    /// Marks `result` as an error when the run failed (see
    /// [`failure`](Self::failure)), with the reason among its errors.
    pub fn judge(&self, result: &mut ResultMessage) {
        if let Some(why) = self.failure() {
            result.is_error = true;
            result.errors.push(why);
        }
    }
}

/// The first non-empty line of `text`, for a one-line message.
fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no reason given")
        .trim()
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;
    use tascer_core::{AssistantMessage, UserMessage};

    use super::*;

    fn call(id: &str, name: &str) -> Message {
        serde_json::from_value::<AssistantMessage>(json!({
            "message": {"id": "m", "type": "message", "role": "assistant", "model": "x",
                "content": [{"type": "tool_use", "id": id, "name": name, "input": {}}],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}},
            "parent_tool_use_id": null, "session_id": "s", "uuid": "u"
        }))
        .map(Message::Assistant)
        .unwrap()
    }

    fn result(id: &str, error: bool, text: &str) -> Message {
        Message::User(UserMessage::new(
            UserContent::Blocks(vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: text.to_string().into(),
                is_error: Some(error),
            }]),
            "s",
        ))
    }

    #[test]
    fn a_refused_call_fails_the_run_until_one_succeeds() {
        let mut w = ManagerWatch::new();
        w.observe(&call("a", "Read"));
        w.observe(&result("a", true, "no such file"));
        assert_eq!(w.failure(), None, "other tools do not count");
        w.observe(&call("b", EXECUTE_CONTRACTS_TOOL_NAME));
        w.observe(&result(
            "b",
            true,
            "\nPermission to use ExecuteContracts was denied\n",
        ));
        let why = w.failure().unwrap();
        assert!(why.contains("was denied"), "{why}");
        w.observe(&call("c", EXECUTE_CONTRACTS_TOOL_NAME));
        w.observe(&result("c", false, "2 contract(s): 2 completed"));
        assert_eq!(w.failure(), None);
    }
}
