//! Workaround detection stays bounded (issue 16 part 5): a session with
//! 1,000 denied calls through the real loop against the mock model — each
//! denial records only its short reason and an escalation quotes a few
//! earlier calls, cut short, so no message grows with the history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

const TURNS: usize = 50;
const CALLS_PER_TURN: usize = 20;
/// The largest tool result text a denial may produce.
const MAX_DENIAL_CHARS: usize = 2_500;

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_denials_keep_every_message_bounded() {
    let env = Env::new();
    let mut scenario = Scenario::new();
    for t in 0..TURNS {
        let mut turn = Turn::new();
        for c in 0..CALLS_PER_TURN {
            // Alike calls (same program and sub-command) with long,
            // distinct arguments: they escalate as workarounds.
            let long = "x".repeat(300);
            let command = if c % 2 == 0 {
                format!("git push origin branch-{t}-{c}-{long}")
            } else {
                format!("sudo git push origin branch-{t}-{c}-{long}")
            };
            turn = turn.with_tool("Bash", json!({ "command": command }));
        }
        scenario = scenario.turn(turn);
    }
    scenario = scenario.turn(Turn::text("done"));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env)
        .disallowed_tools(["Bash(git push:*)", "Bash(sudo:*)"])
        .max_turns(u32::try_from(TURNS + 5).unwrap());
    let messages = collect("go", options).await;

    let results = tool_results(&messages);
    assert_eq!(results.len(), TURNS * CALLS_PER_TURN);
    assert!(results.iter().all(|r| r.2), "every call is denied");
    let escalated = results
        .iter()
        .filter(|r| r.1.contains("looks like a workaround"))
        .count();
    assert!(escalated > 900, "alike calls escalate: {escalated}");
    let largest = results.iter().map(|r| r.1.chars().count()).max().unwrap();
    assert!(
        largest <= MAX_DENIAL_CHARS,
        "a denial message has {largest} characters"
    );
    // The last denial is no larger than an early escalated one: nothing
    // accumulates.
    let first_escalated = results
        .iter()
        .find(|r| r.1.contains("looks like a workaround"))
        .unwrap();
    let last = results.last().unwrap();
    assert!(
        last.1.len() <= first_escalated.1.len() + 200,
        "first escalation {} chars, last {} chars",
        first_escalated.1.len(),
        last.1.len()
    );
    let result = result_of(&messages);
    assert_eq!(result.permission_denials.len(), TURNS * CALLS_PER_TURN);
    assert!(!result.is_error, "the session finishes");
}
