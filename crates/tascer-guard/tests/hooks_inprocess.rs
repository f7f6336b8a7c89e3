//! In-process hooks (closures and `Hook` impls), isolation, and the
//! aggregation rules when several hooks match.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tascer_core::Behavior;
use tascer_guard::hooks::*;

fn common() -> HookCommon {
    HookCommon {
        session_id: "s".into(),
        transcript_path: "/t.jsonl".into(),
        cwd: "/w".into(),
        permission_mode: Some("default".into()),
    }
}

fn bash(command: &str) -> PreToolUseInput {
    PreToolUseInput {
        common: common(),
        tool_name: "Bash".into(),
        tool_input: json!({"command": command}),
        tool_use_id: "toolu_01".into(),
        ..Default::default()
    }
}

fn opts(name: &str, priority: i32) -> HookOptions {
    HookOptions::default().name(name).priority(priority)
}

#[tokio::test]
async fn closure_denies_dangerous_bash() {
    let registry = HookRegistry::builder()
        .on(HookEvent::PreToolUse, "Bash", |input| async move {
            let HookInput::PreToolUse(i) = input else {
                return Ok(HookOutput::default());
            };
            let cmd = i.tool_input["command"].as_str().unwrap_or_default();
            Ok(if cmd.contains("rm -rf") {
                HookOutput::deny("no rm -rf")
            } else {
                HookOutput::default()
            })
        })
        .build()
        .unwrap();
    let runner = HookRunner::new(registry);
    let (out, runs) = runner.pre_tool_use(bash("rm -rf /")).await;
    assert_eq!(out.denied(), Some("no rm -rf"));
    assert_eq!(runs[0].kind, HookKind::InProcess);
    assert_eq!(runs[0].outcome, HookRunOutcome::Blocked);
    assert_eq!(runs[0].matcher.as_deref(), Some("Bash"));
    assert!(runs[0].stdout.is_none());
    let (out, runs) = runner.pre_tool_use(bash("ls")).await;
    assert_eq!(out.decision, None);
    assert_eq!(runs[0].outcome, HookRunOutcome::Success);
}

struct Counter {
    calls: AtomicUsize,
}

impl Hook for Counter {
    fn name(&self) -> &str {
        "counter"
    }

    fn call<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookOutput, HookError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            Ok(HookOutput::context(format!("event {}", input.event())))
        })
    }
}

#[tokio::test]
async fn hook_trait_implementation() {
    let counter = Arc::new(Counter {
        calls: AtomicUsize::new(0),
    });
    let registry = HookRegistry::builder()
        .hook(HookEvent::UserPromptSubmit, "", counter.clone())
        .hook(HookEvent::SessionStart, "*", counter.clone())
        .build()
        .unwrap();
    let runner = HookRunner::new(registry);
    let (out, runs) = runner
        .user_prompt_submit(UserPromptSubmitInput {
            common: common(),
            prompt: "hi".into(),
            source: None,
        })
        .await;
    assert_eq!(
        out.additional_context,
        vec!["event UserPromptSubmit".to_string()]
    );
    assert_eq!(runs[0].hook_name, "counter");
    let (out, _) = runner
        .session_start(SessionStartInput {
            common: common(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        out.additional_context,
        vec!["event SessionStart".to_string()]
    );
    assert_eq!(counter.calls.load(Ordering::SeqCst), 2);
    // Events without hooks run nothing.
    let (_, runs) = runner.pre_tool_use(bash("ls")).await;
    assert!(runs.is_empty());
}

#[tokio::test]
async fn errors_panics_and_timeouts_are_isolated() {
    let registry = HookRegistry::builder()
        .on_with(HookEvent::PreToolUse, "*", opts("errs", 0), |_| async {
            Err(HookError::msg("db down"))
        })
        .on_with(HookEvent::PreToolUse, "*", opts("panics", 1), |_| async {
            if true {
                panic!("bug in hook");
            }
            Ok(HookOutput::default())
        })
        .on_with(
            HookEvent::PreToolUse,
            "*",
            opts("hangs", 2).timeout(Duration::from_millis(200)),
            |_| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(HookOutput::default())
            },
        )
        .on_with(HookEvent::PreToolUse, "*", opts("fine", 3), |_| async {
            Ok(HookOutput::allow())
        })
        .build()
        .unwrap();
    let (out, runs) = HookRunner::new(registry).pre_tool_use(bash("ls")).await;
    assert_eq!(out.decision, Some(PreToolDecision::Allow { reason: None }));
    let outcomes: Vec<_> = runs.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            HookRunOutcome::Error,
            HookRunOutcome::Error,
            HookRunOutcome::Timeout,
            HookRunOutcome::Success
        ]
    );
    assert_eq!(runs[0].error.as_deref(), Some("db down"));
    assert!(runs[1].error.as_deref().unwrap().contains("panicked"));
    assert_eq!(out.common.errors.len(), 3);
}

#[tokio::test]
async fn in_process_fail_closed_denies() {
    let registry = HookRegistry::builder()
        .on_with(
            HookEvent::PreToolUse,
            "*",
            opts("policy", 0).fail_closed(true),
            |_| async { Err(HookError::msg("policy server unreachable")) },
        )
        .on_with(HookEvent::PreToolUse, "*", opts("allow", 1), |_| async {
            Ok(HookOutput::allow())
        })
        .build()
        .unwrap();
    let (out, runs) = HookRunner::new(registry).pre_tool_use(bash("ls")).await;
    let reason = out.denied().unwrap();
    assert!(
        reason.contains("policy server unreachable") && reason.contains("`policy`"),
        "{reason}"
    );
    assert!(runs[0].fail_closed);
    assert_eq!(runs.len(), 2, "later hooks still run and are recorded");
}

fn decide(d: Behavior, reason: &str) -> HookOutput {
    HookOutput::permission(d, Some(reason.into()))
}

async fn pre_outcome(outputs: Vec<HookOutput>) -> PreToolUseOutcome {
    let mut b = HookRegistry::builder();
    for (i, o) in outputs.into_iter().enumerate() {
        b = b.on_with(
            HookEvent::PreToolUse,
            "*",
            opts(&format!("h{i}"), 0),
            move |_| {
                let o = o.clone();
                async move { Ok(o) }
            },
        );
    }
    HookRunner::new(b.build().unwrap())
        .pre_tool_use(bash("ls"))
        .await
        .0
}

#[tokio::test]
async fn deny_beats_ask_beats_allow() {
    use Behavior::*;
    let out = pre_outcome(vec![
        decide(Allow, "a"),
        decide(Ask, "b"),
        decide(Allow, "c"),
    ])
    .await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Ask {
            reason: Some("b".into())
        })
    );
    let out = pre_outcome(vec![
        decide(Deny, "d1"),
        decide(Ask, "b"),
        decide(Deny, "d2"),
    ])
    .await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Deny {
            reason: "d1".into()
        })
    );
    let out = pre_outcome(vec![decide(Allow, "a"), decide(Allow, "c")]).await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Allow {
            reason: Some("a".into())
        })
    );
    let out = pre_outcome(vec![HookOutput::default(), decide(Ask, "q")]).await;
    assert_eq!(
        out.decision,
        Some(PreToolDecision::Ask {
            reason: Some("q".into())
        })
    );
    let out = pre_outcome(vec![HookOutput::default()]).await;
    assert_eq!(out.decision, None);
}

#[tokio::test]
async fn last_updated_input_wins_and_contexts_concatenate() {
    let out = pre_outcome(vec![
        HookOutput::allow().with_updated_input(json!({"command": "ls -1"})),
        HookOutput::context("first").with_system_message("note 1"),
        HookOutput::default().with_updated_input(json!({"command": "ls -2"})),
        HookOutput::context("second"),
    ])
    .await;
    assert_eq!(out.updated_input, Some(json!({"command": "ls -2"})));
    assert_eq!(
        out.additional_context,
        vec!["first".to_string(), "second".to_string()]
    );
    assert_eq!(
        join_context(&out.additional_context).as_deref(),
        Some("first\n\nsecond")
    );
    assert_eq!(out.common.system_messages, vec!["note 1".to_string()]);
}

#[tokio::test]
async fn updated_input_follows_priority_not_registration() {
    let registry = HookRegistry::builder()
        .on_with(
            HookEvent::PreToolUse,
            "*",
            opts("runs-last", 10),
            |_| async { Ok(HookOutput::allow().with_updated_input(json!({"command": "late"}))) },
        )
        .on_with(
            HookEvent::PreToolUse,
            "*",
            opts("runs-first", -10),
            |_| async { Ok(HookOutput::allow().with_updated_input(json!({"command": "early"}))) },
        )
        .build()
        .unwrap();
    let (out, runs) = HookRunner::new(registry).pre_tool_use(bash("ls")).await;
    assert_eq!(runs[0].hook_name, "runs-first");
    assert_eq!(out.updated_input, Some(json!({"command": "late"})));
}

#[tokio::test]
async fn first_stop_wins() {
    let out = pre_outcome(vec![
        HookOutput::stop("one"),
        HookOutput::stop("two"),
        HookOutput::allow(),
    ])
    .await;
    assert_eq!(out.common.stop.as_deref(), Some("one"));
}

#[tokio::test]
async fn any_block_blocks_prompt_and_stop() {
    let registry = HookRegistry::builder()
        .on(HookEvent::UserPromptSubmit, "", |_| async {
            Ok(HookOutput::context("ctx"))
        })
        .on(HookEvent::UserPromptSubmit, "", |_| async {
            Ok(HookOutput::block("no secrets"))
        })
        .on(HookEvent::UserPromptSubmit, "", |_| async {
            Ok(HookOutput::block("too long"))
        })
        .on(HookEvent::Stop, "", |input| async move {
            match input {
                HookInput::Stop(s) if !s.stop_hook_active => {
                    Ok(HookOutput::block("run the tests first"))
                }
                _ => Ok(HookOutput::default()),
            }
        })
        .on(HookEvent::Stop, "", |_| async { Ok(HookOutput::default()) })
        .build()
        .unwrap();
    let runner = HookRunner::new(registry);
    let (out, _) = runner
        .user_prompt_submit(UserPromptSubmitInput {
            common: common(),
            prompt: "x".into(),
            source: None,
        })
        .await;
    assert_eq!(out.block.as_deref(), Some("no secrets\ntoo long"));
    assert_eq!(out.additional_context, vec!["ctx".to_string()]);
    let (out, _) = runner
        .stop(StopInput {
            common: common(),
            stop_hook_active: false,
            last_assistant_message: None,
        })
        .await;
    assert_eq!(out.block.as_deref(), Some("run the tests first"));
    let (out, _) = runner
        .stop(StopInput {
            common: common(),
            stop_hook_active: true,
            last_assistant_message: None,
        })
        .await;
    assert_eq!(out.block, None);
}

#[tokio::test]
async fn permission_request_aggregation() {
    let allow = |input: serde_json::Value, perm: &str| HookOutput {
        hook_specific_output: Some(HookSpecificOutput {
            decision: Some(PermissionRequestDecision::Allow {
                updated_input: Some(input),
                updated_permissions: Some(vec![json!({"type": "setMode", "mode": perm})]),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let deny = HookOutput {
        hook_specific_output: Some(HookSpecificOutput {
            decision: Some(PermissionRequestDecision::Deny {
                message: Some("nope".into()),
                interrupt: Some(true),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let a1 = allow(json!({"n": 1}), "acceptEdits");
    let a2 = allow(json!({"n": 2}), "plan");
    let input = || PermissionRequestInput {
        common: common(),
        tool_name: "Bash".into(),
        ..Default::default()
    };

    let (a1c, a2c) = (a1.clone(), a2.clone());
    let registry = HookRegistry::builder()
        .on(HookEvent::PermissionRequest, "Bash", move |_| {
            let o = a1c.clone();
            async move { Ok(o) }
        })
        .on(HookEvent::PermissionRequest, "Bash", move |_| {
            let o = a2c.clone();
            async move { Ok(o) }
        })
        .build()
        .unwrap();
    let (out, _) = HookRunner::new(registry).permission_request(input()).await;
    assert_eq!(
        out.decision,
        Some(PermissionRequestDecision::Allow {
            updated_input: Some(json!({"n": 2})),
            updated_permissions: Some(vec![
                json!({"type": "setMode", "mode": "acceptEdits"}),
                json!({"type": "setMode", "mode": "plan"})
            ]),
        })
    );

    let registry = HookRegistry::builder()
        .on(HookEvent::PermissionRequest, "*", move |_| {
            let o = a1.clone();
            async move { Ok(o) }
        })
        .on(HookEvent::PermissionRequest, "*", move |_| {
            let o = deny.clone();
            async move { Ok(o) }
        })
        .on(HookEvent::PermissionRequest, "*", move |_| {
            let o = a2.clone();
            async move { Ok(o) }
        })
        .build()
        .unwrap();
    let (out, runs) = HookRunner::new(registry).permission_request(input()).await;
    assert_eq!(
        out.decision,
        Some(PermissionRequestDecision::Deny {
            message: Some("nope".into()),
            interrupt: Some(true)
        })
    );
    assert_eq!(runs[1].outcome, HookRunOutcome::Blocked);
}

#[tokio::test]
async fn post_tool_use_feedback_and_updated_output() {
    let registry = HookRegistry::builder()
        .on(HookEvent::PostToolUse, "Write", |_| async {
            Ok(HookOutput::block("lint failed: missing semicolon"))
        })
        .on(HookEvent::PostToolUse, "Write", |_| async {
            Ok(HookOutput {
                hook_specific_output: Some(HookSpecificOutput {
                    additional_context: Some("formatted".into()),
                    updated_tool_output: Some(json!({"ok": true})),
                    ..Default::default()
                }),
                ..Default::default()
            })
        })
        .build()
        .unwrap();
    let (out, _) = HookRunner::new(registry)
        .post_tool_use(PostToolUseInput {
            common: common(),
            tool_name: "Write".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        out.block_reason.as_deref(),
        Some("lint failed: missing semicolon")
    );
    assert_eq!(out.additional_context, vec!["formatted".to_string()]);
    assert_eq!(out.updated_tool_output, Some(json!({"ok": true})));
}

#[test]
fn aggregate_effects_directly() {
    let effects = vec![
        HookEffect::Text("ignored for PreToolUse".into()),
        HookEffect::Failed("PreToolUse hook error: x".into()),
        HookEffect::Output(HookOutput::ask("sure?")),
        HookEffect::Blocking("exit 2 reason".into()),
    ];
    let out = PreToolUseOutcome::aggregate(&effects);
    assert_eq!(out.denied(), Some("exit 2 reason"));
    assert_eq!(
        out.common.errors,
        vec!["PreToolUse hook error: x".to_string()]
    );
    let out = UserPromptSubmitOutcome::aggregate(&effects);
    assert_eq!(out.block.as_deref(), Some("exit 2 reason"));
    assert_eq!(
        out.additional_context,
        vec!["ignored for PreToolUse".to_string()]
    );
}

#[test]
fn lenient_output_parsing() {
    assert_eq!(HookOutput::parse("not json"), None);
    assert_eq!(HookOutput::parse("[1,2]"), Some(HookOutput::default()));
    assert_eq!(HookOutput::parse("null"), Some(HookOutput::default()));
    let o = HookOutput::parse(
        r#"{"continue": "false", "decision": "maybe", "reason": 7, "systemMessage": "hi",
            "hookSpecificOutput": {"permissionDecision": "defer", "updatedInput": null,
                                   "decision": {"behavior": "sometimes"}, "extra": 1}}"#,
    )
    .unwrap();
    assert_eq!(o.continue_, None);
    assert_eq!(o.decision, None);
    assert_eq!(o.reason, None);
    assert_eq!(o.system_message.as_deref(), Some("hi"));
    let spec = o.hook_specific_output.unwrap();
    assert_eq!(spec.permission_decision, None);
    assert_eq!(spec.updated_input, None);
    assert_eq!(spec.decision, None);
    // Serialization uses Claude Code's names and round-trips.
    let o = HookOutput::deny("why").with_system_message("m");
    let v = serde_json::to_value(&o).unwrap();
    assert_eq!(
        v,
        json!({"systemMessage": "m", "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "why"}})
    );
    let back: HookOutput = serde_json::from_value(v).unwrap();
    assert_eq!(back, o);
}
