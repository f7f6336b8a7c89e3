//! Terminal prompts: the permission prompt (allow once, always for this
//! session, or deny) and answers to the model's `AskUserQuestion`, both on
//! the controlling terminal.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use futures::future::BoxFuture;
use tascer::guard::permissions::{AskAnswer, Asker, CanUseToolRequest};
use tascer::tools::{Question, UserAnswerer};

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

impl UserAnswerer for TerminalAsker {
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>> {
        let questions = questions.to_vec();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut answers = BTreeMap::new();
                for q in &questions {
                    let mut text = format!("\n? {}\n", q.question);
                    for (i, o) in q.options.iter().enumerate() {
                        text.push_str(&format!("  [{}] {} — {}\n", i + 1, o.label, o.description));
                    }
                    text.push_str(if q.multi_select {
                        "  numbers separated by commas, or your own words\n> "
                    } else {
                        "  a number, or your own words\n> "
                    });
                    let line = read_answer(&text);
                    let line = line.trim();
                    if line.is_empty() {
                        continue;
                    }
                    answers.insert(q.question.clone(), choose(q, line));
                }
                Ok(answers)
            })
            .await
            .map_err(|_| "the question prompt failed".to_string())?
        })
    }
}

/// Maps typed numbers to option labels; anything else is the user's own
/// words.
fn choose(question: &Question, line: &str) -> String {
    let picked: Option<Vec<&str>> = line
        .split(',')
        .map(|part| {
            let n: usize = part.trim().parse().ok()?;
            question
                .options
                .get(n.checked_sub(1)?)
                .map(|o| o.label.as_str())
        })
        .collect();
    match picked {
        Some(labels) if !labels.is_empty() => labels.join(", "),
        _ => line.to_string(),
    }
}

/// Shows `text` on the terminal and reads one line ("" at end of input).
fn read_answer(text: &str) -> String {
    prompt_line(text).unwrap_or_default()
}

/// Shows `text` on the terminal (`/dev/tty`, else standard error) and
/// reads one line from it (else from standard input); `None` at end of
/// input or when nothing can be read.
pub(crate) fn prompt_line(text: &str) -> Option<String> {
    let mut line = String::new();
    let read = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    {
        Ok(mut tty) => {
            let _ = tty.write_all(text.as_bytes());
            std::io::BufReader::new(tty).read_line(&mut line)
        }
        Err(_) => {
            eprint!("{text}");
            std::io::stdin().lock().read_line(&mut line)
        }
    };
    match read {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
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
    parse_answer(&read_answer(&question))
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

    #[test]
    fn numbers_pick_labels_and_words_pass_through() {
        let q: Question = serde_json::from_value(serde_json::json!({
            "question": "Which?", "header": "h", "multiSelect": true,
            "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]
        }))
        .unwrap();
        assert_eq!(choose(&q, "2"), "B");
        assert_eq!(choose(&q, "1, 2"), "A, B");
        assert_eq!(choose(&q, "3"), "3");
        assert_eq!(choose(&q, "neither, thanks"), "neither, thanks");
    }
}
