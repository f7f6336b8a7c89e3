//! The LLM reviewers through the real loop: the mock model plays both the
//! agent (its turns) and the reviewers (routes picked by the reviewer's
//! system prompt and the call in the question). Each verdict lands in the
//! ledger, which verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use tascer::guard::permissions::PermissionMode;
use tascer::{Client, Message, Options};
use tascer_testkit::{MockServer, Route, Scenario, Turn, reviewer_verdict};

/// Options against the mock in `default` mode (calls no rule allows are
/// asked about, so the reviewers answer) with these `safety` settings.
fn options(server: &MockServer, env: &Env, safety: Value) -> Options {
    anthropic_options(server, env)
        .permission_mode(PermissionMode::Default)
        .settings(json!({ "safety": safety }).to_string())
}

async fn run(client: &mut Client, prompt: &str) -> Vec<Message> {
    client.query(prompt).await.unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        client.receive_response().collect::<Vec<_>>(),
    )
    .await
    .expect("the turn ends")
}

fn bash(command: &str) -> Turn {
    Turn::tool("Bash", json!({ "command": command }))
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_deny_appeal_allow_and_deny_are_decided_recorded_and_verified() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(bash("echo reviewed-and-approved"))
        .turn(bash("rm -rf build-output"))
        .turn(bash("git push --force origin main"))
        .turn(Turn::text("done"))
        // The first matching route answers, and every reviewer's question
        // holds the recent transcript (earlier calls too): the later
        // call's routes first.
        .route(Route::reviewer(
            "tool-approve",
            "git push",
            reviewer_verdict("deny", "force-pushes main"),
        ))
        .route(Route::reviewer(
            "tool-appeal",
            "git push",
            reviewer_verdict("deny", "nobody asked to push"),
        ))
        .route(Route::reviewer(
            "tool-approve",
            "rm -rf build",
            reviewer_verdict("deny", "deletes files"),
        ))
        .route(Route::reviewer(
            "tool-appeal",
            "rm -rf build",
            reviewer_verdict("allow", "the user asked to clean the build"),
        ))
        .route(Route::reviewer(
            "tool-approve",
            "echo reviewed",
            reviewer_verdict("allow", "harmless echo"),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let safety = json!({"reviewers": {"toolApprove": {}, "toolAppeal": {"contextMessages": 6}}});
    let mut client = Client::connect(options(&server, &env, safety))
        .await
        .unwrap();
    let messages = run(&mut client, "clean the build output").await;

    let results = tool_results(&messages);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].2, "approved: {:?}", results[0]);
    assert!(results[0].1.contains("reviewed-and-approved"));
    assert!(!results[1].2, "allowed on appeal: {:?}", results[1]);
    assert!(results[2].2, "denied on appeal: {:?}", results[2]);
    assert!(
        results[2]
            .1
            .contains("denied by the tool-appeal reviewer: nobody asked to push"),
        "{}",
        results[2].1
    );
    let result = result_of(&messages);
    assert!(!result.is_error);
    assert_eq!(result.permission_denials.len(), 1);
    assert!(
        result.model_usage.contains_key("claude-haiku-4-5")
            && result.model_usage.contains_key("claude-sonnet-4-5"),
        "reviewer calls use the session's provider, their model class on Anthropic, and \
         count in its usage: {:?}",
        result.model_usage.keys().collect::<Vec<_>>()
    );

    // The appeal saw the conversation: the user's request is in it.
    let appeal = server
        .requests()
        .into_iter()
        .find(|r| text_of(&r.body["system"]).contains("Tascer reviewer: tool-appeal\n"))
        .unwrap();
    let question = text_of(&appeal.body["messages"][0]["content"]);
    assert!(question.contains("clean the build output"), "{question}");
    assert!(question.contains("deletes files"), "{question}");

    // Every verdict is in the ledger, tied to its call; it verifies.
    let report = client.validation_report().await.unwrap();
    let reviews: Vec<(String, String)> = report
        .reviews
        .iter()
        .map(|r| (r.verdict.reviewer.clone(), r.verdict.verdict.clone()))
        .collect();
    let expected = [
        ("tool-approve", "allow"),
        ("tool-approve", "deny"),
        ("tool-appeal", "allow"),
        ("tool-approve", "deny"),
        ("tool-appeal", "deny"),
    ];
    assert_eq!(
        reviews,
        expected
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
    for r in &report.reviews {
        let class = match r.verdict.reviewer.as_str() {
            "tool-approve" => "claude-haiku-4-5",
            _ => "claude-sonnet-4-5",
        };
        assert_eq!(r.verdict.model, class);
        assert_eq!(r.verdict.outcome, "decided");
        assert!(r.verdict.usage.is_some());
        let tool = report
            .tools
            .iter()
            .find(|t| Some(&t.record.tool_use_id) == r.verdict.tool_use_id.as_ref())
            .expect("each verdict names its call");
        assert_eq!(tool.record.permission["decided_by"]["type"], "reviewer");
    }
    let pushed = report.tools.last().unwrap();
    assert_eq!(pushed.record.status.as_str(), "blocked");
    assert_eq!(
        pushed.record.permission["decided_by"]["name"],
        "tool-appeal"
    );
    let verified = client.verify_proofs().await.unwrap();
    assert!(verified.ok, "{verified:?}");
    assert!(verified.summary_mismatches.is_empty(), "{verified:?}");
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_review_follows_its_fail_mode_and_says_why() {
    let env = Env::new();
    let scenario = Scenario::new()
        .loop_last_turn(false)
        .turn(bash("make slow-review"))
        .turn(bash("make babble"))
        .turn(Turn::text("done"))
        // The second call's question shows the first in its transcript:
        // its route first.
        .route(Route::reviewer(
            "tool-approve",
            "babble",
            Turn::text("Looks fine to me!"),
        ))
        .route(Route::reviewer(
            "tool-approve",
            "slow-review",
            reviewer_verdict("allow", "too late").with_latency_ms(3_000),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    for (mode, runs) in [("closed", false), ("open", true)] {
        let safety = json!({"reviewers": {"toolApprove": {"timeoutMs": 300, "failMode": mode}}});
        let mut client = Client::connect(options(&server, &env, safety))
            .await
            .unwrap();
        let messages = run(&mut client, "build it").await;
        let results = tool_results(&messages);
        assert_eq!(results.len(), 2, "{results:?}");
        for (text, is_error) in results.iter().map(|r| (&r.1, r.2)) {
            if runs {
                // The call ran (make has no such target: a tool error,
                // not a refusal).
                assert!(!text.contains("reviewer failed"), "{mode}: {text}");
            } else {
                assert!(is_error, "{mode}: {text}");
                assert!(
                    text.contains("failMode closed refuses it"),
                    "{mode}: {text}"
                );
            }
        }
        if !runs {
            assert!(
                results[0].1.contains("no verdict within 300 ms"),
                "{}",
                results[0].1
            );
            assert!(
                results[1].1.contains("malformed reviewer answer"),
                "{}",
                results[1].1
            );
        }
        let report = client.validation_report().await.unwrap();
        let outcomes: Vec<&str> = report
            .reviews
            .iter()
            .map(|r| r.verdict.outcome.as_str())
            .collect();
        let expected = if runs { "failed_open" } else { "failed_closed" };
        assert_eq!(outcomes, [expected, expected], "{mode}");
        assert!(report.reviews.iter().all(|r| r.verdict.error.is_some()));
        assert!(client.verify_proofs().await.unwrap().ok);
        client.disconnect().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identical_call_is_answered_from_the_cache_without_a_model_request() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(bash("echo cached-call"))
        .turn(bash("echo cached-call"))
        .turn(Turn::text("done"))
        .route(Route::reviewer(
            "tool-approve",
            "cached-call",
            reviewer_verdict("allow", "harmless"),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(options(
        &server,
        &env,
        json!({"reviewers": {"toolApprove": {}}}),
    ))
    .await
    .unwrap();
    let messages = run(&mut client, "echo twice").await;
    let results = tool_results(&messages);
    assert!(results.iter().all(|r| !r.2), "{results:?}");
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        1
    );
    let report = client.validation_report().await.unwrap();
    let hits: Vec<bool> = report.reviews.iter().map(|r| r.verdict.cache_hit).collect();
    assert_eq!(hits, [false, true]);
    client.disconnect().await;

    // The cache is in the store: another session in the same home gets it.
    server.clear_requests();
    let mut again = Client::connect(options(
        &server,
        &env,
        json!({"reviewers": {"toolApprove": {}}}),
    ))
    .await
    .unwrap();
    run(&mut again, "echo twice").await;
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        0
    );
    again.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn intent_validate_blocks_a_stop_with_a_correction_then_lets_it_go_within_its_limit() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::text("Done, I wrote the summary."))
        .turn(Turn::text("Now it also lists the tests."))
        .turn(Turn::text("Second request done."))
        .route(Route::when_system_contains(
            "Tascer reviewer: intent-validate\n",
            reviewer_verdict("incomplete", "The summary must also list the tests."),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let safety = json!({"reviewers": {"intentValidate": {"maxBlocks": 1}}});
    let mut client = Client::connect(options(&server, &env, safety.clone()))
        .await
        .unwrap();
    let messages = run(&mut client, "summarize the project and list its tests").await;
    let result = result_of(&messages);
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        result.result.as_deref(),
        Some("Now it also lists the tests.")
    );
    assert_eq!(result.num_turns, 2);
    // The correction went back to the model as a user message.
    let correction = messages.iter().find_map(|m| match m {
        Message::User(u) => match &u.message.content {
            tascer::UserContent::Text(t) if t.starts_with("Tascer intent-validate:") => {
                Some(t.clone())
            }
            _ => None,
        },
        _ => None,
    });
    assert!(
        correction
            .unwrap()
            .contains("The summary must also list the tests."),
    );
    let question = server
        .requests()
        .into_iter()
        .find(|r| text_of(&r.body["system"]).contains("intent-validate"))
        .unwrap();
    let text = text_of(&question.body["messages"][0]["content"]);
    assert!(
        text.contains("summarize the project and list its tests"),
        "{text}"
    );
    assert!(text.contains("Done, I wrote the summary."), "{text}");
    // The second stop followed a block (stop_hook_active): not reviewed.
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "intent-validate"),
        1
    );

    // A second prompt: the session's one block is used up, so the stop is
    // not reviewed and the skip is recorded.
    let messages = run(&mut client, "and now the changelog").await;
    assert_eq!(
        result_of(&messages).result.as_deref(),
        Some("Second request done.")
    );
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "intent-validate"),
        1
    );
    let report = client.validation_report().await.unwrap();
    let reviews: Vec<(&str, &str)> = report
        .reviews
        .iter()
        .map(|r| (r.verdict.verdict.as_str(), r.verdict.outcome.as_str()))
        .collect();
    assert_eq!(
        reviews,
        [("incomplete", "decided"), ("complete", "skipped")]
    );
    assert!(
        report
            .reviews
            .iter()
            .all(|r| r.verdict.tool_use_id.is_none())
    );
    let verified = client.verify_proofs().await.unwrap();
    assert!(verified.ok, "{verified:?}");
    assert!(verified.summary_mismatches.is_empty(), "{verified:?}");
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_ignores_a_failure_is_refused_until_the_failure_is_addressed() {
    let env = Env::new();
    write_file(env.ws().join("notes.txt"), "notes\n");
    let scenario = Scenario::new()
        .turn(bash("ls /definitely-missing-dir-for-tascer"))
        .turn(bash("cat notes.txt"))
        .turn(bash(
            "ls -d /definitely-missing-dir-for-tascer || echo investigating",
        ))
        .turn(Turn::text("done"))
        .route(Route::reviewer(
            "error-acknowledge",
            "cat notes.txt",
            reviewer_verdict("unacknowledged", "it reads notes as if the listing worked"),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let options = options(
        &server,
        &env,
        json!({"reviewers": {"errorAcknowledge": {}}}),
    )
    .allowed_tools(["Bash(ls:*)", "Bash(cat:*)", "Bash(echo:*)"]);
    let mut client = Client::connect(options).await.unwrap();
    let messages = run(&mut client, "look around").await;
    let results = tool_results(&messages);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].2, "the listing fails");
    assert!(results[1].2, "refused: {:?}", results[1]);
    assert!(
        results[1].1.contains("Address that failure first"),
        "{}",
        results[1].1
    );
    assert!(
        results[1].1.contains("earlier Bash call failed"),
        "{}",
        results[1].1
    );
    // Refused once: the next call is not held up again.
    assert!(results[2].1.contains("investigating"), "{:?}", results[2]);
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "error-acknowledge"),
        1
    );
    let report = client.validation_report().await.unwrap();
    assert_eq!(report.reviews.len(), 1);
    assert_eq!(report.reviews[0].verdict.verdict, "unacknowledged");
    assert_eq!(
        report.reviews[0].verdict.tool_use_id.as_deref(),
        Some(report.tools[1].record.tool_use_id.as_str())
    );
    assert!(client.verify_proofs().await.unwrap().ok);
    client.disconnect().await;
}

/// The last user message's text of a recorded request.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_approve_sees_claude_md_and_the_request_and_intent_validate_names_its_check() {
    let env = Env::new();
    write_file(
        env.ws().join("CLAUDE.md"),
        "Always run the linter with `echo lint-ok` before you finish.\n",
    );
    let scenario = Scenario::new()
        .turn(bash("echo lint-ok"))
        .turn(Turn::text("Should I run the linter?"))
        .turn(Turn::text("The linter ran; all clean."))
        .route(Route::reviewer(
            "tool-approve",
            "echo lint-ok",
            reviewer_verdict("allow", "CLAUDE.md asks for the linter"),
        ))
        .route(Route::when_system_contains(
            "Tascer reviewer: intent-validate\n",
            reviewer_verdict(
                "incomplete",
                "re-asked: the user already asked for the linter; report its result.",
            ),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let safety = json!({"reviewers": {"toolApprove": {}, "intentValidate": {}}});
    // The project setting source: the session reads the project's CLAUDE.md.
    let options = options(&server, &env, safety)
        .setting_sources([tascer::guard::settings::SettingsSource::Project]);
    let mut client = Client::connect(options).await.unwrap();
    let messages = run(&mut client, "tidy up the code and lint it").await;
    assert_eq!(
        result_of(&messages).result.as_deref(),
        Some("The linter ran; all clean.")
    );

    let requests = server.requests();
    let approve = requests
        .iter()
        .find(|r| text_of(&r.body["system"]).contains("Tascer reviewer: tool-approve\n"))
        .expect("tool-approve was asked");
    let question = last_user_text(&approve.body);
    let claude_md = env.ws().join("CLAUDE.md");
    assert!(
        question.contains(&format!(
            "--- {} ---\nAlways run the linter with `echo lint-ok` before you finish.",
            claude_md.display()
        )),
        "{question}"
    );
    assert!(
        question.contains("The user's latest request: tidy up the code and lint it"),
        "{question}"
    );

    let validate = requests
        .iter()
        .find(|r| text_of(&r.body["system"]).contains("Tascer reviewer: intent-validate\n"))
        .expect("intent-validate was asked");
    let system = text_of(&validate.body["system"]);
    for check in [
        "1. re-asked — ",
        "2. off-topic — ",
        "3. unrequested — ",
        "4. incomplete — ",
    ] {
        assert!(system.contains(check), "{check}: {system}");
    }
    assert!(
        last_user_text(&validate.body).contains("Should I run the linter?"),
        "the final answer is reviewed"
    );
    // The block went back to the agent's model as the next user message.
    let corrected = requests
        .iter()
        .filter(|r| !text_of(&r.body["system"]).contains(tascer_testkit::REVIEWER_MARK))
        .map(|r| last_user_text(&r.body))
        .find(|t| t.starts_with("Tascer intent-validate:"))
        .expect("the correction reached the model");
    assert!(
        corrected.contains(
            "do not ask the user what the conversation already answers. re-asked: the user \
             already asked for the linter"
        ),
        "{corrected}"
    );
    let report = client.validation_report().await.unwrap();
    let reasons: Vec<(&str, &str)> = report
        .reviews
        .iter()
        .map(|r| (r.verdict.reviewer.as_str(), r.verdict.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("tool-approve", "CLAUDE.md asks for the linter"),
            (
                "intent-validate",
                "re-asked: the user already asked for the linter; report its result."
            ),
        ]
    );
    client.disconnect().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_anthropic_without_a_configured_model_each_reviewer_asks_its_class() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(bash("rm -rf build-output"))
        .turn(Turn::text("done"))
        .route(Route::reviewer(
            "tool-approve",
            "rm -rf",
            reviewer_verdict("deny", "deletes files"),
        ))
        .route(Route::reviewer(
            "tool-appeal",
            "rm -rf",
            reviewer_verdict("allow", "the user asked to clean"),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let models = |server: &MockServer, name: &str| -> Vec<String> {
        let mark = format!("{}{name}\n", tascer_testkit::REVIEWER_MARK);
        server
            .requests()
            .iter()
            .filter(|r| text_of(&r.body["system"]).contains(&mark))
            .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    for (reviewers, approve, appeal) in [
        (
            json!({"toolApprove": {"cacheTtlSeconds": 0}, "toolAppeal": {"cacheTtlSeconds": 0}}),
            "claude-haiku-4-5",
            "claude-sonnet-4-5",
        ),
        // A configured model wins over the class; an alias is resolved.
        (
            json!({"model": "mock-reviewer", "toolApprove": {"cacheTtlSeconds": 0},
                   "toolAppeal": {"model": "opus", "cacheTtlSeconds": 0}}),
            "mock-reviewer",
            "claude-opus-4-5",
        ),
    ] {
        server.clear_requests();
        let mut client = Client::connect(options(&server, &env, json!({ "reviewers": reviewers })))
            .await
            .unwrap();
        run(&mut client, "clean the build output").await;
        assert_eq!(models(&server, "tool-approve"), [approve]);
        assert_eq!(models(&server, "tool-appeal"), [appeal]);
        // The agent itself still asks the session's model.
        assert!(
            server
                .requests()
                .iter()
                .filter(|r| !text_of(&r.body["system"]).contains(tascer_testkit::REVIEWER_MARK))
                .all(|r| r.body["model"] == "mock-model")
        );
        let report = client.validation_report().await.unwrap();
        let recorded: Vec<&str> = report
            .reviews
            .iter()
            .map(|r| r.verdict.model.as_str())
            .collect();
        assert_eq!(recorded, [approve, appeal], "the ledger has the ids sent");
        client.disconnect().await;
    }
}
