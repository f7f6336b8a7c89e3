//! The `tascer-mock` binary.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_tascer-mock");

#[tokio::test]
async fn serves_a_scenario_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, r#"{"turns": [{"text": "from the binary"}]}"#).unwrap();
    let mut child = Command::new(BIN)
        .args(["--scenario", path.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("tascer-mock listening on ")
        .unwrap_or_else(|| panic!("unexpected line {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let resp = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .json(&json!({"model": "m", "max_tokens": 10,
                      "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v["content"][0]["text"], "from the binary");

    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn bad_scenario_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, r#"{"turns": [{"nope": 1}]}"#).unwrap();
    let out = Command::new(BIN)
        .args(["--scenario", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn help_and_bad_args() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--scenario"));

    let out = Command::new(BIN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
