//! The file-access policy applies to every file a search opens, through
//! the real loop: Grep over the workspace and Glob results withhold a
//! `.env` and a hard link to it, and say how many files were withheld,
//! in `bypassPermissions` mode too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::test(flavor = "multi_thread")]
async fn searches_withhold_protected_files_in_bypass_mode() {
    let env = Env::new();
    let ws = env.ws();
    std::fs::write(ws.join(".env"), "TOKEN=hunter2\n").unwrap();
    std::fs::write(ws.join(".env.example"), "TOKEN=changeme\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "TOKEN is documented here\n").unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::hard_link(ws.join(".env"), ws.join("docs/copy.txt")).unwrap();
    let server = MockServer::start(
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool(
                        "Grep",
                        json!({"pattern": "TOKEN", "output_mode": "content"}),
                    )
                    .with_tool("Grep", json!({"pattern": "TOKEN", "path": "docs"}))
                    .with_tool("Glob", json!({"pattern": "**/*"}))
                    .with_tool("Read", json!({"file_path": "docs/copy.txt"})),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let messages = collect("go", anthropic_options(&server, &env)).await;
    let results = tool_results(&messages);
    let (grep_all, grep_docs, glob, read) = (&results[0], &results[1], &results[2], &results[3]);
    assert!(!grep_all.2, "{grep_all:?}");
    assert!(grep_all.1.contains("documented here"), "{}", grep_all.1);
    assert!(grep_all.1.contains("changeme"), "templates are not secrets");
    assert!(!grep_all.1.contains("hunter2"), "{}", grep_all.1);
    assert!(grep_all.1.contains("2 files withheld"), "{}", grep_all.1);
    assert!(!grep_docs.1.contains("hunter2"), "{}", grep_docs.1);
    assert!(grep_docs.1.contains("1 file withheld"), "{}", grep_docs.1);
    assert!(
        !glob.1.contains(".env\n") && !glob.1.ends_with(".env"),
        "{}",
        glob.1
    );
    assert!(!glob.1.contains("copy.txt"), "{}", glob.1);
    assert!(glob.1.contains("notes.txt"), "{}", glob.1);
    assert!(glob.1.contains("withheld"), "{}", glob.1);
    assert!(read.2, "reading the hard link is refused: {read:?}");
    assert!(read.1.contains("hard link"), "{}", read.1);
    assert!(!read.1.contains("hunter2"));
}
