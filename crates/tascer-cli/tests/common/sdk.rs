//! Helpers for the tests that drive `tascer` through the official Agent
//! SDKs (`cli_path` / `pathToClaudeCodeExecutable`): where the SDKs are
//! installed (`scripts/install-test-deps`), a workspace with its own
//! Tascer home, running a case script and reading what it reports.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario};

use super::{ledger_rows, tascer, texts};

/// The repository root.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The case scripts (`tests/sdk/`).
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sdk")
        .join(name)
}

/// The venv's Python when it has `claude_agent_sdk`, else `None` with a
/// SKIPPED line.
pub fn python_sdk(test: &str) -> Option<PathBuf> {
    let python = repo().join(".test-deps/venv/bin/python");
    let ok = python.is_file()
        && Command::new(&python)
            .args(["-c", "import claude_agent_sdk"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !ok {
        println!(
            "SKIPPED {test}: the Python Agent SDK is not installed in {} (run scripts/install-test-deps)",
            python.display()
        );
        return None;
    }
    Some(python)
}

/// The directory holding `node_modules/@anthropic-ai/claude-agent-sdk`
/// when it and `node` are there, else `None` with a SKIPPED line.
pub fn ts_sdk(test: &str) -> Option<PathBuf> {
    let prefix = repo().join(".test-deps/sdk-ts");
    let sdk = prefix.join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !sdk.is_file() || !node {
        println!(
            "SKIPPED {test}: the TypeScript Agent SDK or node is missing ({}; run scripts/install-test-deps)",
            sdk.display()
        );
        return None;
    }
    Some(prefix)
}

/// A temp workspace and Tascer home, and the mock model playing a scenario.
pub struct Workspace {
    pub cwd: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub mock: MockServer,
}

impl Workspace {
    /// A workspace whose mock plays what `scenario` builds from the
    /// workspace path.
    pub fn new(scenario: impl FnOnce(&Path) -> Scenario) -> Workspace {
        let cwd = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let scenario = scenario(&cwd.path().canonicalize().unwrap());
        let mock = MockServer::start_blocking(scenario).unwrap();
        Workspace { cwd, home, mock }
    }

    /// The workspace path (canonical, as Tascer reports it).
    pub fn dir(&self) -> PathBuf {
        self.cwd.path().canonicalize().unwrap()
    }

    /// The config a case script takes.
    pub fn config(&self, prompt: &str) -> Value {
        json!({
            "cli": env!("CARGO_BIN_EXE_tascer"),
            "base_url": self.mock.url(),
            "home": self.home.path(),
            "cwd": self.dir(),
            "prompt": prompt,
        })
    }

    /// Runs `program args… CASE CONFIG` and returns the JSON object on its
    /// last stdout line.
    pub fn run_case(&self, program: &Path, args: &[&Path], case: &str, config: &Value) -> Value {
        let out = Command::new(program)
            .args(args)
            .arg(case)
            .arg(config.to_string())
            .current_dir(self.dir())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("TASCER_LOG")
            .env_remove("TASCER_SIGNING")
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert!(
            out.status.success(),
            "{case} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        let last = stdout.lines().last().unwrap_or_default();
        serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("{case}: last line is not JSON ({e}):\n{stdout}\n{stderr}"))
    }

    /// Asserts that `tascer verify` passes on the session.
    pub fn verify(&self, session: &str) {
        let out = tascer(self.home.path(), &self.dir())
            .args(["verify", session])
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert!(
            out.status.success(),
            "verify {session} failed:\n{stdout}\n{stderr}"
        );
    }

    /// The payloads of a session's ledger entries of one kind.
    pub fn ledger(&self, session: &str, kind: &str) -> Vec<Value> {
        ledger_rows(self.home.path(), session)
            .into_iter()
            .filter(|row| row.kind == kind)
            .map(|row| row.payload)
            .collect()
    }

    /// The text of every `tool_result` block the model was sent.
    pub fn tool_results_sent(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for request in self.mock.requests() {
            for message in request.body["messages"].as_array().into_iter().flatten() {
                for block in message["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        out.push((
                            super::content_text(&block["content"]),
                            block["is_error"].as_bool().unwrap_or(false),
                        ));
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The messages of a class (`ResultMessage`, …) among `messages`.
pub fn of_class<'a>(messages: &'a Value, class: &str) -> Vec<&'a Value> {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["class"] == class)
        .collect()
}

/// The one result among `messages`; panics unless there is exactly one.
pub fn the_result(messages: &Value) -> &Value {
    let results = of_class(messages, "ResultMessage");
    assert_eq!(results.len(), 1, "exactly one result: {messages:#}");
    results[0]
}
