//! What `tool-approve` and `tool-appeal` are asked about a call: the
//! call, the project's instruction files, the user's latest request and
//! the recent conversation (the user message), and what their verdicts
//! depend on (the cache key).
//!
//! `tool-approve`'s key holds the call, the working directory, the
//! instruction files' digests and the user's latest request — not the
//! transcript: the same call for the same request under the same
//! instructions is the same question, however the conversation went on
//! (so a call repeated while working on one request is answered from the
//! cache), while a new request or an edited `CLAUDE.md` asks again.
//! `tool-appeal`'s key also holds the transcript it saw: it judges the
//! conversation.

use serde_json::{Value, json};
use tascer_core::ToolCall;

use super::TranscriptExcerpt;
use super::memory::{InstructionFile, instructions_key, instructions_text};
use super::prompt::{input_text, shown, transcript_text};

/// One call's question, for either reviewer.
pub(crate) struct CallQuestion<'a> {
    /// The call.
    pub call: &'a ToolCall,
    /// Why the permission rules ask about it.
    pub why: &'a str,
    /// The project's instruction files.
    pub instructions: &'a [InstructionFile],
}

impl CallQuestion<'_> {
    /// The call and why it is asked about.
    fn call_text(&self) -> String {
        format!(
            "Tool call to review:\ntool: {}\ninput: {}\nworking directory: {}\n\nWhy the \
             permission rules ask about it: {}",
            self.call.tool_name,
            input_text(&self.call.input),
            self.call.cwd.display(),
            shown(self.why)
        )
    }

    /// The instruction files, the request and the conversation.
    fn context_text(&self, excerpt: &TranscriptExcerpt) -> String {
        format!(
            "The project's instruction files (CLAUDE.md and the like; the user's standing \
             wishes):\n{}\n\nThe user's latest request: {}\n\nRecent conversation (oldest \
             first):\n{}",
            instructions_text(self.instructions),
            excerpt.request.as_deref().map_or("(unknown)".into(), shown),
            transcript_text(excerpt)
        )
    }

    /// The key common to both: the call, where, under which instructions,
    /// for which request.
    fn key(&self, excerpt: &TranscriptExcerpt) -> Value {
        json!({
            "tool": self.call.tool_name,
            "input": self.call.input,
            "cwd": self.call.cwd,
            "instructions": instructions_key(self.instructions),
            "request": excerpt.request,
        })
    }

    /// `tool-approve`'s user message and cache key. The rules' wording of
    /// why they ask is left out of the key: the same call in the same
    /// place is the same question.
    pub fn approve(&self, excerpt: &TranscriptExcerpt) -> (String, Value) {
        let user = format!("{}\n\n{}", self.call_text(), self.context_text(excerpt));
        (user, self.key(excerpt))
    }

    /// `tool-appeal`'s user message and cache key, after `tool-approve`
    /// denied the call for `denied`.
    pub fn appeal(&self, denied: &str, excerpt: &TranscriptExcerpt) -> (String, Value) {
        let user = format!(
            "{}\n\nThe first reviewer (tool-approve) denied it: {}\n\n{}",
            self.call_text(),
            shown(denied),
            self.context_text(excerpt)
        );
        let mut key = self.key(excerpt);
        key["denied"] = json!(denied);
        key["transcript"] = json!(transcript_text(excerpt));
        (user, key)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use futures::future::BoxFuture;

    use super::super::{
        CachedVerdict, FailMode, ModelCall, ModelClass, ModelReply, ReviewCache, ReviewModel,
        ReviewerConfig, ReviewerKind, Reviewers, ReviewersConfig, Transcript, TranscriptMessage,
    };
    use super::*;

    /// Allows every call; keeps each request.
    #[derive(Default)]
    struct Recording {
        calls: Mutex<Vec<ModelCall>>,
        aliases: bool,
    }

    impl ReviewModel for Recording {
        fn complete<'a>(
            &'a self,
            call: &'a ModelCall,
        ) -> BoxFuture<'a, Result<ModelReply, String>> {
            Box::pin(async move {
                self.calls.lock().unwrap().push(call.clone());
                let verdict = if call.system.contains("reviewer: tool-approve\n") {
                    "deny"
                } else {
                    "allow"
                };
                Ok(ModelReply {
                    text: format!(r#"{{"verdict":"{verdict}","reason":"because"}}"#),
                    model: call.model.clone().unwrap_or_default(),
                    usage: Default::default(),
                })
            })
        }
        fn default_model(&self) -> String {
            "session-model".into()
        }
        fn resolve_model(&self, model: &str) -> String {
            format!("resolved-{model}")
        }
        fn class_model(&self, class: ModelClass) -> Option<String> {
            self.aliases.then(|| format!("{}-id", class.alias()))
        }
    }

    #[derive(Default)]
    struct Keys(Mutex<Vec<Value>>);
    impl ReviewCache for Keys {
        fn get(&self, _key: &Value) -> Option<CachedVerdict> {
            None
        }
        fn put(&self, key: &Value, _verdict: &CachedVerdict, _ttl: Duration) {
            self.0.lock().unwrap().push(key.clone());
        }
    }

    /// A conversation the test moves on.
    struct Live(Mutex<TranscriptExcerpt>);
    impl Transcript for Live {
        fn excerpt(&self, max: usize) -> TranscriptExcerpt {
            let mut e = self.0.lock().unwrap().clone();
            let start = e.messages.len().saturating_sub(max);
            e.messages.drain(..start);
            e
        }
    }

    fn config(model: Option<&str>) -> ReviewerConfig {
        ReviewerConfig {
            model: model.map(str::to_string),
            timeout: Duration::from_secs(5),
            fail_mode: FailMode::Closed,
            cache_ttl: Duration::from_secs(60),
            context_messages: ReviewerKind::ToolApprove.default_context_messages(),
            max_blocks: 1,
        }
    }

    fn call() -> ToolCall {
        ToolCall {
            tool_name: "Bash".into(),
            input: json!({"command": "git push origin main"}),
            tool_use_id: "t1".into(),
            cwd: "/w".into(),
            session_id: "s".into(),
        }
    }

    fn claude_md(text: &str) -> Vec<InstructionFile> {
        vec![InstructionFile {
            path: "/w/CLAUDE.md".into(),
            sha256: format!("sha256:{}", text.len()),
            content: text.into(),
        }]
    }

    fn message(role: &str, text: &str) -> TranscriptMessage {
        TranscriptMessage {
            role: role.into(),
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn claude_md_and_the_request_reach_tool_approve_and_its_cache_key() {
        let model = Arc::new(Recording::default());
        let keys = Arc::new(Keys::default());
        let live = Arc::new(Live(Mutex::new(TranscriptExcerpt {
            request: Some("publish the release".into()),
            messages: (0..10)
                .map(|i| message("assistant", &format!("step {i}")))
                .collect(),
        })));
        let reviewers = |instructions| {
            let cfg = ReviewersConfig {
                tool_approve: Some(config(None)),
                ..Default::default()
            };
            Reviewers::new(cfg, model.clone())
                .cache(keys.clone())
                .transcript(live.clone())
                .instructions(instructions)
        };
        let chain = reviewers(claude_md("Never push to main without asking."));
        chain.approve(&call(), "no allow rule", None).await.unwrap();
        let asked = model.calls.lock().unwrap()[0].clone();
        assert!(
            asked
                .user
                .contains("--- /w/CLAUDE.md ---\nNever push to main without asking.")
        );
        assert!(
            asked
                .user
                .contains("The user's latest request: publish the release")
        );
        // The last 6 messages (tool-approve's default), not the earlier ones.
        assert!(asked.user.contains("[assistant] step 9"), "{}", asked.user);
        assert!(asked.user.contains("[assistant] step 4"));
        assert!(!asked.user.contains("step 3"));
        assert!(asked.system.contains("standing wishes"), "{}", asked.system);

        // Later messages in the same request: the same key.
        live.0
            .lock()
            .unwrap()
            .messages
            .push(message("user", "[tool_result ok]"));
        chain.approve(&call(), "no allow rule", None).await.unwrap();
        // Another CLAUDE.md, then another request: new keys.
        reviewers(claude_md("Push when the tests pass."))
            .approve(&call(), "no allow rule", None)
            .await
            .unwrap();
        live.0.lock().unwrap().request = Some("undo the release".into());
        chain.approve(&call(), "no allow rule", None).await.unwrap();
        let keys = keys.0.lock().unwrap().clone();
        assert_eq!(keys.len(), 4);
        assert_eq!(
            keys[0], keys[1],
            "a later message does not change the question"
        );
        assert_ne!(keys[0], keys[2], "CLAUDE.md counts");
        assert_ne!(keys[0], keys[3], "the request counts");
        assert_eq!(keys[0]["question"]["request"], "publish the release");
    }

    #[tokio::test]
    async fn each_reviewer_gets_its_class_unless_a_model_is_configured() {
        let both = |approve: Option<&str>| ReviewersConfig {
            tool_approve: Some(config(approve)),
            tool_appeal: Some(config(None)),
            ..Default::default()
        };
        for (aliases, approve, expected) in [
            (true, None, ["haiku-id", "sonnet-id"]),
            (false, None, ["session-model", "session-model"]),
            (true, Some("opus"), ["resolved-opus", "sonnet-id"]),
        ] {
            let model = Arc::new(Recording {
                aliases,
                ..Default::default()
            });
            let review = Reviewers::new(both(approve), model.clone())
                .approve(&call(), "why", None)
                .await
                .unwrap();
            let sent: Vec<String> = model
                .calls
                .lock()
                .unwrap()
                .iter()
                .map(|c| c.model.clone().unwrap())
                .collect();
            assert_eq!(sent, expected);
            let recorded: Vec<&str> = review.records.iter().map(|r| r.model.as_str()).collect();
            assert_eq!(recorded, expected, "the ledger has the id sent");
        }
        assert_eq!(
            ReviewerKind::ErrorAcknowledge.default_model_class(),
            ModelClass::Haiku
        );
        assert_eq!(
            ReviewerKind::IntentValidate.default_model_class(),
            ModelClass::Sonnet
        );
    }
}
