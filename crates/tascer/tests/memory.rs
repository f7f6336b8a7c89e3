//! Project memory: CLAUDE.md / AGENTS.md files from real directories reach
//! the system prompt the mock model receives, are listed in `system/init`
//! and recorded by hash in the ledger's session start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use tascer::Options;
use tascer::guard::settings::SettingsSource;
use tascer::ledger::EntryKind;
use tascer_testkit::{MockServer, Scenario, Turn};

/// A repository root (`root/repo`, with `.git`) holding the workspace
/// (`root/repo/ws`), and a user Claude directory (`root/user`).
struct Tree {
    env: Env,
}

impl Tree {
    fn new() -> Self {
        let env = Env::new();
        let repo = env.root.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("ws/.claude")).unwrap();
        std::fs::create_dir_all(env.root.path().join("user")).unwrap();
        Tree { env }
    }
    fn repo(&self) -> std::path::PathBuf {
        self.env.root.path().join("repo").canonicalize().unwrap()
    }
    fn ws(&self) -> std::path::PathBuf {
        self.repo().join("ws")
    }
    fn user(&self) -> std::path::PathBuf {
        self.env.root.path().join("user")
    }
    fn write(&self, path: std::path::PathBuf, text: &str) {
        write_file(path, text);
    }
    fn options(&self, server: &MockServer, sources: &[SettingsSource]) -> Options {
        anthropic_options(server, &self.env)
            .cwd(self.ws())
            .claude_config_dir(self.user())
            .setting_sources(sources.iter().copied())
    }
}

fn system_text(server: &MockServer) -> String {
    text_of(&server.requests()[0].body["system"])
}

const ALL: [SettingsSource; 3] = [
    SettingsSource::User,
    SettingsSource::Project,
    SettingsSource::Local,
];

#[tokio::test(flavor = "multi_thread")]
async fn memory_files_reach_the_prompt_in_order_and_are_recorded_by_hash() {
    let tree = Tree::new();
    tree.write(tree.user().join("CLAUDE.md"), "USER-MEMORY");
    tree.write(tree.repo().join("CLAUDE.md"), "REPO-MEMORY");
    tree.write(tree.ws().join("CLAUDE.md"), "WS-MEMORY\nsee @docs/extra.md");
    tree.write(tree.ws().join("docs/extra.md"), "IMPORTED-MEMORY");
    tree.write(tree.ws().join(".claude/CLAUDE.md"), "DOT-CLAUDE-MEMORY");
    tree.write(tree.ws().join("AGENTS.md"), "AGENTS-MEMORY");
    tree.write(tree.ws().join("CLAUDE.local.md"), "LOCAL-MEMORY");
    // Above the repository root: not read.
    tree.write(tree.env.root.path().join("CLAUDE.md"), "OUTSIDE-MEMORY");

    let server = MockServer::start(Scenario::new().turn(Turn::text("ok")))
        .await
        .unwrap();
    let messages = collect("hi", tree.options(&server, &ALL)).await;
    assert!(!result_of(&messages).is_error);

    let system = system_text(&server);
    let order = [
        "USER-MEMORY",
        "REPO-MEMORY",
        "WS-MEMORY",
        "IMPORTED-MEMORY",
        "DOT-CLAUDE-MEMORY",
        "AGENTS-MEMORY",
        "LOCAL-MEMORY",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|m| {
            system
                .find(m)
                .unwrap_or_else(|| panic!("{m} missing:\n{system}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "wrong order: {positions:?}\n{system}"
    );
    assert!(!system.contains("OUTSIDE-MEMORY"), "{system}");
    assert!(system.contains("project instructions, checked into the codebase"));

    let init = init_of(&messages);
    let listed = init["memory_files"].as_array().unwrap();
    assert_eq!(listed.len(), order.len(), "{listed:?}");
    let ws_claude = tree.ws().join("CLAUDE.md");
    let entry = listed
        .iter()
        .find(|f| f["path"] == ws_claude.display().to_string())
        .unwrap();
    let digest = format!(
        "sha256:{}",
        tascer::ledger::sha256_hex(&std::fs::read(&ws_claude).unwrap())
    );
    assert_eq!(entry["sha256"], digest);
    assert_eq!(entry["type"], "Project");
    let local = listed
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("CLAUDE.local.md"))
        .unwrap();
    assert_eq!(local["type"], "Local");
    let imported = listed
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("extra.md"))
        .unwrap();
    assert_eq!(imported["imported_from"], ws_claude.display().to_string());

    // The ledger's session start names the same files and digests.
    let id = result_of(&messages).session_id.clone();
    let start = tascer::ledger::LedgerStore::open(tree.env.home().join("tascer.db"))
        .unwrap()
        .entries(&id)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == EntryKind::SessionStart)
        .unwrap();
    let recorded = start.payload["context"]["memory_files"].as_array().unwrap();
    assert_eq!(recorded, listed);
}

#[tokio::test(flavor = "multi_thread")]
async fn setting_sources_decide_which_memory_is_read() {
    let tree = Tree::new();
    tree.write(tree.user().join("CLAUDE.md"), "USER-MEMORY");
    tree.write(tree.ws().join("CLAUDE.md"), "PROJECT-MEMORY");
    tree.write(tree.ws().join("CLAUDE.local.md"), "LOCAL-MEMORY");
    // Every session's first request gets the scenario's first turn.
    let server = MockServer::start(Scenario::new().turn(Turn::text("ok")))
        .await
        .unwrap();

    for (sources, present, absent) in [
        (
            vec![],
            vec![],
            vec!["USER-MEMORY", "PROJECT-MEMORY", "LOCAL-MEMORY"],
        ),
        (
            vec![SettingsSource::Project],
            vec!["PROJECT-MEMORY"],
            vec!["USER-MEMORY", "LOCAL-MEMORY"],
        ),
        (
            vec![SettingsSource::User, SettingsSource::Local],
            vec!["USER-MEMORY", "LOCAL-MEMORY"],
            vec!["PROJECT-MEMORY"],
        ),
    ] {
        server.clear_requests();
        let messages = collect("hi", tree.options(&server, &sources)).await;
        assert!(!result_of(&messages).is_error);
        let system = system_text(&server);
        for m in &present {
            assert!(system.contains(m), "{sources:?}: {m} missing");
        }
        for m in &absent {
            assert!(!system.contains(m), "{sources:?}: {m} present");
        }
        let listed = init_of(&messages)["memory_files"].as_array().unwrap().len();
        assert_eq!(listed, present.len());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn imports_stop_at_cycles_depth_and_code() {
    let tree = Tree::new();
    // A cycle: CLAUDE.md → a.md → b.md → a.md; code spans and blocks are
    // not imports; a chain deeper than five hops stops.
    tree.write(
        tree.ws().join("CLAUDE.md"),
        "root @a.md\n`@code.md`\n```\n@block.md\n```\n@d1.md",
    );
    tree.write(tree.ws().join("a.md"), "A-FILE @b.md");
    tree.write(tree.ws().join("b.md"), "B-FILE @a.md @CLAUDE.md");
    tree.write(tree.ws().join("code.md"), "CODE-FILE");
    tree.write(tree.ws().join("block.md"), "BLOCK-FILE");
    for i in 1..=7 {
        tree.write(
            tree.ws().join(format!("d{i}.md")),
            &format!("DEPTH-{i} @d{}.md", i + 1),
        );
    }
    let server = MockServer::start(Scenario::new().turn(Turn::text("ok")))
        .await
        .unwrap();
    let messages = collect("hi", tree.options(&server, &[SettingsSource::Project])).await;
    assert!(!result_of(&messages).is_error);
    let system = system_text(&server);
    assert_eq!(system.matches("A-FILE").count(), 1, "{system}");
    assert_eq!(system.matches("B-FILE").count(), 1, "{system}");
    assert!(!system.contains("CODE-FILE"));
    assert!(!system.contains("BLOCK-FILE"));
    for i in 1..=5 {
        assert!(system.contains(&format!("DEPTH-{i} ")), "depth {i} missing");
    }
    assert!(!system.contains("DEPTH-6"), "more than five hops followed");
}
