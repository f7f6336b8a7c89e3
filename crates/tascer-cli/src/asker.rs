//! The terminal permission prompt: allow once, always (for this session) or
//! deny, asked on the controlling terminal.

use std::io::{BufRead, Write};

use futures::future::BoxFuture;
use tascer::guard::permissions::{AskAnswer, Asker, CanUseToolRequest};

/// Asks on `/dev/tty` (falls back to standard error / input).
pub struct TerminalAsker;

impl Asker for TerminalAsker {
    fn ask<'a>(&'a self, request: &'a CanUseToolRequest) -> BoxFuture<'a, AskAnswer> {
        let request = request.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || prompt(&request))
                .await
                .unwrap_or(AskAnswer::Deny {
                    message: "the permission prompt failed".into(),
                })
        })
    }
}

fn prompt(request: &CanUseToolRequest) -> AskAnswer {
    let summary = summarize(request);
    let always = request
        .suggestions
        .iter()
        .map(|s| s.to_rule_string())
        .collect::<Vec<_>>()
        .join(", ");
    let question = format!(
        "\n\u{26a0} {} wants to run: {summary}\n  why it asks: {}\n  [y] allow once  [a] always allow{}  [n] deny (default)\n> ",
        request.tool_name,
        request.decision_reason,
        if always.is_empty() {
            String::new()
        } else {
            format!(" ({always})")
        },
    );
    let answer = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    {
        Ok(mut tty) => {
            let _ = tty.write_all(question.as_bytes());
            let mut line = String::new();
            let _ = std::io::BufReader::new(tty).read_line(&mut line);
            line
        }
        Err(_) => {
            eprint!("{question}");
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            line
        }
    };
    parse_answer(&answer)
}

/// Reads a typed answer; anything but yes/always is a denial.
fn parse_answer(answer: &str) -> AskAnswer {
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => AskAnswer::AllowOnce,
        "a" | "always" => AskAnswer::AllowAlways,
        _ => AskAnswer::Deny {
            message: "the user denied this call".into(),
        },
    }
}

/// One line describing the call: the command, path or URL.
fn summarize(request: &CanUseToolRequest) -> String {
    let input = &request.input;
    for key in ["command", "file_path", "notebook_path", "url", "pattern"] {
        if let Some(v) = input.get(key).and_then(|v| v.as_str()) {
            return v.to_string();
        }
    }
    let text = input.to_string();
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_leniently_and_default_to_deny() {
        assert_eq!(parse_answer("y\n"), AskAnswer::AllowOnce);
        assert_eq!(parse_answer(" Always "), AskAnswer::AllowAlways);
        assert!(matches!(parse_answer(""), AskAnswer::Deny { .. }));
        assert!(matches!(parse_answer("sure"), AskAnswer::Deny { .. }));
    }
}
