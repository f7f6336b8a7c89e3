//! The validators' step in admission: which calls reach a validator (and
//! which cost nothing), and a refusal becoming the permission decision.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tascer_core::ToolCall;

use crate::admission::{Admission, CallRequest};
use crate::hooks::HookCommon;
use crate::permissions::{Behavior, DecisionSource, PermissionEngine, PermissionMode};
use crate::reviewers::test_model::Scripted;
use crate::reviewers::{FailMode, ReviewerConfig, ReviewerKind, Reviewers, ReviewersConfig};

fn on() -> Option<ReviewerConfig> {
    Some(ReviewerConfig {
        model: None,
        timeout: Duration::from_secs(5),
        fail_mode: FailMode::Open,
        cache_ttl: Duration::ZERO,
        context_messages: 4,
        max_blocks: 1,
    })
}

/// A workspace with a source file and a `CLAUDE.md`, and a Claude
/// directory with `plans/`.
struct Fixture {
    _root: tempfile::TempDir,
    ws: PathBuf,
    claude: PathBuf,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let claude = base.join("claude");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(claude.join("plans")).unwrap();
    std::fs::write(ws.join("lib.rs"), "fn count(n: u32) -> u32 { n - 1 }\n").unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "# Rules\n\n- Run `make test`.\n").unwrap();
    Fixture {
        _root: root,
        ws,
        claude,
    }
}

fn admission(
    f: &Fixture,
    mode: PermissionMode,
    answers: Vec<(&'static str, &'static str, &'static str)>,
) -> (Admission, Arc<Scripted>) {
    let engine = PermissionEngine::builder().mode(mode).build().unwrap();
    let model = Arc::new(Scripted::new(answers));
    let chain = Reviewers::new(
        ReviewersConfig {
            plan_validate: on(),
            style_drift: on(),
            claude_md_validate: on(),
            ..Default::default()
        },
        model.clone(),
    )
    .claude_dir(Some(f.claude.clone()));
    let admission = Admission::new(Arc::new(engine)).reviewers(Some(Arc::new(chain)));
    (admission, model)
}

fn call(cwd: &Path, id: &str, tool: &str, input: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        input,
        tool_use_id: id.into(),
        cwd: cwd.to_path_buf(),
        session_id: "s".into(),
    }
}

fn request(call: &ToolCall) -> CallRequest<'_> {
    CallRequest {
        call,
        hook_common: HookCommon::default(),
        agent_id: None,
    }
}

#[tokio::test]
async fn only_changes_a_validator_knows_reach_it_and_other_calls_cost_no_model_call() {
    let f = fixture();
    let (admission, model) = admission(&f, PermissionMode::BypassPermissions, vec![]);
    // As under `tascer hook`: ExitPlanMode is left to the host to ask.
    let admission = admission.defer_asks(true);
    let ws = &f.ws;
    for c in [
        call(ws, "b", "Bash", json!({"command": "sed -i s/a/b/ lib.rs"})),
        call(ws, "r", "Read", json!({"file_path": ws.join("lib.rs")})),
        call(
            ws,
            "n",
            "Write",
            json!({"file_path": ws.join("new.rs"), "content": "x"}),
        ),
        call(
            ws,
            "o",
            "Edit",
            json!({"file_path": "/tmp/elsewhere.rs", "old_string": "a", "new_string": "b"}),
        ),
        call(ws, "g", "Grep", json!({"pattern": "count"})),
    ] {
        let admitted = admission.admit(request(&c)).await;
        assert!(admitted.verdict.is_ok(), "{}: {admitted:?}", c.tool_use_id);
        assert!(admitted.reviews.is_empty(), "{}", c.tool_use_id);
    }
    assert!(model.questions().is_empty());

    // One question each, to its own validator; nothing scripted, so each
    // fails open: the calls run (ExitPlanMode goes on to the user) and
    // the failures are recorded.
    let edit = |p: PathBuf| json!({"file_path": p, "old_string": "n - 1", "new_string": "n + 1"});
    for (c, kind) in [
        (
            call(ws, "e", "Edit", edit(ws.join("lib.rs"))),
            ReviewerKind::StyleDrift,
        ),
        (
            call(ws, "m", "Edit", edit(ws.join("CLAUDE.md"))),
            ReviewerKind::ClaudeMdValidate,
        ),
        (
            call(
                ws,
                "p",
                "Write",
                json!({"file_path": f.claude.join("plans/a.md"), "content": "# Plan"}),
            ),
            ReviewerKind::PlanValidate,
        ),
        (
            call(ws, "x", "ExitPlanMode", json!({"plan": "# Plan"})),
            ReviewerKind::PlanValidate,
        ),
    ] {
        let admitted = admission.admit(request(&c)).await;
        let behavior = admitted.decision.as_ref().unwrap().behavior;
        assert_ne!(behavior, Behavior::Deny, "{}: {admitted:?}", c.tool_use_id);
        assert_eq!(admitted.reviews.len(), 1, "{}", c.tool_use_id);
        assert_eq!(admitted.reviews[0].reviewer, kind);
        assert_eq!(admitted.reviews[0].verdict(), kind.verdict(true));
        assert_eq!(admitted.reviews[0].outcome.as_str(), "failed_open");
    }
    assert_eq!(model.questions().len(), 4);
}

#[tokio::test]
async fn a_drifting_edit_is_refused_by_the_reviewer_and_the_focused_retry_runs() {
    let f = fixture();
    let (admission, _) = admission(
        &f,
        PermissionMode::BypassPermissions,
        vec![
            (
                "style-drift",
                "fn count(n: u32) -> u32 {\n",
                r#"{"verdict":"drift","reason":"it reformats count()"}"#,
            ),
            (
                "style-drift",
                "n + 1",
                r#"{"verdict":"focused","reason":"only the fix"}"#,
            ),
            (
                "claude-md-validate",
                "Run `make test`",
                r#"{"verdict":"violates","reason":"it adds prose under no heading"}"#,
            ),
        ],
    );
    let ws = &f.ws;
    let reformat = call(
        ws,
        "e1",
        "Edit",
        json!({"file_path": ws.join("lib.rs"), "old_string": "fn count(n: u32) -> u32 { n - 1 }",
               "new_string": "fn count(n: u32) -> u32 {\n    n + 1\n}"}),
    );
    let admitted = admission.admit(request(&reformat)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert!(
        refusal
            .message
            .starts_with("denied by the style-drift reviewer: the edit makes cosmetic changes"),
        "{}",
        refusal.message
    );
    let decision = admitted.decision.unwrap();
    assert_eq!(decision.behavior, Behavior::Deny);
    assert_eq!(
        decision.decided_by,
        DecisionSource::Reviewer {
            name: "style-drift".into()
        }
    );
    assert_eq!(admitted.reviews[0].verdict(), "drift");

    let focused = call(
        ws,
        "e2",
        "Edit",
        json!({"file_path": ws.join("lib.rs"), "old_string": "n - 1", "new_string": "n + 1"}),
    );
    let admitted = admission.admit(request(&focused)).await;
    assert!(admitted.verdict.is_ok(), "{admitted:?}");
    assert_eq!(admitted.reviews[0].verdict(), "focused");

    // The CLAUDE.md reviewer is shown the file as it is.
    let md = call(
        ws,
        "m1",
        "Write",
        json!({"file_path": ws.join("CLAUDE.md"), "content": "# Rules\n\nA long story.\n"}),
    );
    let admitted = admission.admit(request(&md)).await;
    let refusal = admitted.verdict.unwrap_err();
    assert!(
        refusal.message.contains("it adds prose under no heading"),
        "{}",
        refusal.message
    );
}

#[tokio::test]
async fn a_call_left_to_the_host_to_ask_is_validated_and_a_refused_one_is_not() {
    let f = fixture();
    let (admission, model) = admission(
        &f,
        PermissionMode::Default,
        vec![(
            "style-drift",
            "lib.rs",
            r#"{"verdict":"drift","reason":"it renames n"}"#,
        )],
    );
    let admission = admission.defer_asks(true);
    let ws = &f.ws;
    let edit = call(
        ws,
        "e",
        "Edit",
        json!({"file_path": ws.join("lib.rs"), "old_string": "n - 1", "new_string": "m - 1"}),
    );
    let admitted = admission.admit(request(&edit)).await;
    assert_eq!(admitted.decision.unwrap().behavior, Behavior::Deny);
    assert_eq!(model.questions().len(), 1);

    // Refused by the permission rules: no validator is asked.
    let denied = PermissionEngine::builder()
        .mode(PermissionMode::Default)
        .rules(crate::permissions::PermissionRules::parse(&[], &[], &["Edit"]).unwrap())
        .build()
        .unwrap();
    let chain = Reviewers::new(
        ReviewersConfig {
            style_drift: on(),
            ..Default::default()
        },
        model.clone(),
    );
    let admission = Admission::new(Arc::new(denied)).reviewers(Some(Arc::new(chain)));
    let admitted = admission.admit(request(&edit)).await;
    assert!(admitted.verdict.is_err());
    assert!(admitted.reviews.is_empty());
    assert_eq!(model.questions().len(), 1);
}
