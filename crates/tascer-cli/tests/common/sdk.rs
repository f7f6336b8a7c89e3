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

/// An installed official SDK and how to run a case script with it.
pub enum Sdk {
    /// The venv's Python, which has `claude_agent_sdk`.
    Python(PathBuf),
    /// The directory holding `node_modules/@anthropic-ai/claude-agent-sdk`.
    TypeScript(PathBuf),
}

impl Sdk {
    /// The Python SDK, or `None` with a SKIPPED line.
    pub fn python(test: &str) -> Option<Sdk> {
        let python = repo().join(".test-deps/venv/bin/python");
        // Importing the SDK takes a second or two: ask once per test binary.
        static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let ok = *INSTALLED.get_or_init(|| {
            python.is_file()
                && Command::new(&python)
                    .args(["-c", "import claude_agent_sdk"])
                    .output()
                    .is_ok_and(|o| o.status.success())
        });
        if !ok {
            tascer_testkit::skip(
                test,
                &format!(
                    "the Python Agent SDK is not installed in {} (run scripts/install-test-deps)",
                    python.display()
                ),
            );
            return None;
        }
        Some(Sdk::Python(python))
    }

    /// The TypeScript SDK (and node), or `None` with a SKIPPED line.
    pub fn typescript(test: &str) -> Option<Sdk> {
        let prefix = repo().join(".test-deps/sdk-ts");
        let sdk = prefix.join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs");
        let node = Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !sdk.is_file() || !node {
            tascer_testkit::skip(
                test,
                &format!(
                    "the TypeScript Agent SDK or node is missing ({}; run scripts/install-test-deps)",
                    sdk.display()
                ),
            );
            return None;
        }
        Some(Sdk::TypeScript(prefix))
    }

    /// Runs one case of the SDK's script in `ws` and returns what it
    /// reported (its last stdout line).
    pub fn run(&self, ws: &Workspace, case: &str, config: &Value) -> Value {
        let mut cmd = match self {
            Sdk::Python(python) => {
                let mut cmd = Command::new(python);
                cmd.arg(script("python_sdk.py"));
                cmd
            }
            Sdk::TypeScript(prefix) => {
                let mut cmd = Command::new("node");
                cmd.arg(script("ts_sdk.mjs")).arg(prefix);
                cmd
            }
        };
        let out = cmd
            .arg(case)
            .arg(config.to_string())
            .current_dir(ws.dir())
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

/// The messages of a wire `type` (`result`, `assistant`, …) among
/// `messages` (both case scripts report messages in their wire shape).
pub fn of_type<'a>(messages: &'a Value, kind: &str) -> Vec<&'a Value> {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["type"] == kind)
        .collect()
}

/// The one result among `messages`; panics unless there is exactly one.
pub fn the_result(messages: &Value) -> &Value {
    let results = of_type(messages, "result");
    assert_eq!(results.len(), 1, "exactly one result: {messages:#}");
    results[0]
}

/// The session of the messages' result.
pub fn session_of(messages: &Value) -> String {
    the_result(messages)["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The content blocks of the main agent's messages of a type.
pub fn blocks<'a>(messages: &'a Value, kind: &str) -> Vec<&'a Value> {
    of_type(messages, kind)
        .into_iter()
        .filter(|m| m["parent_tool_use_id"].is_null())
        .flat_map(|m| m["message"]["content"].as_array().into_iter().flatten())
        .collect()
}
