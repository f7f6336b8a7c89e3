//! Runs the gates of one phase.

use std::time::{Duration, Instant};

use super::config::ValidationConfig;
use super::context::{GateContext, Phase};
use super::registry::GateRegistry;
use super::result::GateResult;

/// Runs configured gates from a registry.
#[derive(Debug, Clone)]
pub struct GateRunner {
    registry: GateRegistry,
}

impl GateRunner {
    /// A runner over `registry`.
    pub fn new(registry: GateRegistry) -> Self {
        GateRunner { registry }
    }

    /// The registry.
    pub fn registry(&self) -> &GateRegistry {
        &self.registry
    }

    /// Runs the `phase` gates configured for `ctx.tool_name`, in order, each
    /// under the tool's `timeout_ms`. A gate that times out or is unknown
    /// yields a failing result. Every gate runs even after one fails, so the
    /// record holds every result.
    pub async fn run(
        &self,
        phase: Phase,
        ctx: &GateContext,
        config: &ValidationConfig,
    ) -> Vec<GateResult> {
        let validation = config.for_tool(&ctx.tool_name);
        let timeout = Duration::from_millis(validation.timeout_ms);
        let mut results = Vec::new();
        for name in validation.gates(phase) {
            let started = Instant::now();
            let mut result = match self.registry.get(name) {
                None => GateResult::fail(name.as_str(), format!("unknown gate `{name}`")),
                Some(gate) => match tokio::time::timeout(timeout, gate.check(ctx)).await {
                    Ok(mut r) => {
                        name.clone_into(&mut r.gate);
                        r
                    }
                    Err(_) => GateResult::fail(
                        name.as_str(),
                        format!("gate timed out after {} ms", validation.timeout_ms),
                    ),
                },
            };
            result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            tracing::debug!(gate = %result.gate, passed = result.passed, "gate ran");
            results.push(result);
        }
        results
    }
}
