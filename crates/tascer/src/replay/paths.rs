//! The recorded tree's directory and the scratch tree's: a replayed tool
//! input names the scratch tree where the record named the original, and
//! a replayed result is compared with the record after the scratch
//! tree's directory is written back as the original's.

use serde_json::Value;

/// One directory standing in for another.
#[derive(Debug, Clone)]
pub(crate) struct PathMap {
    /// The directory the record names (the original tree).
    recorded: String,
    /// The directory the replay uses (the scratch tree).
    scratch: String,
}

impl PathMap {
    /// `scratch` stands in for `recorded`.
    pub fn new(recorded: &str, scratch: &str) -> Self {
        PathMap {
            recorded: recorded.trim_end_matches('/').to_string(),
            scratch: scratch.trim_end_matches('/').to_string(),
        }
    }

    /// `value` with the recorded directory replaced by the scratch one in
    /// every string (tool inputs: paths, commands).
    pub fn to_scratch(&self, value: &Value) -> Value {
        self.map(value, &self.recorded, &self.scratch)
    }

    /// `text` with the scratch directory written as the recorded one.
    pub fn to_recorded(&self, text: &str) -> String {
        replace_dir(text, &self.scratch, &self.recorded)
    }

    fn map(&self, value: &Value, from: &str, to: &str) -> Value {
        match value {
            Value::String(s) => Value::String(replace_dir(s, from, to)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.map(v, from, to)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.map(v, from, to)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// `text` with `from` replaced by `to` where it is a whole directory: at
/// the end of the text or followed by `/` (so `/w` does not match `/work`).
fn replace_dir(text: &str, from: &str, to: &str) -> String {
    if from.is_empty() || from == to {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let after = &rest[at + from.len()..];
        out.push_str(&rest[..at]);
        if after.is_empty() || after.starts_with('/') {
            out.push_str(to);
        } else {
            out.push_str(from);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_name_the_scratch_tree_and_results_the_recorded_one() {
        let map = PathMap::new("/w/repo", "/tmp/scratch/tree/");
        let input =
            json!({"file_path": "/w/repo/a.txt", "command": "cat /w/repo2/x /w/repo", "n": 1});
        assert_eq!(
            map.to_scratch(&input),
            json!({"file_path": "/tmp/scratch/tree/a.txt", "command": "cat /w/repo2/x /tmp/scratch/tree", "n": 1})
        );
        assert_eq!(
            map.to_recorded("File created at: /tmp/scratch/tree/a.txt"),
            "File created at: /w/repo/a.txt"
        );
    }
}
