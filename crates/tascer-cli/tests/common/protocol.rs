//! A `tascer` in control-protocol mode driven line by line over real
//! pipes (no SDK), for the protocol tests.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::sdk::Workspace;

/// The flags every SDK passes.
pub const PROTOCOL: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

/// A running `tascer` in control-protocol mode.
pub struct Session {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Session {
    pub fn start(ws: &Workspace, extra: &[&str]) -> Session {
        let mut child = super::tascer(ws.home.path(), &ws.dir())
            .env("ANTHROPIC_API_KEY", "test")
            .env("ANTHROPIC_BASE_URL", ws.mock.url())
            .env("TASCER_SIGNING", "off")
            .args(PROTOCOL)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
            text
        });
        Session {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    pub fn send(&mut self, frame: Value) {
        self.send_raw(&frame.to_string());
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn initialize(&mut self, extra: Value) -> Value {
        let mut request = json!({"subtype": "initialize", "hooks": null});
        request
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        self.send(
            json!({"type": "control_request", "request_id": "req_1_init", "request": request}),
        );
        self.reply_to("req_1_init")
    }

    pub fn prompt(&mut self, text: &str) {
        self.send(
            json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
                         "message": {"role": "user", "content": text}}),
        );
    }

    /// The next stdout frame (every line must be a JSON object).
    pub fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a frame within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout: {line}: {e}"))
    }

    /// Frames up to the first one `wanted` accepts, which is returned.
    pub fn until(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.next();
            if wanted(&frame) {
                return frame;
            }
        }
    }

    /// The `response` of the control_response to `request_id`.
    pub fn reply_to(&self, request_id: &str) -> Value {
        let frame = self.until(|f| {
            f["type"] == "control_response" && f["response"]["request_id"] == request_id
        });
        frame["response"].clone()
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Closes stdin, waits for the exit; the rest of stdout and stderr.
    pub fn finish(mut self) -> (ExitStatus, Vec<Value>, String) {
        self.close_stdin();
        let status = self.child.wait().unwrap();
        let rest = self
            .lines
            .iter()
            .map(|line| {
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON on stdout: {line}: {e}"))
            })
            .collect();
        (status, rest, self.stderr.join().unwrap())
    }
}

pub fn request(id: &str, body: Value) -> Value {
    json!({"type": "control_request", "request_id": id, "request": body})
}
