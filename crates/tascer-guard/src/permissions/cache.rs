//! The decision cache.
//!
//! Keys are the tool name plus the canonical JSON (keys sorted) of the
//! input exactly as it would run; a decision that rewrote the input is never
//! stored. The cache is cleared when the mode or the session rules change.

use std::collections::HashMap;

use parking_lot::Mutex;
use serde_json::Value;

use super::decision::PermissionDecision;

const CAPACITY: usize = 4096;

/// Identical-input decision cache.
#[derive(Debug, Default)]
pub(crate) struct DecisionCache {
    map: Mutex<HashMap<String, PermissionDecision>>,
}

impl DecisionCache {
    pub(crate) fn get(&self, key: &str) -> Option<PermissionDecision> {
        self.map.lock().get(key).cloned()
    }

    pub(crate) fn put(&self, key: String, decision: &PermissionDecision) {
        if decision.updated_input.is_some() {
            return;
        }
        let mut map = self.map.lock();
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(key, decision.clone());
    }

    pub(crate) fn clear(&self) {
        self.map.lock().clear();
    }
}

/// The cache key of a call.
pub(crate) fn cache_key(tool: &str, input: &Value) -> String {
    let mut out = String::with_capacity(64);
    out.push_str(tool);
    out.push('\n');
    write_canonical(input, &mut out);
    out
}

/// Canonical JSON: object keys sorted, no insignificant whitespace.
pub(crate) fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                if let Some(inner) = map.get(*k) {
                    write_canonical(inner, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
