//! TodoWrite, AskUserQuestion and ExitPlanMode tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::*;
use futures::future::BoxFuture;
use serde_json::json;
use tascer_core::Tool;
use tascer_tools::{
    AskUserQuestionTool, ExitPlanModeTool, Question, TodoItem, TodoStatus, TodoWriteTool,
    ToolState, UserAnswerer,
};

const TODO_TEXT: &str = "Todos have been modified successfully. Ensure that you continue to use \
     the todo list to track your progress. Please proceed with the current tasks if applicable";

#[tokio::test]
async fn todo_write_keeps_list_in_memory() {
    let (_d, dir) = tempdir();
    let state = ToolState::new();
    let tool = TodoWriteTool::new(state.clone());
    let c = ctx(&dir);
    let first = json!({"todos": [
        {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
        {"content": "Fix bugs", "status": "pending", "activeForm": "Fixing bugs"},
    ]});
    let out = call(&tool, &c, first.clone()).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), TODO_TEXT);
    let raw = out.raw.unwrap();
    assert_eq!(raw["oldTodos"], json!([]));
    assert_eq!(raw["newTodos"], first["todos"]);
    assert_eq!(
        state.todos(),
        vec![
            TodoItem {
                content: "Run tests".into(),
                status: TodoStatus::InProgress,
                active_form: "Running tests".into(),
            },
            TodoItem {
                content: "Fix bugs".into(),
                status: TodoStatus::Pending,
                active_form: "Fixing bugs".into(),
            },
        ]
    );

    let second = json!({"todos": [
        {"content": "Run tests", "status": "completed", "activeForm": "Running tests"},
    ]});
    let out = call(&tool, &c, second.clone()).await;
    let raw = out.raw.unwrap();
    assert_eq!(raw["oldTodos"], first["todos"]);
    assert_eq!(raw["newTodos"], second["todos"]);
    assert_eq!(state.todos().len(), 1);
    // Nothing was written anywhere.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[tokio::test]
async fn todo_write_persists_to_dir_and_reloads() {
    let (_d, dir) = tempdir();
    let todo_dir = dir.join("todos");
    let c = ctx(&dir);
    let list = json!({"todos": [
        {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
    ]});
    {
        let state = ToolState::new().with_todo_dir(&todo_dir);
        let tool = TodoWriteTool::new(state);
        let out = call(&tool, &c, list.clone()).await;
        assert!(!out.is_error, "{out:?}");
    }
    let file = todo_dir.join("test-session.json");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(saved, list["todos"]);

    // A new state for the same session starts from the saved list.
    let state = ToolState::new().with_todo_dir(&todo_dir);
    let tool = TodoWriteTool::new(state.clone());
    let out = call(&tool, &c, json!({"todos": []})).await;
    assert_eq!(out.raw.unwrap()["oldTodos"], list["todos"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "[]");
    assert!(state.todos().is_empty());
}

#[tokio::test]
async fn todo_write_invalid_input() {
    let (_d, dir) = tempdir();
    let tool = TodoWriteTool::new(ToolState::new());
    let c = ctx(&dir);
    for bad in [
        json!({"todos": [{"content": "x", "status": "done", "activeForm": "x"}]}),
        json!({"todos": [{"content": "x", "status": "pending"}]}),
        json!({"todos": [{"content": " ", "status": "pending", "activeForm": "x"}]}),
        json!({}),
    ] {
        let out = call(&tool, &c, bad.clone()).await;
        assert!(out.is_error, "{bad}");
        assert!(
            text(&out).starts_with("TodoWrite input is invalid:"),
            "{}",
            text(&out)
        );
    }
}

#[tokio::test]
async fn todo_write_reports_unwritable_dir() {
    let (_d, dir) = tempdir();
    let blocker = dir.join("file");
    std::fs::write(&blocker, "").unwrap();
    let state = ToolState::new().with_todo_dir(blocker.join("sub"));
    let tool = TodoWriteTool::new(state.clone());
    let out = call(
        &tool,
        &ctx(&dir),
        json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Cannot create directory"),
        "{}",
        text(&out)
    );
    assert!(state.todos().is_empty());
}

/// Answers with the first option of each question and records what it saw.
struct FirstOption {
    seen: Mutex<Vec<Question>>,
}

impl UserAnswerer for FirstOption {
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>> {
        Box::pin(async move {
            self.seen.lock().unwrap().extend(questions.iter().cloned());
            Ok(questions
                .iter()
                .map(|q| {
                    let answer = if q.multi_select {
                        q.options
                            .iter()
                            .map(|o| o.label.clone())
                            .collect::<Vec<_>>()
                            .join(", ")
                    } else {
                        q.options[0].label.clone()
                    };
                    (q.question.clone(), answer)
                })
                .collect())
        })
    }
}

struct Dismiss;

impl UserAnswerer for Dismiss {
    fn answer<'a>(
        &'a self,
        _questions: &'a [Question],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>> {
        Box::pin(async { Err("the user dismissed the dialog".to_string()) })
    }
}

fn questions() -> serde_json::Value {
    json!({"questions": [
        {"question": "Which database?", "header": "DB", "multiSelect": false, "options": [
            {"label": "SQLite", "description": "Embedded"},
            {"label": "Postgres", "description": "Server"},
        ]},
        {"question": "Which features?", "header": "Features", "multiSelect": true, "options": [
            {"label": "Auth", "description": "Login"},
            {"label": "Search", "description": "Full text"},
        ]},
    ]})
}

#[tokio::test]
async fn ask_user_question_routes_to_answerer() {
    let (_d, dir) = tempdir();
    let answerer = Arc::new(FirstOption {
        seen: Mutex::new(Vec::new()),
    });
    let state = ToolState::new().with_user_answerer(answerer.clone());
    let tool = AskUserQuestionTool::new(state);
    let out = call(&tool, &ctx(&dir), questions()).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        "User has answered your questions: \"Which database?\"=\"SQLite\", \
         \"Which features?\"=\"Auth, Search\". You can now continue with the user's answers \
         in mind."
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["answers"]["Which database?"], "SQLite");
    assert_eq!(raw["questions"], questions()["questions"]);
    let seen = answerer.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].header, "Features");
    assert!(seen[1].multi_select);
}

#[tokio::test]
async fn ask_user_question_errors() {
    let (_d, dir) = tempdir();
    let c = ctx(&dir);
    let tool = AskUserQuestionTool::new(ToolState::new());
    let out = call(&tool, &c, questions()).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with(
            "no user is available to answer questions in this session, and the host gave no \
             answers (an SDK host answers through can_use_tool"
        ),
        "{}",
        text(&out)
    );

    let tool = AskUserQuestionTool::new(ToolState::new().with_user_answerer(Arc::new(Dismiss)));
    let out = call(&tool, &c, questions()).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "The user did not answer the questions: the user dismissed the dialog"
    );

    let one_option = json!({"questions": [{"question": "Q?", "header": "H", "multiSelect": false,
        "options": [{"label": "only", "description": "d"}]}]});
    let out = call(&tool, &c, one_option).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "AskUserQuestion input is invalid: questions[0].options must have 2 to 4 items, not 1"
    );
    let out = call(&tool, &c, json!({"questions": []})).await;
    assert!(text(&out).starts_with("AskUserQuestion input is invalid:"));
}

#[tokio::test]
async fn exit_plan_mode_sets_flag() {
    let (_d, dir) = tempdir();
    let state = ToolState::new();
    let tool = ExitPlanModeTool::new(state.clone());
    assert!(tool.is_read_only());
    assert!(!state.plan_exit_requested());
    let out = call(&tool, &ctx(&dir), json!({"plan": "1. Do it\n2. Test it"})).await;
    assert!(!out.is_error, "{out:?}");
    assert!(
        text(&out).ends_with("1. Do it\n2. Test it"),
        "{}",
        text(&out)
    );
    assert_eq!(out.raw.unwrap()["plan"], "1. Do it\n2. Test it");
    assert!(state.plan_exit_requested());
    assert_eq!(state.exit_plan().as_deref(), Some("1. Do it\n2. Test it"));
    assert_eq!(
        state.take_plan_exit_request().as_deref(),
        Some("1. Do it\n2. Test it")
    );
    assert!(!state.plan_exit_requested());
    assert_eq!(state.take_plan_exit_request(), None);

    let out = call(&tool, &ctx(&dir), json!({})).await;
    assert!(out.is_error);
    assert!(text(&out).starts_with("ExitPlanMode input is invalid:"));
    let out = call(&tool, &ctx(&dir), json!({"plan": "  "})).await;
    assert!(out.is_error);
    assert!(!state.plan_exit_requested());
}

#[tokio::test]
async fn answers_a_host_put_in_the_input_are_used_when_no_user_can_answer() {
    let (_d, dir) = tempdir();
    let mut input = questions();
    input["answers"] = json!({"Which database?": "Postgres", "Not asked?": "x"});
    input["annotations"] = json!({"Which database?": {"notes": "server wins"}});
    input["metadata"] = json!({"source": "sdk"});
    let tool = AskUserQuestionTool::new(ToolState::new());
    let out = call(&tool, &ctx(&dir), input.clone()).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        "User has answered your questions: \"Which database?\"=\"Postgres\". You can now \
         continue with the user's answers in mind."
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["answers"], json!({"Which database?": "Postgres"}));
    assert_eq!(
        raw["annotations"]["Which database?"]["notes"],
        "server wins"
    );

    // A person configured to answer is asked whatever the input holds.
    let answerer = Arc::new(FirstOption {
        seen: Mutex::new(Vec::new()),
    });
    let tool = AskUserQuestionTool::new(ToolState::new().with_user_answerer(answerer.clone()));
    let out = call(&tool, &ctx(&dir), input).await;
    assert_eq!(out.raw.unwrap()["answers"]["Which database?"], "SQLite");
    assert_eq!(answerer.seen.lock().unwrap().len(), 2);
}
