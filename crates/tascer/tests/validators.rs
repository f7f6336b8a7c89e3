//! The validators (`plan-validate`, `style-drift`, `claude-md-validate`)
//! through the real loop: the mock model plays the agent and the
//! reviewers; each refusal reaches the model, each verdict lands in the
//! ledger, which verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use serde_json::json;
use tascer::{Client, Message};
use tascer_testkit::{MockServer, REVIEWER_MARK, Route, Scenario, Turn, reviewer_verdict};

const REQUEST: &str = "fix the off-by-one in count() in src/lib.rs";

#[tokio::test(flavor = "multi_thread")]
async fn drifting_edits_plans_and_claude_md_changes_are_refused_and_a_focused_retry_runs() {
    let env = Env::new();
    let ws = env.ws();
    let lib = ws.join("src/lib.rs");
    write_file(&lib, "fn count(n: u32) -> u32 { n - 1 }\n");
    let claude_md = ws.join("CLAUDE.md");
    write_file(&claude_md, "# Rules\n\n- Run `make test`.\n");
    let claude_dir = env.root.path().join("claude");
    let plan = claude_dir.join("plans/fix-count.md");
    std::fs::create_dir_all(plan.parent().unwrap()).unwrap();

    let scenario = Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": lib})))
        // Reformats and renames besides the fix.
        .turn(Turn::tool(
            "Edit",
            json!({"file_path": lib, "old_string": "fn count(n: u32) -> u32 { n - 1 }",
                   "new_string": "fn count(total: u32) -> u32 {\n    total + 1\n}"}),
        ))
        // The retry: only the fix.
        .turn(Turn::tool(
            "Edit",
            json!({"file_path": lib, "old_string": "n - 1", "new_string": "n + 1"}),
        ))
        .turn(Turn::tool(
            "Write",
            json!({"file_path": plan, "content": "# Plan\n1. Rewrite lib.rs as an async service\n"}),
        ))
        .turn(Turn::tool(
            "Edit",
            json!({"file_path": claude_md, "old_string": "- Run `make test`.\n",
                   "new_string": "- Run `make test`.\n- Never run the tests, they are slow.\n"}),
        ))
        .turn(Turn::text("done"))
        .route(Route::reviewer(
            "style-drift",
            "total + 1",
            reviewer_verdict("drift", "it re-indents count() and renames n to total"),
        ))
        .route(Route::reviewer(
            "style-drift",
            "n + 1",
            reviewer_verdict("focused", "only the off-by-one fix"),
        ))
        .route(Route::reviewer(
            "plan-validate",
            "async service",
            reviewer_verdict("drift", "it rewrites lib.rs as a service; the user asked for one fix"),
        ))
        .route(Route::reviewer(
            "claude-md-validate",
            "Never run the tests",
            reviewer_verdict("violates", "it contradicts the rule to run make test"),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let safety =
        json!({"reviewers": {"planValidate": {}, "styleDrift": {}, "claudeMdValidate": {}}});
    let options = anthropic_options(&server, &env)
        .claude_config_dir(&claude_dir)
        .settings(json!({ "safety": safety }).to_string());
    let mut client = Client::connect(options).await.unwrap();
    client.query(REQUEST).await.unwrap();
    let messages: Vec<Message> = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        client.receive_response().collect::<Vec<_>>(),
    )
    .await
    .expect("the turn ends");

    let results = tool_results(&messages);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results[0].2, "the read runs: {:?}", results[0]);
    let refused = |i: usize, reviewer: &str, advice: &str| {
        let (_, text, is_error) = &results[i];
        assert!(is_error, "{reviewer}: {text}");
        assert!(
            text.contains(&format!("denied by the {reviewer} reviewer: ")),
            "{text}"
        );
        assert!(text.contains(advice), "{text}");
    };
    refused(
        1,
        "style-drift",
        "Redo the edit without the unrequested cosmetic changes",
    );
    assert!(!results[2].2, "the focused edit runs: {:?}", results[2]);
    refused(3, "plan-validate", "Revise the plan");
    refused(
        4,
        "claude-md-validate",
        "does not follow the file's own conventions",
    );
    assert_eq!(
        std::fs::read_to_string(&lib).unwrap(),
        "fn count(n: u32) -> u32 { n + 1 }\n"
    );
    assert!(!plan.exists(), "the drifting plan was not written");
    assert_eq!(
        std::fs::read_to_string(&claude_md).unwrap(),
        "# Rules\n\n- Run `make test`.\n"
    );

    // The refusals reached the model: the agent's next requests carry them.
    let requests = server.requests();
    let agent: Vec<String> = requests
        .iter()
        .filter(|r| !text_of(&r.body["system"]).contains(REVIEWER_MARK))
        .map(|r| r.body["messages"].to_string())
        .collect();
    let last = agent.last().unwrap();
    for said in [
        "it re-indents count() and renames n to total",
        "the user asked for one fix",
        "it contradicts the rule to run make test",
    ] {
        assert!(last.contains(said), "{said} not in {last}");
    }
    // One question per file change; the CLAUDE.md reviewer saw the file.
    for (name, n) in [
        ("style-drift", 2),
        ("plan-validate", 1),
        ("claude-md-validate", 1),
    ] {
        assert_eq!(
            tascer_testkit::reviewer_requests(&requests, name),
            n,
            "{name}"
        );
    }
    let md_question = requests
        .iter()
        .find(|r| text_of(&r.body["system"]).contains("Tascer reviewer: claude-md-validate\n"))
        .unwrap();
    let question = text_of(&md_question.body["messages"][0]["content"]);
    assert!(
        question.contains("# Rules\n\n- Run `make test`."),
        "{question}"
    );
    assert!(question.contains(REQUEST), "{question}");

    // Every verdict is in the ledger, tied to its call, which names the
    // reviewer that decided; the ledger verifies.
    let report = client.validation_report().await.unwrap();
    let reviews: Vec<(&str, &str, &str)> = report
        .reviews
        .iter()
        .map(|r| {
            (
                r.verdict.reviewer.as_str(),
                r.verdict.verdict.as_str(),
                r.verdict.outcome.as_str(),
            )
        })
        .collect();
    assert_eq!(
        reviews,
        [
            ("style-drift", "drift", "decided"),
            ("style-drift", "focused", "decided"),
            ("plan-validate", "drift", "decided"),
            ("claude-md-validate", "violates", "decided"),
        ]
    );
    for r in report
        .reviews
        .iter()
        .filter(|r| r.verdict.verdict != "focused")
    {
        let tool = report
            .tools
            .iter()
            .find(|t| Some(&t.record.tool_use_id) == r.verdict.tool_use_id.as_ref())
            .expect("each verdict names its call");
        assert_eq!(tool.record.status.as_str(), "blocked");
        assert_eq!(tool.record.permission["decided_by"]["type"], "reviewer");
        assert_eq!(
            tool.record.permission["decided_by"]["name"],
            r.verdict.reviewer.as_str()
        );
    }
    let verified = client.verify_proofs().await.unwrap();
    assert!(verified.ok, "{verified:?}");
    assert!(verified.summary_mismatches.is_empty(), "{verified:?}");
    client.disconnect().await;
}
