//! `Admission::admit` and `review`: the order of hooks, the permission
//! decision, the asker fallback and gates, and the data they return.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tascer_core::{ToolCall, ToolOutput};
use tascer_guard::admission::{Admission, CallRequest, RefusedBy, StopRun};
use tascer_guard::gates::{BuiltinOptions, GateRegistry, GateRunner, ValidationConfig};
use tascer_guard::hooks::{HookCommon, HookEvent, HookInput, HookOutput, HookRegistry, HookRunner};
use tascer_guard::permissions::{Behavior, DecisionSource, PermissionEngine, PermissionRules};

fn engine(allow: &[&str], deny: &[&str]) -> Arc<PermissionEngine> {
    Arc::new(
        PermissionEngine::builder()
            .rules(PermissionRules::parse(allow, &[], deny).unwrap())
            .build()
            .unwrap(),
    )
}

fn bash(command: &str, cwd: &std::path::Path) -> ToolCall {
    ToolCall {
        tool_name: "Bash".into(),
        input: json!({"command": command}),
        tool_use_id: "toolu_1".into(),
        cwd: cwd.to_path_buf(),
        session_id: "s".into(),
    }
}

fn request(call: &ToolCall) -> CallRequest<'_> {
    CallRequest {
        call,
        hook_common: HookCommon {
            session_id: "s".into(),
            transcript_path: "/t.jsonl".into(),
            cwd: call.cwd.display().to_string(),
            permission_mode: None,
        },
        agent_id: None,
    }
}

/// A PreToolUse hook that denies `rm` and rewrites `echo hi` to `echo rewritten`.
fn hooks() -> HookRunner {
    let registry = HookRegistry::builder()
        .on(HookEvent::PreToolUse, "Bash", |input| async move {
            let HookInput::PreToolUse(i) = input else {
                return Ok(HookOutput::default());
            };
            let command = i.tool_input["command"].as_str().unwrap_or_default();
            Ok(match command {
                c if c.starts_with("rm") => HookOutput::deny("no deleting"),
                "echo hi" => HookOutput::default()
                    .with_updated_input(json!({"command": "echo rewritten"}))
                    .with_system_message("rewrote the command"),
                "halt" => HookOutput::stop("enough"),
                _ => HookOutput::default(),
            })
        })
        .build()
        .unwrap();
    HookRunner::new(registry)
}

#[tokio::test]
async fn a_hook_denial_comes_first_and_is_the_calls_decision() {
    let dir = tempfile::tempdir().unwrap();
    let admission = Admission::new(engine(&["Bash(rm:*)"], &[])).hooks(hooks());
    let call = bash("rm notes.txt", dir.path());
    let admitted = admission.admit(request(&call)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert_eq!(refusal.by, RefusedBy::Hook);
    assert!(
        refusal.message.contains("no deleting"),
        "{}",
        refusal.message
    );
    assert!(refusal.is_denial());
    assert_eq!(admitted.hooks.runs.len(), 1);
    let decision = admitted.decision.expect("the hook's decision is on record");
    assert_eq!(decision.behavior, Behavior::Deny);
    assert_eq!(
        decision.decided_by,
        DecisionSource::Hook {
            name: Some(admitted.hooks.runs[0].hook_name.clone())
        },
        "the hook decided: the allow rule was never asked"
    );
    assert_eq!(decision.reason, "no deleting");
}

#[tokio::test]
async fn a_rewritten_input_is_what_the_decision_sees_and_what_runs() {
    let dir = tempfile::tempdir().unwrap();
    let admission = Admission::new(engine(&["Bash(echo rewritten)"], &[])).hooks(hooks());
    let call = bash("echo hi", dir.path());
    let admitted = admission.admit(request(&call)).await;
    assert_eq!(
        admitted.verdict.unwrap(),
        json!({"command": "echo rewritten"})
    );
    let decision = admitted.decision.unwrap();
    assert_eq!(decision.behavior, Behavior::Allow);
    assert!(
        matches!(decision.decided_by, DecisionSource::Rule { .. }),
        "{:?}",
        decision.decided_by
    );
    assert_eq!(admitted.hooks.system_messages, vec!["rewrote the command"]);
}

#[tokio::test]
async fn a_hook_stop_ends_the_run_and_is_not_a_denial() {
    let dir = tempfile::tempdir().unwrap();
    let admission = Admission::new(engine(&[], &[])).hooks(hooks());
    let call = bash("halt", dir.path());
    let admitted = admission.admit(request(&call)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert_eq!(refusal.stop, Some(StopRun::Hook("enough".into())));
    assert!(!refusal.is_denial());
    // Still a decision on record: the hook refused the call.
    let decision = admitted.decision.unwrap();
    assert_eq!(
        (
            decision.behavior,
            decision.interrupt,
            decision.reason.as_str()
        ),
        (Behavior::Deny, true, "enough")
    );
    assert!(matches!(decision.decided_by, DecisionSource::Hook { .. }));
}

#[tokio::test]
async fn an_ask_with_no_one_to_ask_is_a_denial_that_says_how_to_allow() {
    let dir = tempfile::tempdir().unwrap();
    let admission = Admission::new(engine(&[], &["Bash(curl:*)"]));
    let call = bash("cargo build", dir.path());
    let admitted = admission.admit(request(&call)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert_eq!(refusal.by, RefusedBy::Permission);
    assert!(
        refusal.message.contains("To allow it"),
        "{}",
        refusal.message
    );
    assert_eq!(admitted.decision.unwrap().behavior, Behavior::Deny);

    let call = bash("curl https://example.com", dir.path());
    let refusal = admission.admit(request(&call)).await.verdict.unwrap_err();
    assert!(
        refusal.message.contains("Bash(curl:*)"),
        "{}",
        refusal.message
    );
}

#[tokio::test]
async fn pre_gates_check_the_admitted_input_and_post_gates_mark_failures() {
    let dir = tempfile::tempdir().unwrap();
    let validation = ValidationConfig::from_value(&json!({
        "per_tool": {"Bash": {"pre_gates": ["command_allowed"], "post_gates": ["exit_code_zero"]}}
    }))
    .unwrap();
    let mut options = BuiltinOptions::default();
    options.command_allowed.deny = vec!["make deploy".into()];
    let gates = GateRunner::new(GateRegistry::with_builtins(&options).unwrap());
    let admission = Admission::new(engine(&["Bash"], &[])).gates(gates, validation);

    let call = bash("make deploy", dir.path());
    let admitted = admission.admit(request(&call)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert_eq!(refusal.by, RefusedBy::Gate);
    assert!(!refusal.is_denial());
    assert_eq!(admitted.pre_gates.len(), 1);
    assert!(!admitted.pre_gates[0].passed);

    let call = bash("false", dir.path());
    assert!(admission.admit(request(&call)).await.verdict.is_ok());
    let output = ToolOutput::error("Exit code 1").with_raw(json!({"exitCode": 1}));
    let reviewed = admission.review(request(&call), output).await;
    assert!(reviewed.gate_failed);
    assert!(
        reviewed.output.content.to_text().contains("exit code 1"),
        "the gate's message is appended for the model: {}",
        reviewed.output.content.to_text()
    );
}

mod sandbox_escape {
    use super::*;
    use futures::future::BoxFuture;
    use tascer_guard::permissions::{
        AskAnswer, Asker, CanUseToolRequest, PermissionMode, RuleOrigin, SandboxEscapePolicy,
    };

    struct Approves;
    impl Asker for Approves {
        fn ask<'a>(&'a self, _: &'a CanUseToolRequest) -> BoxFuture<'a, AskAnswer> {
            Box::pin(async { AskAnswer::AllowOnce })
        }
    }

    /// Admission in bypassPermissions with the escape policy.
    fn admission(excluded: &[&str], allow_unsandboxed: bool) -> Admission {
        let policy =
            SandboxEscapePolicy::new(excluded, allow_unsandboxed, &RuleOrigin::session()).unwrap();
        let engine = PermissionEngine::builder()
            .mode(PermissionMode::BypassPermissions)
            .policy(Arc::new(policy))
            .build()
            .unwrap();
        Admission::new(Arc::new(engine))
    }

    fn unsandboxed(command: &str, cwd: &std::path::Path) -> ToolCall {
        let mut call = bash(command, cwd);
        call.input["dangerouslyDisableSandbox"] = json!(true);
        call
    }

    #[tokio::test]
    async fn leaving_the_sandbox_needs_a_person_even_in_bypass_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let call = unsandboxed("docker build .", dir.path());
        // Nobody to ask: refused, by the policy, saying why.
        let admitted = admission(&[], true).admit(request(&call)).await;
        let refusal = admitted.verdict.unwrap_err();
        assert!(
            refusal.message.contains("outside the OS sandbox"),
            "{}",
            refusal.message
        );
        let decision = admitted.decision.unwrap();
        assert_eq!(decision.behavior, Behavior::Deny);
        assert_eq!(
            decision.decided_by,
            DecisionSource::Policy {
                name: "sandbox-escape".into()
            }
        );
        // A person approves: allowed, and the decision says who.
        let admitted = admission(&[], true)
            .asker(Some(Arc::new(Approves)))
            .admit(request(&call))
            .await;
        assert!(admitted.verdict.is_ok());
        assert_eq!(admitted.decision.unwrap().decided_by, DecisionSource::User);
        // The same command without the field is the mode's to decide.
        let sandboxed = bash("docker build .", dir.path());
        let admitted = admission(&[], true).admit(request(&sandboxed)).await;
        assert!(admitted.verdict.is_ok());
    }

    #[tokio::test]
    async fn excluded_commands_leave_without_asking_unless_leaving_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let listed = unsandboxed("docker build . && docker push x", dir.path());
        let admitted = admission(&["docker:*"], true).admit(request(&listed)).await;
        assert!(admitted.verdict.is_ok(), "{:?}", admitted.verdict);
        // Every command of the line must be listed.
        let mixed = unsandboxed("docker build . && curl x", dir.path());
        let admitted = admission(&["docker:*"], true).admit(request(&mixed)).await;
        assert!(admitted.verdict.is_err());
        // allowUnsandboxedCommands false: refused whatever the list says.
        let admitted = admission(&["docker:*"], false)
            .admit(request(&listed))
            .await;
        let refusal = admitted.verdict.unwrap_err();
        assert!(
            refusal.message.contains("allowUnsandboxedCommands"),
            "{}",
            refusal.message
        );
    }
}
