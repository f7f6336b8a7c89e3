//! Per-model prices and cost computation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tascer_core::Usage;

use crate::error::ModelError;

/// Price of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Uncached input tokens.
    pub input_per_mtok: f64,
    /// Output tokens.
    pub output_per_mtok: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write_per_mtok: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read_per_mtok: f64,
}

impl Price {
    /// A price with explicit cache rates.
    pub const fn new(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Self {
        Price {
            input_per_mtok: input,
            output_per_mtok: output,
            cache_write_per_mtok: cache_write,
            cache_read_per_mtok: cache_read,
        }
    }

    /// The cost of `usage` at this price, USD.
    pub fn cost_usd(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_mtok
            + usage.output_tokens as f64 * self.output_per_mtok
            + usage.cache_creation_input_tokens as f64 * self.cache_write_per_mtok
            + usage.cache_read_input_tokens as f64 * self.cache_read_per_mtok)
            / 1_000_000.0
    }
}

/// Anthropic price: cache writes cost 1.25× input, cache reads 0.1× input.
const fn claude(input: f64, output: f64) -> Price {
    Price::new(input, output, input * 1.25, input * 0.1)
}

/// Default prices. OpenAI has no cache-write surcharge, so cache writes are
/// priced as input.
const DEFAULTS: &[(&str, Price)] = &[
    ("claude-opus-4", claude(15.0, 75.0)),
    ("claude-opus-4-5", claude(5.0, 25.0)),
    ("claude-opus-4-6", claude(5.0, 25.0)),
    ("claude-sonnet-4", claude(3.0, 15.0)),
    ("claude-haiku-4", claude(1.0, 5.0)),
    ("claude-3-opus", claude(15.0, 75.0)),
    ("claude-3-7-sonnet", claude(3.0, 15.0)),
    ("claude-3-5-sonnet", claude(3.0, 15.0)),
    ("claude-3-5-haiku", claude(0.8, 4.0)),
    ("claude-3-haiku", claude(0.25, 1.25)),
    ("gpt-4o", Price::new(2.5, 10.0, 2.5, 1.25)),
    ("gpt-4o-mini", Price::new(0.15, 0.6, 0.15, 0.075)),
    ("gpt-4.1", Price::new(2.0, 8.0, 2.0, 0.5)),
    ("gpt-4.1-mini", Price::new(0.4, 1.6, 0.4, 0.1)),
    ("gpt-4.1-nano", Price::new(0.1, 0.4, 0.1, 0.025)),
    ("gpt-5", Price::new(1.25, 10.0, 1.25, 0.125)),
    ("gpt-5-mini", Price::new(0.25, 2.0, 0.25, 0.025)),
    ("gpt-5-nano", Price::new(0.05, 0.4, 0.05, 0.005)),
    ("o3", Price::new(2.0, 8.0, 2.0, 0.5)),
    ("o3-mini", Price::new(1.1, 4.4, 1.1, 0.55)),
    ("o4-mini", Price::new(1.1, 4.4, 1.1, 0.275)),
    // Common OpenRouter ids without an Anthropic or OpenAI name (those are
    // priced through their native names, see `PriceTable::price_for`).
    ("google/gemini-2.5-pro", Price::new(1.25, 10.0, 1.25, 0.31)),
    ("google/gemini-2.5-flash", Price::new(0.3, 2.5, 0.3, 0.075)),
];

/// The zero price of OpenRouter's free variants (`…:free`).
const FREE: Price = Price::new(0.0, 0.0, 0.0, 0.0);

/// Prices keyed by model-name prefix; the longest matching prefix wins, so
/// `claude-sonnet-4` prices `claude-sonnet-4-5-20250929`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

impl PriceTable {
    /// An empty table: every model costs 0.
    pub fn empty() -> Self {
        PriceTable::default()
    }

    /// The built-in table of current Claude and OpenAI models.
    pub fn with_defaults() -> Self {
        let mut table = PriceTable::empty();
        for (prefix, price) in DEFAULTS {
            table.set(prefix, *price);
        }
        table
    }

    /// Sets (or replaces) the price for models starting with `model_prefix`.
    pub fn set(&mut self, model_prefix: &str, price: Price) {
        match self.entries.iter_mut().find(|(p, _)| p == model_prefix) {
            Some(entry) => entry.1 = price,
            None => self.entries.push((model_prefix.to_string(), price)),
        }
    }

    /// The price of `model`: the entry with the longest prefix of it.
    /// An OpenRouter id (`vendor/model[:variant]`) is also looked up by
    /// the model's native name, with version dots as dashes
    /// (`anthropic/claude-sonnet-4.5` is priced as `claude-sonnet-4-5`,
    /// `openai/gpt-4.1-mini` as `gpt-4.1-mini`), the longest match winning;
    /// a `:free` variant costs 0.
    pub fn price_for(&self, model: &str) -> Option<Price> {
        if let Some((_, price)) = self.longest_prefix(model) {
            return Some(price);
        }
        let (id, variant) = model.split_once(':').unwrap_or((model, ""));
        if variant == "free" {
            return Some(FREE);
        }
        let native = id.split_once('/').map_or(id, |(_, rest)| rest);
        let dashed = native.replace('.', "-");
        [id, native, dashed.as_str()]
            .into_iter()
            .filter_map(|name| self.longest_prefix(name))
            .max_by_key(|(len, _)| *len)
            .map(|(_, price)| price)
    }

    /// The entry with the longest prefix of `model`: its length and price.
    fn longest_prefix(&self, model: &str) -> Option<(usize, Price)> {
        self.entries
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(prefix, price)| (prefix.len(), *price))
    }

    /// The cost of `usage` on `model`, USD; 0 for unknown models (see
    /// [`cost`](Self::cost) to tell them apart).
    pub fn cost_usd(&self, model: &str, usage: &Usage) -> f64 {
        self.cost(model, usage).unwrap_or(0.0)
    }

    /// The cost of `usage` on `model`, USD; `None` when the table has no
    /// price for it.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price_for(model).map(|p| p.cost_usd(usage))
    }

    /// Merges user overrides given as JSON:
    /// `{"model-prefix": {"input_per_mtok": 3, "output_per_mtok": 15, …}}`.
    /// Fields left out keep the value the prefix is priced at now (or 0).
    pub fn merge_json(&mut self, json: &str) -> Result<(), ModelError> {
        let invalid = |detail: String| ModelError::InvalidConfig(format!("price table: {detail}"));
        let map: Map<String, Value> =
            serde_json::from_str(json).map_err(|e| invalid(format!("not a JSON object: {e}")))?;
        let mut updates = Vec::with_capacity(map.len());
        for (prefix, value) in map {
            let Value::Object(fields) = value else {
                return Err(invalid(format!("price for {prefix:?} is not an object")));
            };
            let base = self
                .price_for(&prefix)
                .unwrap_or(Price::new(0.0, 0.0, 0.0, 0.0));
            let field = |name: &str, default: f64| -> Result<f64, ModelError> {
                match fields.get(name) {
                    None => Ok(default),
                    Some(v) => v
                        .as_f64()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| invalid(format!("{prefix}.{name} must be a number ≥ 0"))),
                }
            };
            if let Some(unknown) = fields.keys().find(|k| {
                !matches!(
                    k.as_str(),
                    "input_per_mtok"
                        | "output_per_mtok"
                        | "cache_write_per_mtok"
                        | "cache_read_per_mtok"
                )
            }) {
                return Err(invalid(format!("unknown field {prefix}.{unknown}")));
            }
            let price = Price::new(
                field("input_per_mtok", base.input_per_mtok)?,
                field("output_per_mtok", base.output_per_mtok)?,
                field("cache_write_per_mtok", base.cache_write_per_mtok)?,
                field("cache_read_per_mtok", base.cache_read_per_mtok)?,
            );
            updates.push((prefix, price));
        }
        for (prefix, price) in updates {
            self.set(&prefix, price);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn longest_prefix_wins() {
        let t = PriceTable::with_defaults();
        assert_eq!(t.price_for("gpt-4o-mini-2024-07-18"), Some(DEFAULTS[11].1));
        assert_eq!(
            t.price_for("gpt-4o-2024-08-06").map(|p| p.input_per_mtok),
            Some(2.5)
        );
        assert_eq!(
            t.price_for("claude-opus-4-1-20250805")
                .map(|p| p.input_per_mtok),
            Some(15.0)
        );
        assert_eq!(
            t.price_for("claude-opus-4-5-20251101")
                .map(|p| p.input_per_mtok),
            Some(5.0)
        );
        let sonnet = t.price_for("claude-sonnet-4-5-20250929").unwrap();
        assert!(close(sonnet.cache_write_per_mtok, 3.75));
        assert!(close(sonnet.cache_read_per_mtok, 0.30));
        assert_eq!(
            t.price_for("claude-3-5-haiku-latest")
                .map(|p| p.output_per_mtok),
            Some(4.0)
        );
        assert_eq!(t.price_for("o4-mini").map(|p| p.output_per_mtok), Some(4.4));
        assert_eq!(t.price_for("llama3"), None);
    }

    #[test]
    fn openrouter_ids_are_priced_by_their_native_names() {
        let t = PriceTable::with_defaults();
        let opus45 = t.price_for("claude-opus-4-5").unwrap();
        assert_eq!(t.price_for("anthropic/claude-opus-4.5"), Some(opus45));
        assert_eq!(
            t.price_for("anthropic/claude-sonnet-4.5"),
            t.price_for("claude-sonnet-4-5")
        );
        assert_eq!(
            t.price_for("anthropic/claude-3.5-haiku"),
            t.price_for("claude-3-5-haiku")
        );
        assert_eq!(
            t.price_for("openai/gpt-4.1-mini"),
            t.price_for("gpt-4.1-mini")
        );
        assert_eq!(t.price_for("openai/gpt-4o"), t.price_for("gpt-4o"));
        assert_eq!(
            t.price_for("google/gemini-2.5-pro")
                .map(|p| p.output_per_mtok),
            Some(10.0)
        );
        assert_eq!(
            t.price_for("meta-llama/llama-3.3-70b-instruct:free"),
            Some(FREE)
        );
        assert_eq!(
            t.price_for("anthropic/claude-sonnet-4.5:beta"),
            t.price_for("claude-sonnet-4-5")
        );
        assert_eq!(t.price_for("mistralai/mistral-large"), None);
        let usage = Usage {
            input_tokens: 10,
            ..Usage::default()
        };
        assert_eq!(t.cost("mistralai/mistral-large", &usage), None);
        assert!(t.cost("openai/gpt-4o", &usage).is_some_and(|c| c > 0.0));
    }

    #[test]
    fn cost() {
        let t = PriceTable::with_defaults();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
        };
        assert!(close(
            t.cost_usd("claude-sonnet-4-20250514", &usage),
            3.0 + 15.0 + 3.75 + 0.3
        ));
        assert!(close(t.cost_usd("unknown-model", &usage), 0.0));
    }

    #[test]
    fn merge_overrides() {
        let mut t = PriceTable::with_defaults();
        t.merge_json(r#"{"my-model": {"input_per_mtok": 1, "output_per_mtok": 2}, "claude-sonnet-4": {"output_per_mtok": 20}}"#)
            .unwrap();
        assert_eq!(
            t.price_for("my-model-7b"),
            Some(Price::new(1.0, 2.0, 0.0, 0.0))
        );
        let s = t.price_for("claude-sonnet-4").unwrap();
        assert!(close(s.output_per_mtok, 20.0) && close(s.input_per_mtok, 3.0));
        assert!(t.merge_json("[1]").is_err());
        assert!(t.merge_json(r#"{"x": {"input_per_mtok": "a"}}"#).is_err());
        assert!(t.merge_json(r#"{"x": {"inptu_per_mtok": 1}}"#).is_err());
    }
}
