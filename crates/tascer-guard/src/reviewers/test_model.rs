//! A scripted [`ReviewModel`] for the validators' tests: answers by the
//! first (reviewer, text in the question) pair that matches and keeps
//! every question.

use std::sync::Mutex;

use futures::future::BoxFuture;

use super::{ModelCall, ModelReply, ReviewModel};

/// Answers from a table; an unscripted question is a failed call.
pub(crate) struct Scripted {
    /// (reviewer name, text the question contains, answer).
    pub(crate) answers: Vec<(&'static str, &'static str, &'static str)>,
    /// Every question asked: (system prompt, user message).
    pub(crate) asked: Mutex<Vec<(String, String)>>,
}

impl Scripted {
    /// A model answering from `answers`.
    pub(crate) fn new(answers: Vec<(&'static str, &'static str, &'static str)>) -> Self {
        Scripted {
            answers,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// The questions asked so far.
    pub(crate) fn questions(&self) -> Vec<(String, String)> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl ReviewModel for Scripted {
    fn complete<'a>(&'a self, call: &'a ModelCall) -> BoxFuture<'a, Result<ModelReply, String>> {
        Box::pin(async move {
            if let Ok(mut asked) = self.asked.lock() {
                asked.push((call.system.clone(), call.user.clone()));
            }
            let text = self
                .answers
                .iter()
                .find(|(name, needle, _)| {
                    call.system.contains(&format!("reviewer: {name}\n"))
                        && call.user.contains(needle)
                })
                .map(|(_, _, text)| (*text).to_string())
                .ok_or("nothing scripted")?;
            Ok(ModelReply {
                text,
                model: "review-model".into(),
                usage: Default::default(),
            })
        })
    }

    fn default_model(&self) -> String {
        "review-model".into()
    }
}
