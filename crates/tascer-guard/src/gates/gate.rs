//! The gate trait and the closure adapter.

use std::future::Future;

use futures::FutureExt;
use futures::future::BoxFuture;

use super::context::GateContext;
use super::result::GateResult;

/// A validation check run before or after a tool call.
///
/// A gate reports its own failures as a failing [`GateResult`]; it never
/// panics. The runner fills in `duration_ms` and enforces the timeout.
pub trait Gate: Send + Sync {
    /// The gate's name, as used in the configuration.
    fn name(&self) -> &str;
    /// Runs the check.
    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult>;
}

type GateFn = dyn for<'a> Fn(&'a GateContext) -> BoxFuture<'a, GateResult> + Send + Sync;

/// A gate made from a closure; see [`super::GateRegistry::register_fn`].
pub struct FnGate {
    name: String,
    f: Box<GateFn>,
}

impl FnGate {
    /// Wraps `f`, a closure taking an owned copy of the context and
    /// returning a future of the result.
    pub fn new<F, Fut>(name: impl Into<String>, f: F) -> Self
    where
        F: Fn(GateContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = GateResult> + Send + 'static,
    {
        FnGate {
            name: name.into(),
            f: Box::new(move |ctx: &GateContext| f(ctx.clone()).boxed()),
        }
    }
}

impl std::fmt::Debug for FnGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnGate").field("name", &self.name).finish()
    }
}

impl Gate for FnGate {
    fn name(&self) -> &str {
        &self.name
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        (self.f)(ctx)
    }
}
