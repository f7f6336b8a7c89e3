//! In-process hooks: the [`Hook`] trait and [`FnHook`], which turns an
//! async closure into a hook.

use std::fmt;
use std::future::Future;

use futures::future::BoxFuture;

use super::error::HookError;
use super::input::HookInput;
use super::output::HookOutput;

/// A hook that runs inside the process.
///
/// Return [`HookOutput`] (e.g. [`HookOutput::deny`], [`HookOutput::block`],
/// [`HookOutput::context`]) to act, `Ok(HookOutput::default())` to stay
/// out of the way, or an error to report a failure (isolated unless the
/// hook is registered fail-closed). Must not panic.
pub trait Hook: Send + Sync {
    /// Name used in records and logs.
    fn name(&self) -> &str;
    /// Runs the hook.
    fn call<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookOutput, HookError>>;
}

/// A [`Hook`] made from an async closure that takes the input by value.
pub struct FnHook<F> {
    name: String,
    f: F,
}

impl<F> FnHook<F> {
    /// Wraps a closure `Fn(HookInput) -> impl Future<Output =
    /// Result<HookOutput, HookError>>`.
    pub fn new(name: impl Into<String>, f: F) -> FnHook<F> {
        FnHook {
            name: name.into(),
            f,
        }
    }
}

impl<F> fmt::Debug for FnHook<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHook").field("name", &self.name).finish()
    }
}

impl<F, Fut> Hook for FnHook<F>
where
    F: Fn(HookInput) -> Fut + Send + Sync,
    Fut: Future<Output = Result<HookOutput, HookError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn call<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookOutput, HookError>> {
        Box::pin((self.f)(input.clone()))
    }
}
