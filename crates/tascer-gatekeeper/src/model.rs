//! The model behind `confirm`, `commit` messages and `validate_intent`:
//! configured from the environment like `tascer run`
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`, …), model
//! from `TASCER_REVIEW_MODEL`, else `TASCER_MODEL`, else the provider's
//! default.
//!
//! The call itself is the loop's LLM reviewers' own
//! ([`tascer::reviewer::ask_model`]: a system prompt, one user message, the
//! answer's text); this one answers the gatekeeper's own three questions
//! with prompts of its own.

use serde_json::Value;
use tascer::reviewer::{ModelQuestion, ask_model};
use tascer::{ModelClient, ProviderConfig, ProviderKind};

use crate::error::{GatekeeperError, Result};

/// How much diff the model gets.
pub(crate) const MODEL_DIFF_BYTES: usize = 120_000;

/// The environment variables that configure a model, for messages.
pub(crate) const MODEL_ENV_HINT: &str =
    "ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL for an OpenAI-compatible server";

/// The gatekeeper's configured model (for confirm, commit messages and
/// validate_intent).
pub(crate) struct GateModel {
    client: ModelClient,
    model: String,
}

impl GateModel {
    /// The model configured by the environment, or `None` when no
    /// provider is configured.
    pub fn from_env() -> Option<GateModel> {
        let mut config = ProviderConfig::from_env().ok()?;
        config.max_retries = 2;
        let default = match config.kind {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::OpenAi => "gpt-4o-mini",
        };
        let model = ["TASCER_REVIEW_MODEL", "TASCER_MODEL"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|m| !m.trim().is_empty()))
            .unwrap_or_else(|| default.to_owned());
        let client = ModelClient::new(config).ok()?;
        Some(GateModel { client, model })
    }

    /// `provider/model`, for reports.
    pub fn name(&self) -> String {
        format!("{}/{}", self.client.provider_name(), self.model)
    }

    /// One model call; returns the text of the answer.
    pub async fn ask(&self, system: &str, user: String) -> Result<String> {
        let question = ModelQuestion {
            model: self.model.clone(),
            system: system.to_owned(),
            user,
            max_tokens: 2048,
        };
        let answer = ask_model(&self.client, question).await.map_err(|source| {
            GatekeeperError::GateModel {
                model: self.name(),
                source: Box::new(source),
            }
        })?;
        Ok(answer.text("\n"))
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
