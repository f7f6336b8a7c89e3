//! Token usage and cost.

use serde::{Deserialize, Serialize};

/// Token usage of one model call or of a whole run, with the field names of
/// the Anthropic Messages API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from or written to the prompt cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }

    /// All input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
    }
}

/// Per-model usage in a result frame (`modelUsage`), camelCase as on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache-read input tokens.
    pub cache_read_input_tokens: u64,
    /// Cache-creation input tokens.
    pub cache_creation_input_tokens: u64,
    /// Web search requests made by the model.
    pub web_search_requests: u64,
    /// Cost in US dollars.
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
}

impl ModelUsage {
    /// Adds one call's usage and cost.
    pub fn add(&mut self, usage: &Usage, cost_usd: f64) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_read_input_tokens += usage.cache_read_input_tokens;
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens;
        self.cost_usd += cost_usd;
    }
}

/// A cost for people: `$0.0123`; with models whose cost is unknown,
/// `unknown (no price for m)` when nothing else was spent, else
/// `at least $0.0123 (no price for m)`.
pub fn format_cost(usd: f64, unpriced_models: &[String]) -> String {
    if unpriced_models.is_empty() {
        return format!("${usd:.4}");
    }
    let models = unpriced_models.join(", ");
    if usd > 0.0 {
        format!("at least ${usd:.4} (no price for {models})")
    } else {
        format!("unknown (no price for {models})")
    }
}

#[cfg(test)]
mod format_tests {
    use super::format_cost;

    #[test]
    fn unknown_costs_are_never_shown_as_zero() {
        assert_eq!(format_cost(0.0, &[]), "$0.0000");
        assert_eq!(format_cost(0.01234, &[]), "$0.0123");
        let m = vec!["x/y".to_string()];
        assert_eq!(format_cost(0.0, &m), "unknown (no price for x/y)");
        assert_eq!(format_cost(0.5, &m), "at least $0.5000 (no price for x/y)");
    }
}
