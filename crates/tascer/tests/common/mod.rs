//! Shared helpers for the loop's integration tests.
#![allow(
    dead_code,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::new_without_default
)]

use futures::StreamExt;
use tascer::{Message, Options, ProviderConfig, ResultMessage};
use tascer_testkit::{MockServer, check_tool_pairing};

/// A temp workspace and Tascer home.
pub struct Env {
    pub root: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("ws")).unwrap();
        Env { root }
    }
    pub fn ws(&self) -> std::path::PathBuf {
        self.root.path().join("ws").canonicalize().unwrap()
    }
    pub fn home(&self) -> std::path::PathBuf {
        self.root.path().join("home")
    }
}

/// Options pointed at the mock over the Anthropic wire format, in
/// `bypassPermissions` mode.
pub fn anthropic_options(server: &MockServer, env: &Env) -> Options {
    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("test-key".into());
    provider.initial_backoff = std::time::Duration::from_millis(5);
    Options::new()
        .provider(provider)
        .model("mock-model")
        .cwd(env.ws())
        .home(env.home())
        // The loop's own tests run every call; permissions have their own
        // tests (permissions.rs).
        .permission_mode(tascer::guard::permissions::PermissionMode::BypassPermissions)
}

/// Options pointed at the mock over the OpenAI wire format, in
/// `bypassPermissions` mode.
pub fn openai_options(server: &MockServer, env: &Env) -> Options {
    let mut provider = ProviderConfig::openai();
    provider.base_url = server.openai_base_url();
    provider.api_key = None;
    provider.initial_backoff = std::time::Duration::from_millis(5);
    Options::new()
        .provider(provider)
        .model("mock-model")
        .cwd(env.ws())
        .home(env.home())
        // The loop's own tests run every call; permissions have their own
        // tests (permissions.rs).
        .permission_mode(tascer::guard::permissions::PermissionMode::BypassPermissions)
}

/// Runs a prompt to its end and returns every message.
pub async fn collect(prompt: &str, options: Options) -> Vec<Message> {
    let stream = tascer::query(prompt, options);
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        stream.collect::<Vec<_>>(),
    )
    .await
    .expect("run did not finish in 60 s")
}

/// The result message (which must be the last one).
pub fn result_of(messages: &[Message]) -> &ResultMessage {
    match messages.last() {
        Some(Message::Result(r)) => r,
        other => panic!("last message is not a result: {other:?}"),
    }
}

/// Asserts the tool_use/tool_result invariant on every recorded request.
pub fn assert_pairing(server: &MockServer) {
    for (i, request) in server.requests().iter().enumerate() {
        if let Err(problem) = check_tool_pairing(&request.body) {
            panic!(
                "request {i} breaks tool pairing: {problem}\n{}",
                request.body
            );
        }
    }
}

/// Every tool result of a run, in order: (tool_use_id, text, is_error).
#[allow(dead_code)]
pub fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for m in messages {
        if let Message::User(u) = m
            && let tascer::UserContent::Blocks(blocks) = &u.message.content
        {
            for b in blocks {
                if let tascer::ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } = b
                {
                    out.push((
                        tool_use_id.clone(),
                        content.to_text(),
                        is_error.unwrap_or(false),
                    ));
                }
            }
        }
    }
    out
}

/// Writes a file, creating its directories.
pub fn write_file(path: impl AsRef<std::path::Path>, text: &str) {
    let path = path.as_ref();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fields of the run's `system/init` message.
pub fn init_of(messages: &[Message]) -> serde_json::Map<String, serde_json::Value> {
    messages
        .iter()
        .find_map(|m| match m {
            Message::System(s) if s.subtype == "init" => Some(s.data.clone()),
            _ => None,
        })
        .expect("an init message")
}

/// The text of a request's `system` or `content` value: a string, or the
/// `text` of each block.
pub fn text_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("neither text nor blocks: {other}"),
    }
}
