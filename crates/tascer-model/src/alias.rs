//! Model aliases (`sonnet`, `opus`, `haiku`, and their `-latest` forms)
//! and model ids spelled for the provider they go to: Anthropic's
//! `claude-sonnet-4-5` is OpenRouter's `anthropic/claude-sonnet-4.5`.

use crate::config::{ProviderConfig, ProviderKind};

/// The aliases: (alias, Anthropic id, OpenRouter id).
pub const MODEL_ALIASES: &[(&str, &str, &str)] = &[
    ("sonnet", "claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"),
    ("opus", "claude-opus-4-5", "anthropic/claude-opus-4.5"),
    ("haiku", "claude-haiku-4-5", "anthropic/claude-haiku-4.5"),
];

/// The alias row `model` names: `sonnet`, `sonnet-latest` or
/// `claude-sonnet-latest` (any case).
fn alias(model: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let lower = model.trim().to_ascii_lowercase();
    let bare = lower.strip_suffix("-latest").unwrap_or(&lower);
    let bare = if lower.ends_with("-latest") {
        bare.strip_prefix("claude-").unwrap_or(bare)
    } else {
        bare
    };
    MODEL_ALIASES.iter().find(|(name, _, _)| *name == bare)
}

/// An Anthropic id as OpenRouter spells it: `claude-sonnet-4-5` →
/// `anthropic/claude-sonnet-4.5`, `claude-3-5-haiku-20241022` →
/// `anthropic/claude-3.5-haiku` (version numbers joined by a dot, the date
/// left out).
fn openrouter_id(model: &str) -> String {
    let mut parts: Vec<&str> = model.split('-').collect();
    if parts
        .last()
        .is_some_and(|p| p.len() == 8 && p.bytes().all(|b| b.is_ascii_digit()))
    {
        parts.pop();
    }
    let number = |p: &str| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit());
    let mut out = String::from("anthropic/");
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let joined = number(parts[i - 1]) && number(part);
            out.push(if joined { '.' } else { '-' });
        }
        out.push_str(part);
    }
    out
}

impl ProviderConfig {
    /// The id to send for `model` on this provider: an alias becomes the
    /// provider's id (`sonnet` → `claude-sonnet-4-5` on Anthropic,
    /// `anthropic/claude-sonnet-4.5` on OpenRouter); an Anthropic id is
    /// spelled OpenRouter's way on OpenRouter and an OpenRouter
    /// `anthropic/…` id Anthropic's way on Anthropic. Other OpenAI-compatible
    /// servers get `model` unchanged (they may know their own aliases).
    pub fn resolve_model(&self, model: &str) -> String {
        let trimmed = model.trim();
        match (self.kind, self.openrouter, alias(trimmed)) {
            (ProviderKind::Anthropic, _, Some((_, id, _))) => (*id).to_string(),
            (ProviderKind::OpenAi, true, Some((_, _, id))) => (*id).to_string(),
            (ProviderKind::Anthropic, _, None) => match trimmed.strip_prefix("anthropic/") {
                Some(rest) => rest.replace('.', "-"),
                None => trimmed.to_string(),
            },
            (ProviderKind::OpenAi, true, None) if trimmed.starts_with("claude-") => {
                openrouter_id(trimmed)
            }
            _ => trimmed.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_per_provider() {
        let anthropic = ProviderConfig::anthropic();
        let router = ProviderConfig::openrouter();
        let openai = ProviderConfig::openai();
        for name in ["sonnet", "Sonnet", "sonnet-latest", "claude-sonnet-latest"] {
            assert_eq!(anthropic.resolve_model(name), "claude-sonnet-4-5", "{name}");
            assert_eq!(router.resolve_model(name), "anthropic/claude-sonnet-4.5");
            assert_eq!(openai.resolve_model(name), name);
        }
        assert_eq!(anthropic.resolve_model("opus"), "claude-opus-4-5");
        assert_eq!(
            router.resolve_model("haiku-latest"),
            "anthropic/claude-haiku-4.5"
        );
        assert_eq!(anthropic.resolve_model("sonnets"), "sonnets");
    }

    #[test]
    fn ids_are_spelled_for_the_provider() {
        let anthropic = ProviderConfig::anthropic();
        let router = ProviderConfig::openrouter();
        assert_eq!(
            anthropic.resolve_model("anthropic/claude-sonnet-4.5"),
            "claude-sonnet-4-5"
        );
        assert_eq!(
            anthropic.resolve_model("claude-opus-4-1-20250805"),
            "claude-opus-4-1-20250805"
        );
        assert_eq!(
            router.resolve_model("claude-sonnet-4-5"),
            "anthropic/claude-sonnet-4.5"
        );
        assert_eq!(
            router.resolve_model("claude-3-5-haiku-20241022"),
            "anthropic/claude-3.5-haiku"
        );
        assert_eq!(
            router.resolve_model("claude-sonnet-4"),
            "anthropic/claude-sonnet-4"
        );
        assert_eq!(router.resolve_model("openai/gpt-4o"), "openai/gpt-4o");
        assert_eq!(ProviderConfig::openai().resolve_model("gpt-4o"), "gpt-4o");
    }
}
