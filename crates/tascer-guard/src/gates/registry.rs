//! Gates by name: built-ins plus user gates.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use super::builtin::{self, BuiltinOptions};
use super::config::ValidationConfig;
use super::context::GateContext;
use super::error::GateError;
use super::gate::{FnGate, Gate};
use super::result::GateResult;

/// Holds gates by name.
#[derive(Clone, Default)]
pub struct GateRegistry {
    gates: BTreeMap<String, Arc<dyn Gate>>,
}

impl std::fmt::Debug for GateRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateRegistry")
            .field("gates", &self.gates.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl GateRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        GateRegistry::default()
    }

    /// A registry holding every built-in gate, configured by `options`.
    pub fn with_builtins(options: &BuiltinOptions) -> Result<Self, GateError> {
        let mut registry = GateRegistry::new();
        for gate in builtin::all(options)? {
            registry.register_arc(gate);
        }
        Ok(registry)
    }

    /// Registers a gate under its own name, replacing any gate of that name.
    pub fn register<G: Gate + 'static>(&mut self, gate: G) -> &mut Self {
        self.register_arc(Arc::new(gate))
    }

    /// Registers a shared gate under its own name.
    pub fn register_arc(&mut self, gate: Arc<dyn Gate>) -> &mut Self {
        self.gates.insert(gate.name().to_string(), gate);
        self
    }

    /// Registers `gate` under another name as well (e.g. an alias).
    pub fn alias(&mut self, alias: impl Into<String>, target: &str) -> &mut Self {
        if let Some(g) = self.gates.get(target).cloned() {
            self.gates.insert(alias.into(), g);
        }
        self
    }

    /// Registers a closure gate: `register_fn("x", |ctx| async move { .. })`.
    pub fn register_fn<F, Fut>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: Fn(GateContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = GateResult> + Send + 'static,
    {
        self.register(FnGate::new(name, f))
    }

    /// The gate named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Gate>> {
        self.gates.get(name).cloned()
    }

    /// Every registered name.
    pub fn names(&self) -> Vec<&str> {
        self.gates.keys().map(String::as_str).collect()
    }

    /// Checks that every gate `config` names is registered; the error names
    /// the first unknown gate and where it is configured.
    pub fn validate(&self, config: &ValidationConfig) -> Result<(), GateError> {
        for (name, location) in config.gate_names() {
            if !self.gates.contains_key(&name) {
                return Err(GateError::UnknownGate { name, location });
            }
        }
        Ok(())
    }
}
