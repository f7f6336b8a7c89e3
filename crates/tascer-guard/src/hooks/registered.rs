//! [`RegisteredHook`]: one hook of a registry — its event, matcher, how it
//! runs and its options (priority, timeout, fail-closed). Shared by the
//! registry and the settings parser that fills it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tascer_core::HookEvent;

use super::command::CommandHook;
use super::handler::Hook;
use super::matcher::Matcher;

/// Default per-hook timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Options of one registered hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOptions {
    /// Name for records (default: the command line, or `Hook::name`).
    pub name: Option<String>,
    /// Lower runs first; equal priorities keep registration order.
    pub priority: i32,
    /// Time limit; the hook is killed / abandoned after it.
    pub timeout: Duration,
    /// When true, a failure of this hook is not isolated but treated as
    /// the most restrictive effect (see [`HookEffect::FailedClosed`](super::HookEffect::FailedClosed)).
    pub fail_closed: bool,
}

impl Default for HookOptions {
    fn default() -> Self {
        HookOptions {
            name: None,
            priority: 0,
            timeout: DEFAULT_TIMEOUT,
            fail_closed: false,
        }
    }
}

impl HookOptions {
    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Marks the hook fail-closed.
    pub fn fail_closed(mut self, fail_closed: bool) -> Self {
        self.fail_closed = fail_closed;
        self
    }
}

/// How a registered hook runs.
#[derive(Clone)]
#[non_exhaustive]
pub enum HookHandler {
    /// A shell command.
    Command(CommandHook),
    /// An in-process hook.
    InProcess(Arc<dyn Hook>),
}

impl fmt::Debug for HookHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookHandler::Command(c) => f.debug_tuple("Command").field(&c.command).finish(),
            HookHandler::InProcess(h) => f.debug_tuple("InProcess").field(&h.name()).finish(),
        }
    }
}

/// One hook in the registry.
#[derive(Debug, Clone)]
pub struct RegisteredHook {
    /// Its event.
    pub event: HookEvent,
    /// Its matcher.
    pub matcher: Matcher,
    /// How it runs.
    pub handler: HookHandler,
    /// Its options.
    pub options: HookOptions,
}

impl RegisteredHook {
    /// The name used in records.
    pub fn name(&self) -> String {
        if let Some(n) = &self.options.name {
            return n.clone();
        }
        match &self.handler {
            HookHandler::Command(c) => c.command.clone(),
            HookHandler::InProcess(h) => h.name().to_string(),
        }
    }
}
