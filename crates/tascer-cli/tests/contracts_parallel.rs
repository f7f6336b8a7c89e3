//! `tascer contracts run --parallel 3` in a real git repository: each
//! contract runs in its own worktree on `contracts/<name>`, Tascer commits
//! its changes there with session and ledger-head trailers, and
//! `tascer contracts merge` merges the branches back, reporting (and
//! aborting) a conflict instead of forcing it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args).unwrap_or_else(|e| panic!("git {args:?}: {e}"))
}

fn contract(title: &str, file: &str) -> String {
    format!(
        "# Contract: {title}\n\n## Status\npending\n\n## Task\nWrite {file}.\n\n## Constraints\n- Files: {file}\n"
    )
}

fn writes(title: &str, file: &str, content: &str) -> (String, Vec<Turn>) {
    (
        format!("Contract: {title}"),
        vec![
            Turn::tool("Write", json!({"file_path": file, "content": content}))
                .with_latency_ms(300),
            Turn::text(format!("Wrote {file}.")),
        ],
    )
}

fn result_field(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("- {label}:")))
        .unwrap_or_else(|| panic!("no `- {label}:` in:\n{text}"))
        .trim()
        .to_string()
}

#[test]
fn parallel_contracts_run_in_worktrees_and_merge_back() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    git(&ws, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(ws.join("README.md"), "base\n").unwrap();
    git(&ws, &["add", "README.md"]);
    git(&ws, &["commit", "--quiet", "-m", "base"]);

    let specs = [
        ("a", "Alpha", "a.txt", "alpha\n"),
        ("b", "Bravo", "b.txt", "bravo\n"),
        ("c", "Charlie", "shared.txt", "from charlie\n"),
        ("d", "Delta", "shared.txt", "from delta\n"),
    ];
    let mut scenario = Scenario::new();
    for (name, title, file, content) in specs {
        std::fs::write(
            ws.join(format!("contracts/{name}.md")),
            contract(title, file),
        )
        .unwrap();
        let (when, turns) = writes(title, file, content);
        scenario = scenario.conversation(when, turns);
    }
    let server = MockServer::start_blocking(scenario).unwrap();

    let out = tascer(&home, &ws)
        .env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .args(["contracts", "run", "--parallel", "3"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 completed, 0 failed"), "{stdout}");
    // Each contractor is told that Tascer commits its branch.
    for r in server.requests() {
        let system = r.body["system"].to_string();
        assert!(
            system.contains("Tascer commits your changes on the contract's branch")
                && !system.contains("nothing is committed for you"),
            "{system}"
        );
    }

    // Nothing was written in the main checkout; each branch has one commit.
    assert!(!ws.join("a.txt").exists() && !ws.join("shared.txt").exists());
    assert_eq!(
        git(&ws, &["worktree", "list"]).lines().count(),
        1,
        "worktrees removed"
    );
    for (name, _, file, content) in specs {
        let done =
            std::fs::read_to_string(ws.join(format!("contracts_completed/{name}.md"))).unwrap();
        let session = result_field(&done, "Session").trim_matches('`').to_string();
        let head = result_field(&done, "Ledger head");
        let head = head.split('`').nth(1).unwrap();
        let branch = format!("contracts/{name}");
        assert!(
            result_field(&done, "Branch").starts_with(&format!("`{branch}` at `")),
            "{done}"
        );
        let message = git(&ws, &["log", "-1", "--format=%B", &branch]);
        assert!(
            message.contains(&format!("Tascer-Session: {session}")),
            "{message}"
        );
        assert!(
            message.contains(&format!("Tascer-Ledger-Head: {head}")),
            "{message}"
        );
        assert_eq!(
            git(&ws, &["rev-list", "--count", &format!("main..{branch}")]),
            "1"
        );
        assert_eq!(
            git(&ws, &["show", &format!("{branch}:{file}")]),
            content.trim_end()
        );
    }

    // Merge: a, b and c merge; d conflicts with c on shared.txt and is aborted.
    let merge = |ws: &Path| {
        tascer(&home, ws)
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .args(["contracts", "merge"])
            .output()
            .unwrap()
    };
    let out = merge(&ws);
    let (stdout, stderr) = texts(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a conflict → exit 1\n{stdout}\n{stderr}"
    );
    for b in ["a", "b", "c"] {
        assert!(
            stdout.contains(&format!("contracts/{b}  merged")),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("contracts/d  CONFLICT in shared.txt"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("b.txt")).unwrap(),
        "bravo\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("shared.txt")).unwrap(),
        "from charlie\n"
    );
    assert!(
        !ws.join(".git/MERGE_HEAD").exists(),
        "the conflicting merge was aborted"
    );
    let status = git(&ws, &["status", "--porcelain"]);
    assert!(
        !status
            .lines()
            .any(|l| l.starts_with("UU") || l.starts_with("AA")),
        "{status}"
    );

    // Merging again: the merged ones are up to date, d still conflicts.
    let out = merge(&ws);
    let (stdout, _) = texts(&out);
    assert!(stdout.contains("contracts/a  already merged"), "{stdout}");
    assert!(stdout.contains("contracts/d  CONFLICT"), "{stdout}");

    let out = tascer(&home, &ws)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
}
