//! The models behind `confirm`, `commit` messages and `validate_intent`:
//! the provider configured from the environment like `tascer run`
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`, …), and a
//! model per question ([`GateQuestion`]): the settings'
//! `mcpServe.models.<tool>`, else `TASCER_MCP_MODEL_<TOOL>`, else
//! `TASCER_REVIEW_MODEL`, else `TASCER_MODEL`, else the provider's
//! default. Aliases (`haiku`, `sonnet`, `opus`) become the provider's ids.
//!
//! The call itself is the loop's LLM reviewers' own
//! ([`tascer::reviewer::ask_model`]: a system prompt, one user message, the
//! answer's text); this one answers the gatekeeper's own three questions
//! with prompts of its own.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use tascer::reviewer::{ModelQuestion, ask_model};
use tascer::{ModelClient, ProviderConfig, ProviderKind};

use crate::error::{GatekeeperError, Result};
use crate::server::elapsed_ms;

/// How much diff the model gets.
pub(crate) const MODEL_DIFF_BYTES: usize = 120_000;

/// The environment variables that configure a model, for messages.
pub(crate) const MODEL_ENV_HINT: &str =
    "ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL for an OpenAI-compatible server";

/// The gatekeeper's questions to a model, each with a model of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GateQuestion {
    /// `confirm`'s review of the diff (also in `commit`'s chain).
    Confirm,
    /// `commit`'s message.
    CommitMessage,
    /// `validate_intent`'s judgement.
    ValidateIntent,
}

impl GateQuestion {
    /// Its key in `mcpServe.models`.
    pub fn setting(self) -> &'static str {
        match self {
            GateQuestion::Confirm => "confirm",
            GateQuestion::CommitMessage => "commitMessage",
            GateQuestion::ValidateIntent => "validateIntent",
        }
    }

    /// The environment variable naming its model.
    pub fn env(self) -> &'static str {
        match self {
            GateQuestion::Confirm => "TASCER_MCP_MODEL_CONFIRM",
            GateQuestion::CommitMessage => "TASCER_MCP_MODEL_COMMIT_MESSAGE",
            GateQuestion::ValidateIntent => "TASCER_MCP_MODEL_VALIDATE_INTENT",
        }
    }

    /// Its name as an agent in the webhooks' `agents` (a commit message is
    /// not a verdict, and is not reported as one).
    pub fn agent(self) -> &'static str {
        match self {
            GateQuestion::Confirm => "confirm",
            GateQuestion::CommitMessage => "commit_message",
            GateQuestion::ValidateIntent => "validate_intent",
        }
    }
}

/// A model's answer to one of the gatekeeper's questions.
pub(crate) struct GateAnswer {
    /// The answer's text.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// How long the call took, milliseconds.
    pub duration_ms: u64,
}

/// The model configured for one of the gatekeeper's questions.
pub(crate) struct GateModel {
    client: ModelClient,
    model: String,
    /// Where the model was chosen: a settings file, an environment
    /// variable, or `default`.
    chosen_by: String,
}

impl GateModel {
    /// The model for `question` in the repository (or directory) `dir`
    /// under the Tascer home `home`; `Ok(None)` when no provider is
    /// configured. `Err` when the settings' `mcpServe.models` is
    /// malformed.
    pub fn for_question(
        question: GateQuestion,
        dir: &Path,
        home: &Path,
    ) -> Result<Option<GateModel>> {
        let Ok(mut config) = ProviderConfig::from_env() else {
            return Ok(None);
        };
        config.max_retries = 2;
        let default = match config.kind {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::OpenAi => "gpt-4o-mini",
        };
        let (model, chosen_by) = match tascer_settings::mcp_model(dir, home, question.setting())? {
            Some((file, model)) => (
                model,
                format!(
                    "mcpServe.models.{} in {}",
                    question.setting(),
                    file.display()
                ),
            ),
            None => [question.env(), "TASCER_REVIEW_MODEL", "TASCER_MODEL"]
                .iter()
                .find_map(|v| {
                    std::env::var(v)
                        .ok()
                        .map(|m| m.trim().to_owned())
                        .filter(|m| !m.is_empty())
                        .map(|m| (m, (*v).to_owned()))
                })
                .unwrap_or_else(|| (default.to_owned(), "default".to_owned())),
        };
        let model = config.resolve_model(&model);
        let Ok(client) = ModelClient::new(config) else {
            return Ok(None);
        };
        Ok(Some(GateModel {
            client,
            model,
            chosen_by,
        }))
    }

    /// `provider/model`, for reports.
    pub fn name(&self) -> String {
        format!("{}/{}", self.client.provider_name(), self.model)
    }

    /// The model id sent to the provider.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Where the model was chosen (`mcpServe.models.confirm in …`, an
    /// environment variable's name, or `default`), for reports.
    pub fn chosen_by(&self) -> &str {
        &self.chosen_by
    }

    /// One model call; returns the answer's text and who gave it.
    pub async fn ask(&self, system: &str, user: String) -> Result<GateAnswer> {
        let question = ModelQuestion {
            model: self.model.clone(),
            system: system.to_owned(),
            user,
            max_tokens: 2048,
        };
        let started = Instant::now();
        let answer = ask_model(&self.client, question).await.map_err(|source| {
            GatekeeperError::GateModel {
                model: self.name(),
                source: Box::new(source),
            }
        })?;
        Ok(GateAnswer {
            text: answer.text("\n"),
            model: answer.model,
            duration_ms: elapsed_ms(started),
        })
    }
}

/// The first JSON object in `text` (models like to wrap JSON in prose or
/// code fences).
pub(crate) fn extract_json(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    match de.next() {
        Some(Ok(v)) if v.is_object() => Some(v),
        _ => {
            let end = text.rfind('}')?;
            serde_json::from_str(text.get(start..=end)?).ok()
        }
    }
}

/// System prompt of the `confirm` reviewer.
pub(crate) const CONFIRM_SYSTEM: &str = "You are a strict code reviewer acting as a merge gate. \
You get a diff that already passed the project's lint and test commands, and optionally what \
the change is meant to do. Decide whether it is fit to commit: correct, complete for its stated \
purpose, no debugging leftovers, no secrets, no unrelated changes, no obviously broken code. \
Answer with one JSON object only: {\"verdict\": \"CONFIRMED\" | \"DECLINED\", \"reasons\": \
[\"short reason\", ...]}.";

/// System prompt for commit messages.
pub(crate) const COMMIT_SYSTEM: &str = "Write a git commit message for the diff you are given: \
one summary line of at most 72 characters in the imperative mood, optionally followed by a blank \
line and a few short lines of detail. Output only the message.";

/// System prompt of `validate_intent`.
pub(crate) const INTENT_SYSTEM: &str = "You audit an AI coding agent's work for drift from what \
the user asked. You get the user's request and the transcript of the agent's session. Report \
where the agent did something that was not asked, skipped something that was asked, or changed \
the goal. Answer with one JSON object only: {\"aligned\": true | false, \"drift\": [{\"what\": \
\"...\", \"evidence\": \"...\", \"severity\": \"low\" | \"medium\" | \"high\"}], \"summary\": \
\"one or two sentences\"}.";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn extracts_json() {
        let v =
            extract_json("Sure:\n```json\n{\"verdict\": \"DECLINED\", \"reasons\": [\"x\"]}\n```")
                .unwrap();
        assert_eq!(v["verdict"], "DECLINED");
        assert!(extract_json("no json here").is_none());
        let v = extract_json("{\"a\": {\"b\": 1}} trailing } brace").unwrap();
        assert_eq!(v["a"]["b"], 1);
    }
}
