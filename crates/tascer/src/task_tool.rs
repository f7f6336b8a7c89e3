//! The `Task` tool: runs a subagent — a nested agent loop with its own
//! prompt, tool subset and turn limit — and returns its final answer.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{
    ChatMessage, Message, Role, Tool, ToolContext, ToolOutput, Usage, UserContent, UserMessage,
};

use crate::agent::{Agent, INTERRUPTED};
use crate::duration::millis;
use crate::governance::{Governance, StopVerdict};
use crate::loop_env::LoopEnv;
use crate::options::AgentDefinition;
use crate::system_prompt::default_system_prompt;

/// The tool's name, as in Claude Code.
pub(crate) const TASK_TOOL_NAME: &str = "Task";

/// The subagent type used when the model names none.
pub(crate) const GENERAL_PURPOSE: &str = "general-purpose";

/// Turn limit of a subagent without its own.
const DEFAULT_SUBAGENT_MAX_TURNS: u32 = 30;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskInput {
    description: String,
    prompt: String,
    #[serde(default)]
    subagent_type: Option<String>,
    /// Claude Code's model alias (`sonnet`, `opus`, `haiku`); subagents use
    /// the session's model unless their definition names one.
    #[serde(default)]
    #[allow(dead_code)]
    model: Option<String>,
}

/// Runs subagents.
pub(crate) struct TaskTool {
    env: LoopEnv,
    model: String,
    cwd: PathBuf,
    tools: Vec<Arc<dyn Tool>>,
    agents: BTreeMap<String, AgentDefinition>,
    description: String,
    governance: Arc<Governance>,
    /// The session's memory files section, added to every subagent's
    /// system prompt.
    memory: Option<String>,
}

impl TaskTool {
    /// A Task tool whose subagents may use `tools` (never Task itself).
    pub fn new(
        env: LoopEnv,
        model: String,
        cwd: PathBuf,
        tools: Vec<Arc<dyn Tool>>,
        agents: BTreeMap<String, AgentDefinition>,
        governance: Arc<Governance>,
    ) -> Self {
        let mut description = String::from(
            "Launch a subagent to handle a complex, multi-step task on its own. The subagent \
             gets the prompt you write (include all context it needs), works with its own tools, \
             and returns one final report. Available agent types (subagent_type):\n",
        );
        description.push_str(&format!(
            "- {GENERAL_PURPOSE}: a general agent with all tools (default)\n"
        ));
        for (name, def) in &agents {
            description.push_str(&format!("- {name}: {}\n", def.description));
        }
        TaskTool {
            env,
            model,
            cwd,
            tools,
            agents,
            description,
            governance,
            memory: None,
        }
    }

    /// Adds the session's memory section to subagents' system prompts.
    pub fn with_memory(mut self, section: Option<String>) -> Self {
        self.memory = section;
        self
    }

    fn agent_for(&self, kind: &str, tool_use_id: &str) -> Result<(Agent, u32), String> {
        let mut base = default_system_prompt(
            &self.cwd,
            &chrono::Local::now().format("%Y-%m-%d").to_string(),
        );
        if let Some(memory) = &self.memory {
            base.push_str("\n\n");
            base.push_str(memory);
        }
        let subagent_note = "You are a subagent: complete the task you are given, then reply \
                             with a concise final report. Your final message is returned to the \
                             agent that started you.";
        if kind == GENERAL_PURPOSE {
            let prompt = format!("{base}\n\n{subagent_note}");
            return Ok((
                Agent::new(
                    self.env.clone(),
                    self.model.clone(),
                    prompt,
                    self.tools.clone(),
                    Some(tool_use_id.to_string()),
                    Arc::clone(&self.governance),
                ),
                DEFAULT_SUBAGENT_MAX_TURNS,
            ));
        }
        let Some(def) = self.agents.get(kind) else {
            let mut known = vec![GENERAL_PURPOSE.to_string()];
            known.extend(self.agents.keys().cloned());
            return Err(format!(
                "Agent type '{kind}' not found. Available agents: {}",
                known.join(", ")
            ));
        };
        let tools = match &def.tools {
            Some(only) => self
                .tools
                .iter()
                .filter(|t| only.iter().any(|n| n == t.name()))
                .cloned()
                .collect(),
            None => self.tools.clone(),
        };
        let prompt = format!("{}\n\n{subagent_note}\n\n{base}", def.prompt);
        let model = match def.model.as_deref() {
            None | Some("inherit") => self.model.clone(),
            Some(model) => model.to_string(),
        };
        Ok((
            Agent::new(
                self.env.clone(),
                model,
                prompt,
                tools,
                Some(tool_use_id.to_string()),
                Arc::clone(&self.governance),
            ),
            def.max_turns.unwrap_or(DEFAULT_SUBAGENT_MAX_TURNS),
        ))
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: TaskInput = match serde_json::from_value(input) {
            Ok(i) => i,
            Err(e) => return ToolOutput::error(format!("Task input is invalid: {e}")),
        };
        let kind = input
            .subagent_type
            .clone()
            .unwrap_or_else(|| GENERAL_PURPOSE.to_string());
        let (agent, max_turns) = match self.agent_for(&kind, &ctx.tool_use_id) {
            Ok(a) => a,
            Err(message) => return ToolOutput::error(message),
        };
        let started = Instant::now();
        let mut user = UserMessage::new(
            UserContent::Text(input.prompt.clone()),
            &self.env.session_id,
        );
        user.parent_tool_use_id = Some(ctx.tool_use_id.clone());
        self.env.emit(Message::User(user));
        self.env.proof.prompt(&input.prompt, Some(&ctx.tool_use_id));

        let mut history = vec![ChatMessage::user_text(input.prompt.clone())];
        let mut usage = Usage::default();
        let mut tool_uses = 0usize;
        let mut final_text = String::new();
        let mut turns = 0;
        let mut stop_hook_active = false;
        loop {
            if let Some(failure) = self.env.failure.get() {
                return ToolOutput::error(format!("The subagent stopped: {failure}"));
            }
            if ctx.cancel.is_cancelled() {
                return ToolOutput::error(format!("{INTERRUPTED}: the subagent was stopped"));
            }
            if turns >= max_turns {
                return ToolOutput::error(format!(
                    "The {kind} subagent reached its limit of {max_turns} turns without finishing. \
                     Its last message: {final_text}"
                ));
            }
            let response = match agent.call_model(&history, &ctx.cancel).await {
                Ok(r) => r,
                Err(tascer_model::ModelError::Cancelled) => {
                    return ToolOutput::error(format!("{INTERRUPTED}: the subagent was stopped"));
                }
                Err(e) => return ToolOutput::error(format!("The subagent failed: {e}")),
            };
            turns += 1;
            usage.add(&response.usage);
            let (text, calls) = agent.emit_response(&response);
            if !text.is_empty() {
                final_text = text;
            }
            history.push(ChatMessage {
                role: Role::Assistant,
                content: response.content,
            });
            if calls.is_empty() {
                match agent
                    .governance
                    .on_stop(
                        &self.env,
                        Some((&ctx.tool_use_id, &kind)),
                        stop_hook_active,
                        &final_text,
                    )
                    .await
                {
                    StopVerdict::Finish => break,
                    StopVerdict::Stop(reason) => {
                        return ToolOutput::error(format!(
                            "The subagent was stopped by a hook: {reason}"
                        ));
                    }
                    StopVerdict::Continue(text) => {
                        stop_hook_active = true;
                        let mut user =
                            UserMessage::new(UserContent::Text(text.clone()), &self.env.session_id);
                        user.parent_tool_use_id = Some(ctx.tool_use_id.clone());
                        self.env.emit(Message::User(user));
                        history.push(ChatMessage::user_text(text));
                        continue;
                    }
                }
            }
            tool_uses += calls.len();
            let (blocks, stop) = agent.run_tools(&calls, &ctx.cancel).await;
            history.push(ChatMessage {
                role: Role::User,
                content: blocks,
            });
            if let Some(stop) = stop {
                return ToolOutput::error(format!("The subagent stopped. {stop}"));
            }
        }
        let raw = json!({
            "status": "completed",
            "agentId": ctx.tool_use_id,
            "agentType": kind,
            "description": input.description,
            "content": [{"type": "text", "text": final_text}],
            "totalToolUseCount": tool_uses,
            "totalDurationMs": millis(started.elapsed()),
            "totalTokens": usage.total_tokens(),
            "usage": usage,
            "prompt": input.prompt,
        });
        ToolOutput::text(final_text).with_raw(raw)
    }
}

impl Tool for TaskTool {
    fn name(&self) -> &str {
        TASK_TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The type of agent to use"},
                "model": {"type": "string", "description": "Optional model alias"}
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(self.run(input, ctx))
    }
}
