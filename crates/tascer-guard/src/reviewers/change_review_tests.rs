//! Each validator's verdicts — pass, refusal, malformed answer under
//! either fail mode — and what its question shows, with a scripted model.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::super::test_model::Scripted;
use super::super::validators::FILE_READ_LIMIT;
use super::super::{
    FailMode, ReviewCache, ReviewerConfig, ReviewersConfig, Transcript, TranscriptExcerpt,
    TranscriptMessage,
};
use super::*;

struct Request;
impl Transcript for Request {
    fn excerpt(&self, _max: usize) -> TranscriptExcerpt {
        TranscriptExcerpt {
            request: Some("fix the off-by-one in count()".into()),
            messages: vec![
                TranscriptMessage {
                    role: "user".into(),
                    text: "fix the off-by-one in count()".into(),
                },
                TranscriptMessage {
                    role: "assistant".into(),
                    text: "I will keep the fix small.".into(),
                },
            ],
        }
    }
}

#[derive(Default)]
struct MemCache(std::sync::Mutex<Vec<(Value, super::super::CachedVerdict)>>);
impl ReviewCache for MemCache {
    fn get(&self, key: &Value) -> Option<super::super::CachedVerdict> {
        let v = self.0.lock().unwrap();
        v.iter().find(|(k, _)| k == key).map(|(_, c)| c.clone())
    }
    fn put(&self, key: &Value, verdict: &super::super::CachedVerdict, _ttl: Duration) {
        self.0.lock().unwrap().push((key.clone(), verdict.clone()));
    }
}

fn config(fail_mode: FailMode) -> Option<ReviewerConfig> {
    Some(ReviewerConfig {
        model: None,
        timeout: Duration::from_secs(5),
        fail_mode,
        cache_ttl: Duration::from_secs(60),
        context_messages: 4,
        max_blocks: 1,
    })
}

fn chain(
    answers: Vec<(&'static str, &'static str, &'static str)>,
    fail_mode: FailMode,
) -> (Reviewers, Arc<Scripted>) {
    let model = Arc::new(Scripted::new(answers));
    let cfg = ReviewersConfig {
        plan_validate: config(fail_mode),
        style_drift: config(fail_mode),
        claude_md_validate: config(fail_mode),
        ..Default::default()
    };
    let r = Reviewers::new(cfg, model.clone())
        .transcript(Arc::new(Request))
        .cache(Arc::new(MemCache::default()))
        .claude_dir(None);
    (r, model)
}

fn call(tool: &str, input: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        input,
        tool_use_id: "t1".into(),
        cwd: "/w".into(),
        session_id: "s".into(),
    }
}

fn validation(kind: ReviewerKind, file: &str) -> Validation {
    Validation {
        kind,
        file: Some(PathBuf::from(file)),
    }
}

fn text(t: &str) -> FileText {
    FileText {
        text: t.into(),
        truncated: false,
    }
}

#[tokio::test]
async fn style_drift_lets_a_focused_edit_run_and_refuses_a_reformat_with_what_to_redo() {
    let (r, model) = chain(
        vec![
            (
                "style-drift",
                "n + 1",
                r#"{"verdict":"focused","reason":"only the fix"}"#,
            ),
            (
                "style-drift",
                "fn  count",
                r#"{"verdict":"drift","reason":"it re-indents count() and renames n to total"}"#,
            ),
        ],
        FailMode::Open,
    );
    let v = validation(ReviewerKind::StyleDrift, "/w/src/lib.rs");
    let focused = call(
        "Edit",
        json!({"file_path": "/w/src/lib.rs", "old_string": "n - 1", "new_string": "n + 1"}),
    );
    let review = r.validate_change(&v, &focused, None, None).await.unwrap();
    assert!(review.allowed);
    assert_eq!(review.by, ReviewerKind::StyleDrift);
    assert_eq!(review.records[0].verdict(), "focused");
    assert_eq!(review.records[0].outcome, ReviewOutcome::Decided);

    let reformat = call(
        "MultiEdit",
        json!({"file_path": "/w/src/lib.rs", "edits": [
            {"old_string": "fn count", "new_string": "fn  count"},
            {"old_string": "n - 1", "new_string": "total + 1", "replace_all": true}
        ]}),
    );
    let review = r.validate_change(&v, &reformat, None, None).await.unwrap();
    assert!(!review.allowed);
    assert_eq!(review.records[0].verdict(), "drift");
    assert!(
        review
            .reason
            .contains("it re-indents count() and renames n to total"),
        "{}",
        review.reason
    );
    assert!(
        review
            .reason
            .contains("Redo the edit without the unrequested cosmetic changes"),
        "{}",
        review.reason
    );
    // The question: the request and both edits, not the conversation.
    let (system, user) = model.questions().pop().unwrap();
    assert!(system.starts_with("Tascer reviewer: style-drift\n"));
    assert!(system.contains("\"focused\" or \"drift\""), "{system}");
    assert!(user.contains("fix the off-by-one in count()"), "{user}");
    assert!(user.contains("Edit 2:"), "{user}");
    assert!(user.contains("(every occurrence)"), "{user}");
    assert!(!user.contains("I will keep the fix small."), "{user}");
}

#[tokio::test]
async fn a_write_over_a_file_is_shown_as_a_diff_and_a_long_file_as_its_start() {
    let (r, model) = chain(vec![], FailMode::Open);
    let v = validation(ReviewerKind::StyleDrift, "/w/a.py");
    let write = call(
        "Write",
        json!({"file_path": "/w/a.py", "content": "x = 1\ny = 3\n"}),
    );
    r.validate_change(&v, &write, Some(&text("x = 1\ny = 2\n")), None)
        .await
        .unwrap();
    let (_, user) = model.questions().pop().unwrap();
    assert!(user.contains("-y = 2\n+y = 3"), "{user}");
    let long = FileText {
        text: "z".repeat(FILE_READ_LIMIT),
        truncated: true,
    };
    r.validate_change(&v, &write, Some(&long), None)
        .await
        .unwrap();
    let (_, user) = model.questions().pop().unwrap();
    assert!(user.contains("current content (its start)"), "{user}");
    assert!(user.contains("The new content:\n<<<\nx = 1"), "{user}");
}

#[tokio::test]
async fn plan_validate_sees_the_plan_request_and_conversation_and_refuses_drift() {
    let (r, model) = chain(
        vec![
            (
                "plan-validate",
                "Rewrite the module",
                r#"{"verdict":"drift","reason":"it rewrites the whole module; the user asked for one fix"}"#,
            ),
            (
                "plan-validate",
                "Fix count()",
                r#"{"verdict":"aligned","reason":"the plan is the fix"}"#,
            ),
        ],
        FailMode::Open,
    );
    let write = call(
        "Write",
        json!({"file_path": "/c/plans/p.md", "content": "1. Rewrite the module in async"}),
    );
    let v = validation(ReviewerKind::PlanValidate, "/c/plans/p.md");
    let review = r.validate_change(&v, &write, None, None).await.unwrap();
    assert!(!review.allowed);
    assert!(
        review
            .reason
            .starts_with("the plan departs from the user's request: it rewrites the whole module"),
        "{}",
        review.reason
    );
    assert!(
        review.reason.contains("Revise the plan"),
        "{}",
        review.reason
    );
    let (_, user) = model.questions().pop().unwrap();
    assert!(user.contains("fix the off-by-one in count()"), "{user}");
    assert!(user.contains("I will keep the fix small."), "{user}");

    // ExitPlanMode with its plan; an Edit shows the plan file too.
    let exit = call("ExitPlanMode", json!({"plan": "1. Fix count()"}));
    let v = Validation {
        kind: ReviewerKind::PlanValidate,
        file: None,
    };
    let review = r.validate_change(&v, &exit, None, None).await.unwrap();
    assert!(review.allowed, "{}", review.reason);
    assert_eq!(review.records[0].verdict(), "aligned");
    let edit = call(
        "Edit",
        json!({"file_path": "/c/plans/p.md", "old_string": "1.", "new_string": "1. Fix count()."}),
    );
    let v = validation(ReviewerKind::PlanValidate, "/c/plans/p.md");
    r.validate_change(&v, &edit, Some(&text("# Plan\n1.\n")), None)
        .await
        .unwrap();
    let (_, user) = model.questions().pop().unwrap();
    assert!(
        user.contains("The file's current content:\n<<<\n# Plan\n1.\n"),
        "{user}"
    );
}

#[tokio::test]
async fn claude_md_validate_checks_a_change_against_the_file_and_refuses_a_violation() {
    let (r, model) = chain(
        vec![(
            "claude-md-validate",
            "API_KEY=",
            r#"{"verdict":"violates","reason":"it adds a secret and a paragraph of prose under no heading"}"#,
        )],
        FailMode::Open,
    );
    let v = validation(ReviewerKind::ClaudeMdValidate, "/w/.claude/CLAUDE.md");
    let edit = call(
        "Edit",
        json!({"file_path": "/w/.claude/CLAUDE.md", "old_string": "## Build\n",
               "new_string": "## Build\nAPI_KEY=sk-123 and a long story\n"}),
    );
    let current = text("# Project\n\n## Build\n- `make`\n");
    let review = r
        .validate_change(&v, &edit, Some(&current), None)
        .await
        .unwrap();
    assert!(!review.allowed);
    assert_eq!(review.records[0].verdict(), "violates");
    assert!(
        review
            .reason
            .starts_with("the change to CLAUDE.md does not follow the file's own conventions"),
        "{}",
        review.reason
    );
    let (system, user) = model.questions().pop().unwrap();
    assert!(system.contains("\"conforms\" or \"violates\""), "{system}");
    assert!(user.contains("## Build\n- `make`"), "{user}");
}

#[tokio::test]
async fn a_malformed_answer_is_a_failed_review_decided_by_the_fail_mode() {
    for (mode, allowed, outcome) in [
        (FailMode::Open, true, ReviewOutcome::FailedOpen),
        (FailMode::Closed, false, ReviewOutcome::FailedClosed),
    ] {
        let (r, _) = chain(
            vec![
                ("style-drift", "n + 1", "Looks focused to me."),
                (
                    "plan-validate",
                    "plan",
                    r#"{"verdict":"allow","reason":"x"}"#,
                ),
                ("claude-md-validate", "old", r#"{"verdict":"conforms"}"#),
            ],
            mode,
        );
        for (v, c) in [
            (
                validation(ReviewerKind::StyleDrift, "/w/a.rs"),
                call(
                    "Edit",
                    json!({"file_path": "/w/a.rs", "old_string": "n", "new_string": "n + 1"}),
                ),
            ),
            (
                Validation {
                    kind: ReviewerKind::PlanValidate,
                    file: None,
                },
                call("ExitPlanMode", json!({"plan": "the plan"})),
            ),
            (
                validation(ReviewerKind::ClaudeMdValidate, "/w/CLAUDE.md"),
                call(
                    "Edit",
                    json!({"file_path": "/w/CLAUDE.md", "old_string": "old", "new_string": "new"}),
                ),
            ),
        ] {
            let review = r.validate_change(&v, &c, None, None).await.unwrap();
            assert_eq!(review.allowed, allowed, "{:?} {mode:?}", v.kind);
            let rec = &review.records[0];
            assert_eq!(rec.outcome, outcome, "{:?}", v.kind);
            assert!(
                rec.error
                    .as_deref()
                    .unwrap()
                    .starts_with("malformed reviewer answer"),
                "{rec:?}"
            );
            assert!(review.reason.contains("failMode"), "{}", review.reason);
        }
    }
}

#[tokio::test]
async fn the_same_change_for_the_same_request_is_answered_from_the_cache() {
    let (r, model) = chain(
        vec![(
            "style-drift",
            "n + 1",
            r#"{"verdict":"focused","reason":"only the fix"}"#,
        )],
        FailMode::Open,
    );
    let v = validation(ReviewerKind::StyleDrift, "/w/a.rs");
    let edit = call(
        "Edit",
        json!({"file_path": "/w/a.rs", "old_string": "n", "new_string": "n + 1"}),
    );
    r.validate_change(&v, &edit, None, None).await.unwrap();
    let again = r.validate_change(&v, &edit, None, None).await.unwrap();
    assert!(again.allowed);
    assert!(again.records[0].cache_hit);
    assert_eq!(model.questions().len(), 1);
    // Another validator off: no review at all.
    let off = Reviewers::new(ReviewersConfig::default(), Arc::new(Scripted::new(vec![])));
    assert!(off.validate_change(&v, &edit, None, None).await.is_none());
}

#[test]
fn each_validator_s_system_prompt_names_it_its_verdicts_and_its_task() {
    for kind in [
        ReviewerKind::PlanValidate,
        ReviewerKind::StyleDrift,
        ReviewerKind::ClaudeMdValidate,
    ] {
        let p = super::super::system_prompt(kind);
        assert!(p.starts_with(&format!("Tascer reviewer: {}\n", kind.name())));
        let (yes, no) = kind.verdicts();
        assert!(p.contains(&format!("\"{yes}\" or \"{no}\"")), "{p}");
        assert!(
            p.contains(super::super::validators::task(kind).unwrap()),
            "{p}"
        );
    }
    assert_eq!(
        super::super::validators::task(ReviewerKind::ToolApprove),
        None
    );
}
