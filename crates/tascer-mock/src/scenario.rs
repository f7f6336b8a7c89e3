//! The scripted scenario: which turns the mock model plays, and which faults
//! it injects before them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::route::Route;
use crate::turn::Turn;

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario file {}: {source}", path.display())]
    Read {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The JSON is malformed or does not match the scenario format.
    #[error("invalid scenario{origin}: {source}")]
    Parse {
        /// `" in <file>"` when the scenario came from a file, else empty.
        origin: String,
        /// The underlying JSON error (names the field and line/column).
        source: serde_json::Error,
    },
    /// The JSON is well-formed but describes an impossible scenario.
    #[error("invalid scenario{origin}: {message}")]
    Invalid {
        /// `" in <file>"` when the scenario came from a file, else empty.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

/// A scripted conversation: the mock model answers the n-th request of a
/// conversation (counted by assistant messages in the request history) with
/// the n-th turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form note for humans; ignored by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Model name reported when the request names none (default `mock-model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When the history goes past the last turn, replay the last turn again
    /// instead of answering "(mock scenario has no more turns)".
    #[serde(default, skip_serializing_if = "is_false")]
    pub loop_last_turn: bool,
    /// The turns, in order.
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// Other conversations, e.g. a subagent's: a request whose first user
    /// message contains `when_prompt_contains` plays that conversation's
    /// turns instead of `turns` (the first match wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<Conversation>,
    /// Side requests answered by their content (see [`Route`]): checked
    /// first, in order; the first match answers, whatever its turn index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
}

/// A separately scripted conversation, chosen by its first prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// Text the conversation's first user message contains.
    pub when_prompt_contains: String,
    /// Replay the last turn when the history goes past it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub loop_last_turn: bool,
    /// The turns, in order.
    #[serde(default)]
    pub turns: Vec<Turn>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Scenario {
    /// An empty scenario (no turns).
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a scenario from JSON text.
    pub fn from_json(s: &str) -> Result<Self, ScenarioError> {
        Self::parse(s, String::new())
    }

    /// Reads and parses a scenario JSON file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, format!(" in {}", path.display()))
    }

    fn parse(s: &str, origin: String) -> Result<Self, ScenarioError> {
        let scenario: Scenario = match serde_json::from_str(s) {
            Ok(scenario) => scenario,
            Err(source) => return Err(ScenarioError::Parse { origin, source }),
        };
        scenario
            .validate()
            .map_err(|message| ScenarioError::Invalid { origin, message })?;
        Ok(scenario)
    }

    /// Checks what serde cannot: non-empty tool names and unique explicit
    /// tool ids within a turn.
    pub fn validate(&self) -> Result<(), String> {
        let all = self
            .conversations
            .iter()
            .flat_map(|c| c.turns.iter())
            .chain(self.routes.iter().map(|r| &r.turn))
            .chain(self.turns.iter());
        for (t, turn) in all.enumerate() {
            let mut ids = std::collections::BTreeSet::new();
            for (i, call) in turn.tool_calls.iter().enumerate() {
                if call.name.is_empty() {
                    return Err(format!("turn {t}, tool_calls[{i}]: `name` is empty"));
                }
                if let Some(id) = &call.id
                    && !ids.insert(id.clone())
                {
                    return Err(format!(
                        "turn {t}, tool_calls[{i}]: duplicate tool call id `{id}`"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Appends a turn.
    pub fn turn(mut self, t: Turn) -> Self {
        self.turns.push(t);
        self
    }

    /// Sets whether the last turn is replayed when the history runs past it.
    pub fn loop_last_turn(mut self, yes: bool) -> Self {
        self.loop_last_turn = yes;
        self
    }

    /// Adds a conversation played for requests whose first user message
    /// contains `when_prompt_contains`.
    pub fn conversation(
        mut self,
        when_prompt_contains: impl Into<String>,
        turns: Vec<Turn>,
    ) -> Self {
        self.conversations.push(Conversation {
            when_prompt_contains: when_prompt_contains.into(),
            loop_last_turn: false,
            turns,
        });
        self
    }

    /// Adds a route: requests it matches get its turn, before any
    /// conversation or turn is consulted.
    pub fn route(mut self, route: Route) -> Self {
        self.routes.push(route);
        self
    }

    /// The turn of the first route matching a request body, if any.
    pub fn routed_turn(&self, body: &Value) -> Option<&Turn> {
        self.routes
            .iter()
            .find(|r| r.matches(body))
            .map(|r| &r.turn)
    }

    /// The turns and loop flag for a conversation starting with `first_prompt`.
    pub fn turns_for(&self, first_prompt: &str) -> (&[Turn], bool) {
        match self
            .conversations
            .iter()
            .find(|c| first_prompt.contains(&c.when_prompt_contains))
        {
            Some(c) => (&c.turns, c.loop_last_turn),
            None => (&self.turns, self.loop_last_turn),
        }
    }

    /// Sets the model name reported when the request names none.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}
