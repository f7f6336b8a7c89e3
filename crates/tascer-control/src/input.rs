//! Standard input, read on a thread of its own (a blocking read must not
//! hold up the runtime's shutdown) and parsed line by line.

use std::io::BufRead;

use tokio::sync::mpsc;

use crate::wire::{self, Incoming};

/// One event from standard input.
pub enum Line {
    /// A parsed line.
    Parsed(Incoming),
    /// A line that ends the session (the text goes to stderr).
    Fatal(String),
    /// End of input.
    Eof,
}

/// Starts reading standard input; the lines arrive on the receiver, the
/// last one being [`Line::Eof`] or [`Line::Fatal`].
pub fn read_stdin() -> mpsc::UnboundedReceiver<Line> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut stdin = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let line = match stdin.read_until(b'\n', &mut buf) {
                Ok(0) => Line::Eof,
                Ok(_) => match std::str::from_utf8(&buf) {
                    Ok(text) => match wire::parse_line(text) {
                        Ok(Some(incoming)) => Line::Parsed(incoming),
                        Ok(None) => continue,
                        Err(err) => Line::Fatal(err.to_string()),
                    },
                    Err(err) => Line::Fatal(format!(
                        "Error parsing streaming input line: not UTF-8: {err}"
                    )),
                },
                Err(err) => Line::Fatal(format!("Error reading standard input: {err}")),
            };
            let last = !matches!(line, Line::Parsed(_));
            if tx.send(line).is_err() || last {
                break;
            }
        }
    });
    rx
}
