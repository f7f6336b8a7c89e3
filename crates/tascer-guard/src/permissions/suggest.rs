//! Rules that would allow a call (for prompts and denial messages).

use super::call::ToolCall;
use super::facts::CallFacts;
use super::mode::{EDIT_TOOLS, ToolClass};
use super::shell::SimpleCommand;
use super::workaround::is_multiplexer;

/// Suggested allow rules for `call`; `missing` are the Bash simple commands
/// no allow rule covered (all commands when empty).
pub(crate) fn suggestions(
    call: &ToolCall,
    facts: &CallFacts,
    missing: &[SimpleCommand],
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(analysis) = &facts.shell {
        let cmds = if missing.is_empty() {
            analysis.commands.as_slice()
        } else {
            missing
        };
        for cmd in cmds {
            if let Some(rule) = bash_rule(cmd) {
                out.push(rule);
            }
        }
    } else if !facts.paths.is_empty() {
        let family = if EDIT_TOOLS.contains(&call.tool_name.as_str()) {
            "Edit"
        } else {
            "Read"
        };
        for p in &facts.paths {
            let dir = if p.is_dir {
                p.canonical.as_path()
            } else {
                p.canonical.parent().unwrap_or(&p.canonical)
            };
            let dir = dir.to_string_lossy();
            let dir = dir.trim_end_matches('/');
            out.push(format!("{family}(/{dir}/**)"));
        }
    } else if let Some(host) = &facts.host {
        out.push(format!("WebFetch(domain:{host})"));
    } else if facts.class != ToolClass::Shell {
        out.push(call.tool_name.clone());
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|r| seen.insert(r.clone()));
    out
}

fn bash_rule(cmd: &SimpleCommand) -> Option<String> {
    if !cmd.is_literal() || cmd.argv.is_empty() {
        return None;
    }
    let name = cmd.argv[0].text.as_str();
    let words: Vec<&str> = cmd.argv.iter().map(|w| w.text.as_str()).collect();
    let needs_quotes = |w: &str| {
        w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"\\$`()".contains(c))
    };
    if words.iter().any(|w| needs_quotes(w)) {
        return None;
    }
    if words.len() == 1 {
        return Some(format!("Bash({name}:*)"));
    }
    if is_multiplexer(name) && !words[1].starts_with('-') {
        return Some(format!("Bash({} {}:*)", words[0], words[1]));
    }
    Some(format!("Bash({})", words.join(" ")))
}
