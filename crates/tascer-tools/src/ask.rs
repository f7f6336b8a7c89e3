//! `AskUserQuestion` (routed to a [`UserAnswerer`](crate::UserAnswerer)) and
//! `ExitPlanMode`.

use std::collections::{BTreeMap, HashSet};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::services::Question;
use crate::state::ToolState;
use crate::util::{finish, input_schema, parse_input};

const ASK_NAME: &str = "AskUserQuestion";
const PLAN_NAME: &str = "ExitPlanMode";

/// Input of [`AskUserQuestionTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskInput {
    /// Questions to ask the user (1-4).
    #[schemars(length(min = 1, max = 4))]
    questions: Vec<Question>,
    /// The answers, keyed by question text, when a host answered before
    /// the tool ran: an SDK's `can_use_tool` returns them in its updated
    /// input (Claude Code's shape). Not offered to the model.
    #[serde(default)]
    #[schemars(skip)]
    answers: Option<BTreeMap<String, String>>,
    /// The host's notes per question (Claude Code's shape), kept in the
    /// raw output.
    #[serde(default)]
    #[schemars(skip)]
    annotations: Option<Value>,
    /// Where the questions came from (Claude Code's shape); unused.
    #[serde(default)]
    #[schemars(skip)]
    #[allow(dead_code)]
    metadata: Option<Value>,
}

/// Asks the user multiple-choice questions.
#[derive(Debug, Clone)]
pub struct AskUserQuestionTool {
    state: ToolState,
}

impl AskUserQuestionTool {
    /// An `AskUserQuestion` tool using the answerer configured in `state`.
    pub fn new(state: ToolState) -> Self {
        AskUserQuestionTool { state }
    }
}

impl Tool for AskUserQuestionTool {
    fn name(&self) -> &str {
        ASK_NAME
    }

    fn description(&self) -> &str {
        "Asks the user 1-4 multiple-choice questions during execution, to clarify ambiguous \
         instructions, gather preferences or get decisions on implementation choices. Each \
         question has a short header, 2-4 options with descriptions, and multiSelect to allow \
         several answers; the user can always answer in their own words instead."
    }

    fn input_schema(&self) -> Value {
        input_schema::<AskInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            tokio::select! {
                out = self.run(input) => finish(out),
                _ = ctx.cancel.cancelled() => {
                    ToolOutput::error("AskUserQuestion was interrupted.")
                }
            }
        })
    }
}

fn validate(questions: &[Question]) -> Result<(), String> {
    if questions.is_empty() || questions.len() > 4 {
        return Err(format!(
            "questions must have 1 to 4 items, not {}",
            questions.len()
        ));
    }
    let mut seen = HashSet::new();
    for (i, q) in questions.iter().enumerate() {
        if q.question.trim().is_empty() {
            return Err(format!("questions[{i}].question must not be empty"));
        }
        if !seen.insert(q.question.as_str()) {
            return Err(format!("question texts must be unique: {:?}", q.question));
        }
        if q.options.len() < 2 || q.options.len() > 4 {
            return Err(format!(
                "questions[{i}].options must have 2 to 4 items, not {}",
                q.options.len()
            ));
        }
        let mut labels = HashSet::new();
        for o in &q.options {
            if !labels.insert(o.label.as_str()) {
                return Err(format!(
                    "option labels must be unique within a question: {:?}",
                    o.label
                ));
            }
        }
    }
    Ok(())
}

impl AskUserQuestionTool {
    async fn run(&self, input: Value) -> Result<ToolOutput, ToolError> {
        let input: AskInput = parse_input(ASK_NAME, input)?;
        validate(&input.questions).map_err(|message| ToolError::InvalidInput {
            tool: ASK_NAME,
            message,
        })?;
        // A configured answerer (a person) is always asked: answers in the
        // input count only where no one else can answer, i.e. when the
        // host (an SDK's can_use_tool) gave them while admitting the call.
        let answers = match (self.state.user_answerer(), input.answers.clone()) {
            (Some(answerer), _) => answerer.answer(&input.questions).await.map_err(|e| {
                ToolError::msg(format!("The user did not answer the questions: {e}"))
            })?,
            (None, Some(answers)) => answers,
            (None, None) => {
                return Err(ToolError::msg(
                    "no user is available to answer questions in this session, and the host \
                     gave no answers (an SDK host answers through can_use_tool, returning them \
                     in updatedInput.answers): continue without asking",
                ));
            }
        };
        // In the order asked; answers to questions not asked are dropped.
        let pairs: Vec<(&str, &str)> = input
            .questions
            .iter()
            .filter_map(|q| {
                answers
                    .get(&q.question)
                    .map(|a| (q.question.as_str(), a.as_str()))
            })
            .collect();
        let text = if pairs.is_empty() {
            "The user did not answer any of the questions.".to_string()
        } else {
            let list: Vec<String> = pairs
                .iter()
                .map(|(q, a)| format!("\"{q}\"=\"{a}\""))
                .collect();
            format!(
                "User has answered your questions: {}. You can now continue with the user's \
                 answers in mind.",
                list.join(", ")
            )
        };
        let answers: BTreeMap<&str, &str> = pairs.into_iter().collect();
        let mut raw = json!({"questions": input.questions, "answers": answers});
        if let Some(annotations) = &input.annotations {
            raw["annotations"] = annotations.clone();
        }
        Ok(ToolOutput::text(text).with_raw(raw))
    }
}

/// Input of [`ExitPlanModeTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExitPlanInput {
    /// The plan you came up with, that you want to run by the user for approval. Supports
    /// markdown. The plan should be pretty concise.
    plan: String,
}

/// Ends plan mode with a plan; sets [`ToolState::plan_exit_requested`].
#[derive(Debug, Clone)]
pub struct ExitPlanModeTool {
    state: ToolState,
}

impl ExitPlanModeTool {
    /// An `ExitPlanMode` tool setting the flag in `state`.
    pub fn new(state: ToolState) -> Self {
        ExitPlanModeTool { state }
    }
}

impl Tool for ExitPlanModeTool {
    fn name(&self) -> &str {
        PLAN_NAME
    }

    fn description(&self) -> &str {
        "Use this tool when you are in plan mode and have finished planning the implementation \
         steps of a task that requires writing code, to present the plan to the user and leave \
         plan mode. Do not use it for research tasks."
    }

    fn input_schema(&self) -> Value {
        input_schema::<ExitPlanInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish((|| {
                let input: ExitPlanInput = parse_input(PLAN_NAME, input)?;
                if input.plan.trim().is_empty() {
                    return Err(ToolError::InvalidInput {
                        tool: PLAN_NAME,
                        message: "plan must not be empty".into(),
                    });
                }
                self.state.request_plan_exit(input.plan.clone());
                let text = format!(
                    "User has approved your plan. You can now start coding. Start with updating \
                     your todo list if applicable\n\nHere is the plan:\n\n{}",
                    input.plan
                );
                Ok(ToolOutput::text(text).with_raw(json!({"plan": input.plan, "isAgent": false})))
            })())
        })
    }
}
