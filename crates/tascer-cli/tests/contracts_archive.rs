//! Automatic archival of contract sessions (`archive.auto` with a
//! directory as `archive.to`): `tascer contracts run` (one after another
//! and `--parallel`) and the `ExecuteContracts` tool archive each
//! contract's session as `tascer run` does, and the archive's URL goes into
//! the contract's Result; the archive verifies with only the public key
//! and holds what the agent wrote (for `--parallel`: the worktree's files).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

fn contract(title: &str, file: &str) -> String {
    format!(
        "# Contract: {title}\n\n## Status\npending\n\n## Task\nWrite {file}.\n\n## Constraints\n- Files: {file}\n"
    )
}

fn writes(scenario: Scenario, title: &str, file: &str) -> Scenario {
    scenario.conversation(
        format!("Contract: {title}"),
        vec![
            Turn::tool(
                "Write",
                json!({"file_path": file, "content": format!("{title}\n")}),
            ),
            Turn::text(format!("Wrote {file}.")),
        ],
    )
}

fn git(dir: &Path, args: &[&str]) {
    git_in(dir, args).unwrap_or_else(|e| panic!("git {args:?}: {e}"));
}

struct Fixture {
    root: tempfile::TempDir,
}

impl Fixture {
    /// A home with a key and `archive.auto` to `<root>/archives`, and a
    /// workspace that is a git repository with one commit.
    fn new() -> Self {
        let f = Fixture {
            root: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(f.home()).unwrap();
        std::fs::create_dir_all(f.ws().join("contracts")).unwrap();
        let out = tascer(&f.home(), &f.ws())
            .args(["keys", "generate"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
        std::fs::write(
            f.home().join("settings.json"),
            json!({"archive": {"to": f.archives().display().to_string(), "auto": true}})
                .to_string(),
        )
        .unwrap();
        git(&f.ws(), &["init", "--quiet", "--initial-branch=main"]);
        std::fs::write(f.ws().join("README.md"), "base\n").unwrap();
        git(&f.ws(), &["add", "README.md"]);
        git(&f.ws(), &["commit", "--quiet", "-m", "base"]);
        f
    }
    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    fn ws(&self) -> PathBuf {
        self.root.path().join("ws")
    }
    fn archives(&self) -> PathBuf {
        self.root.path().join("archives")
    }

    /// The `- Archive:` URL of a completed contract; checks that it
    /// verifies from the archive alone (another home, the public key
    /// pinned) and that its working directory holds `file` as written.
    fn check_archive(&self, name: &str, file: &str, title: &str) -> String {
        let done = std::fs::read_to_string(
            self.ws()
                .join("contracts_completed")
                .join(format!("{name}.md")),
        )
        .unwrap();
        assert!(done.contains("## Status\ncompleted\n"), "{done}");
        let url = done
            .lines()
            .find_map(|l| l.strip_prefix("- Archive: "))
            .unwrap_or_else(|| panic!("no archive in the Result:\n{done}"))
            .trim()
            .to_string();
        assert!(url.starts_with("file://"), "{url}");
        let session = done
            .lines()
            .find_map(|l| l.strip_prefix("- Session: "))
            .unwrap()
            .trim_matches('`')
            .to_string();
        assert!(url.contains(&session), "{url} names {session}");
        let auditor = self.root.path().join(format!("auditor-{name}"));
        let restored = self.root.path().join(format!("restored-{name}"));
        let key = self.home().join("keys/tascer-ed25519.pub.pem");
        let out = tascer(&auditor, &self.ws())
            .args(["archive", "verify", &url, "--key"])
            .arg(&key)
            .arg("--restore")
            .arg(&restored)
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("head signed"), "{stdout}");
        assert_eq!(
            std::fs::read_to_string(restored.join("workdir").join(file)).unwrap(),
            format!("{title}\n")
        );
        url
    }
}

#[test]
fn contracts_run_archives_each_session_and_records_the_url() {
    let f = Fixture::new();
    let mut scenario = Scenario::new();
    for (name, title, file) in [
        ("a", "Alpha", "a.txt"),
        ("b", "Bravo", "b.txt"),
        ("c", "Charlie", "c.txt"),
    ] {
        std::fs::write(
            f.ws().join(format!("contracts/{name}.md")),
            contract(title, file),
        )
        .unwrap();
        scenario = writes(scenario, title, file);
    }
    let server = MockServer::start_blocking(scenario).unwrap();
    let run = |extra: &[&str]| {
        tascer(&f.home(), &f.ws())
            .env("ANTHROPIC_API_KEY", "test")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .args(["contracts", "run"])
            .args(extra)
            .output()
            .unwrap()
    };

    // One after another: only `a` is pending at first.
    std::fs::rename(f.ws().join("contracts/b.md"), f.root.path().join("b.md")).unwrap();
    std::fs::rename(f.ws().join("contracts/c.md"), f.root.path().join("c.md")).unwrap();
    let out = run(&[]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 completed, 0 failed"), "{stdout}");
    f.check_archive("a", "a.txt", "Alpha");

    // In parallel worktrees: the archive holds the worktree's files.
    std::fs::rename(f.root.path().join("b.md"), f.ws().join("contracts/b.md")).unwrap();
    std::fs::rename(f.root.path().join("c.md"), f.ws().join("contracts/c.md")).unwrap();
    let out = run(&["--parallel", "2"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 completed, 0 failed"), "{stdout}");
    let b = f.check_archive("b", "b.txt", "Bravo");
    let c = f.check_archive("c", "c.txt", "Charlie");
    assert_ne!(b, c);
    assert!(
        !f.ws().join("b.txt").exists(),
        "the main checkout is untouched"
    );
}

#[test]
fn execute_contracts_archives_each_contract_session() {
    let f = Fixture::new();
    std::fs::write(f.ws().join("contracts/m.md"), contract("Mike", "m.txt")).unwrap();
    let scenario = writes(
        Scenario::new()
            .turn(Turn::tool("ExecuteContracts", json!({})))
            .turn(Turn::text("Reviewed.")),
        "Mike",
        "m.txt",
    );
    let server = MockServer::start_blocking(scenario).unwrap();
    let out = run_cmd(
        &f.home(),
        &f.ws(),
        &server.url(),
        "Run the contracts.",
        &["--execute-contracts", "contracts"],
    )
    .output()
    .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    f.check_archive("m", "m.txt", "Mike");
    // The manager's own session is archived after the run too.
    assert!(stderr.contains("archived session "), "{stderr}");
}
