//! The ledger in the loop: every session is recorded, signed and verifiable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use serde_json::json;
use tascer::Client;
use tascer::guard::hooks::{HookEvent, HookInput, HookOutput, HookRegistry};
use tascer::ledger::{BreakReason, EntryKind, ToolStatus};
use tascer_testkit::{MockServer, Scenario, Turn};

fn scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_tool("Write", json!({"file_path": "out.txt", "content": "hello"}))
                .with_tool("Bash", json!({"command": "exit 3"}))
                .with_tool("Bash", json!({"command": "echo blocked-by-hook"})),
        )
        .turn(Turn::text("done"))
        .turn(Turn::text("again"))
}

fn deny_echo() -> HookRegistry {
    HookRegistry::builder()
        .on(
            HookEvent::PreToolUse,
            "Bash",
            |input: HookInput| async move {
                let v = serde_json::to_value(&input).unwrap();
                Ok(
                    if v["tool_input"]["command"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("echo")
                    {
                        HookOutput::deny("no echo here")
                    } else {
                        HookOutput::default()
                    },
                )
            },
        )
        .build()
        .unwrap()
}

async fn run(client: &mut Client, prompt: &str) {
    client.query(prompt).await.unwrap();
    let _ = client.receive_response().collect::<Vec<_>>().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_session_verifies_and_reports_each_tool_call() {
    let env = Env::new();
    tascer::ledger::generate_keypair(env.home(), false).unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env).hooks(deny_echo()))
        .await
        .unwrap();
    run(&mut client, "go").await;

    let report = client.verify_proofs().await.unwrap();
    assert!(report.ok, "{report:?}");
    assert!(report.signed, "{report:?}");
    assert!(report.entries_checked >= 10, "{report:?}");

    let data = client.validation_report().await.unwrap();
    let status = |tool: &str, i: usize| {
        data.tools
            .iter()
            .filter(|t| t.record.tool == tool)
            .nth(i)
            .unwrap()
            .record
            .status
    };
    assert_eq!(status("Write", 0), ToolStatus::Validated);
    assert_eq!(status("Bash", 0), ToolStatus::Failed);
    assert_eq!(status("Bash", 1), ToolStatus::Blocked);
    assert!(
        data.tools
            .iter()
            .all(|t| t.proof_valid && t.record.proof_hash.is_some())
    );
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tampering_with_the_stored_ledger_is_detected_and_resume_continues_the_chain() {
    let env = Env::new();
    tascer::ledger::generate_keypair(env.home(), false).unwrap();
    let server = MockServer::start(scenario()).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env))
        .await
        .unwrap();
    run(&mut client, "go").await;
    let id = client.session_id().to_string();
    let before = client.verify_proofs().await.unwrap();
    assert!(before.ok);
    client.disconnect().await;

    // Resume in a new client: the same chain goes on and still verifies.
    let mut resumed = Client::connect(anthropic_options(&server, &env).resume(&id))
        .await
        .unwrap();
    run(&mut resumed, "more").await;
    let after = resumed.verify_proofs().await.unwrap();
    assert!(after.ok, "{after:?}");
    assert!(after.entries_checked > before.entries_checked);
    let starts = tascer::ledger::LedgerStore::open(env.home().join("tascer.db"))
        .unwrap()
        .entries(&id)
        .unwrap()
        .iter()
        .filter(|e| e.kind == EntryKind::SessionStart)
        .count();
    assert_eq!(starts, 1, "resume does not start a second chain");

    // Edit one byte of one entry on disk.
    let conn = rusqlite::Connection::open(env.home().join("tascer.db")).unwrap();
    conn.execute(
        "UPDATE ledger_entries SET payload = replace(payload, 'out.txt', 'oUt.txt')
         WHERE session_id = ?1 AND kind = 'tool_record'",
        [&id],
    )
    .unwrap();
    let broken = resumed.verify_proofs().await.unwrap();
    assert!(!broken.ok);
    let first = broken.first_broken.unwrap();
    assert!(
        matches!(first.reason, BreakReason::EditedEntry),
        "{first:?}"
    );
    resumed.disconnect().await;
}
