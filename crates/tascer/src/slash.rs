//! Running a `/name args` prompt: a custom command becomes the prompt it
//! expands to (with its model and allowed tools for that turn); an MCP
//! server's prompt (`/mcp__<server>__<prompt> args`) becomes the text of
//! its messages; a built-in command runs in the session and its output is
//! the turn's result.

use serde_json::json;
use tascer_guard::hooks::CompactTrigger;
use tascer_guard::permissions::{Behavior, RuleOrigin};
use tokio_util::sync::CancellationToken;

use crate::commands::{BUILTIN_COMMANDS, parse_invocation};
use crate::session::Session;

/// Text that replaces the conversation after `/clear`.
const CLEARED: &str = "The conversation was cleared with /clear: nothing said before this \
                       point applies.";

/// What a prompt asks for.
pub(crate) enum Resolved {
    /// Send this prompt to the model (a plain prompt or an expanded
    /// custom command).
    Prompt(Expanded),
    /// Run a built-in command.
    Builtin {
        /// Its name.
        name: String,
        /// Its arguments.
        args: String,
    },
    /// An MCP server's prompt, expanded by [`resolve_async`].
    McpPrompt {
        /// The command (`mcp__<server>__<prompt>`).
        name: String,
        /// Its arguments, as typed.
        args: String,
    },
    /// An unknown command: the error that lists the known ones.
    Unknown(String),
    /// A command that could not be expanded: why.
    Failed(String),
}

/// A prompt to send, with what a custom command sets for its turn.
pub(crate) struct Expanded {
    pub text: String,
    pub command: Option<String>,
    pub model: Option<String>,
    pub allowed_tools: Vec<String>,
}

/// Decides what `prompt` is.
pub(crate) fn resolve(session: &Session, prompt: String) -> Resolved {
    let Some((name, args)) = parse_invocation(&prompt) else {
        return Resolved::Prompt(Expanded {
            text: prompt,
            command: None,
            model: None,
            allowed_tools: Vec::new(),
        });
    };
    if let Some(command) = session.commands.iter().find(|c| c.name == name) {
        return Resolved::Prompt(Expanded {
            text: command.expand(args),
            command: Some(command.name.clone()),
            model: command.model.clone(),
            allowed_tools: command.allowed_tools.clone(),
        });
    }
    if BUILTIN_COMMANDS.iter().any(|(n, _)| *n == name) {
        return Resolved::Builtin {
            name: name.to_string(),
            args: args.to_string(),
        };
    }
    if let Some(mcp) = &session.mcp
        && mcp.prompt_server(name).is_some()
    {
        return Resolved::McpPrompt {
            name: name.to_string(),
            args: args.to_string(),
        };
    }
    let known: Vec<String> = command_names(session)
        .into_iter()
        .map(|n| format!("/{n}"))
        .collect();
    Resolved::Unknown(format!(
        "Unknown slash command: /{name}. Available commands: {}. Custom commands are \
         Markdown files in .claude/commands/ or ~/.claude/commands/, or a plugin's commands/ \
         (/<plugin>:<name>).",
        known.join(", ")
    ))
}

/// [`resolve`], with the MCP servers' prompt lists refreshed first (a
/// server may have sent `prompts/list_changed`) and an MCP prompt run
/// (`prompts/get`) into the text it expands to.
pub(crate) async fn resolve_async(session: &Session, prompt: String) -> Resolved {
    if let Some(mcp) = &session.mcp {
        mcp.prompts().await;
    }
    let (name, args) = match resolve(session, prompt) {
        Resolved::McpPrompt { name, args } => (name, args),
        other => return other,
    };
    let Some(mcp) = &session.mcp else {
        return Resolved::Failed(format!("/{name}: no MCP servers in this session"));
    };
    match mcp.run_prompt_command(&name, &args).await {
        Ok(text) => Resolved::Prompt(Expanded {
            text,
            command: None,
            model: None,
            allowed_tools: Vec::new(),
        }),
        Err(e) => Resolved::Failed(e.to_string()),
    }
}

/// Every command name, built-in, custom and MCP prompt, sorted.
pub(crate) fn command_names(session: &Session) -> Vec<String> {
    let mcp_prompts = session
        .mcp
        .iter()
        .flat_map(|m| m.prompts_snapshot())
        .map(|p| p.command);
    let mut names: Vec<String> = BUILTIN_COMMANDS
        .iter()
        .map(|(n, _)| (*n).to_string())
        .chain(session.commands.iter().map(|c| c.name.clone()))
        .chain(mcp_prompts)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What a custom command changed for its turn, undone by [`end`].
pub(crate) struct Scope {
    model: Option<String>,
    rules_from: Option<String>,
}

/// Applies a custom command's model and allowed tools for its turn.
pub(crate) fn begin(session: &mut Session, expanded: &Expanded) -> Result<Scope, String> {
    let mut scope = Scope {
        model: None,
        rules_from: None,
    };
    let Some(name) = &expanded.command else {
        return Ok(scope);
    };
    if !expanded.allowed_tools.is_empty() {
        let origin = RuleOrigin {
            source_file: Some(format!("/{name} command")),
            project_root: Some(session.cwd.clone()),
        };
        let permissions = session.agent.governance.admission.permissions();
        for rule in &expanded.allowed_tools {
            if let Err(e) = permissions.add_scoped_rule(Behavior::Allow, rule, &origin) {
                if let Some(from) = &origin.source_file {
                    permissions.remove_session_rules_from(from);
                }
                return Err(format!(
                    "/{name}: allowed-tools rule {rule:?} is invalid: {e}"
                ));
            }
        }
        scope.rules_from = origin.source_file;
    }
    if let Some(model) = &expanded.model {
        scope.model = Some(std::mem::replace(&mut session.agent.model, model.clone()));
    }
    Ok(scope)
}

/// Undoes what [`begin`] applied.
pub(crate) fn end(session: &mut Session, scope: Scope) {
    if let Some(from) = &scope.rules_from {
        session
            .agent
            .governance
            .admission
            .permissions()
            .remove_session_rules_from(from);
    }
    if let Some(model) = scope.model {
        session.agent.model = model;
    }
}

/// Runs a built-in command; its output text, or why it failed.
pub(crate) async fn run_builtin(
    session: &mut Session,
    name: &str,
    args: &str,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let text = match name {
        "compact" => {
            let instructions = (!args.is_empty()).then_some(args);
            let pre = session.last_input_tokens;
            crate::compact::compact(session, CompactTrigger::Manual, instructions, pre, cancel)
                .await
                .map_err(|e| format!("Not compacted: {e}"))?;
            "Compacted the conversation.".to_string()
        }
        "clear" => {
            clear(session);
            "Cleared the conversation.".to_string()
        }
        "cost" => cost(session),
        "context" => context(session),
        other => return Err(format!("/{other} is not a built-in command")),
    };
    let env = &session.agent.env;
    env.emit(env.system_message("local_command_output", json!({"content": text})));
    Ok(text)
}

/// `/clear`: the conversation is replaced by a note that it was cleared,
/// written as a compaction boundary so a resumed session starts there too.
fn clear(session: &mut Session) {
    let env = session.agent.env.clone();
    session.history = vec![tascer_store::compacted_history_start(CLEARED)];
    session.last_input_tokens = 0;
    env.proof.compaction("clear", 0, CLEARED);
    env.emit(env.system_message(
        "compact_boundary",
        json!({
            "compact_metadata": {"trigger": "manual", "pre_tokens": 0},
            "summary": CLEARED,
        }),
    ));
}

fn cost(session: &Session) -> String {
    let env = &session.agent.env;
    let mut out = format!(
        "Total cost: ${:.4}\nModel calls in this session: {}\n",
        env.total_cost_usd(),
        session.total_turns
    );
    let per_model = env.model_usage();
    if per_model.is_empty() {
        out.push_str("No model usage yet in this process.");
    } else {
        out.push_str("Usage by model:");
        for (model, u) in per_model {
            out.push_str(&format!(
                "\n  {model}: {} input, {} output, {} cache read, {} cache write (${:.4})",
                u.input_tokens,
                u.output_tokens,
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens,
                u.cost_usd
            ));
        }
    }
    out
}

fn context(session: &Session) -> String {
    let agent = &session.agent;
    let history_chars: usize = session
        .history
        .iter()
        .map(|m| serde_json::to_string(&m.content).map_or(0, |s| s.len()))
        .sum();
    let mut out = format!(
        "Model: {}\nLast request input: {} tokens (cache included)\n\
         System prompt: {} characters (~{} tokens)\n\
         Messages: {} ({} characters, ~{} tokens)\nTools: {}",
        agent.model,
        session.last_input_tokens,
        agent.system_prompt.len(),
        agent.system_prompt.len() / 4,
        session.history.len(),
        history_chars,
        history_chars / 4,
        agent.tools.len(),
    );
    if session.memory.is_empty() {
        out.push_str("\nMemory files: none");
    } else {
        out.push_str("\nMemory files:");
        for file in &session.memory {
            out.push_str(&format!(
                "\n  {} ({} characters)",
                file.path.display(),
                file.content.len()
            ));
        }
    }
    out
}
