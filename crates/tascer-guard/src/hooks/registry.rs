//! [`HookRegistry`]: the hooks of a session, by event and matcher, with
//! priority, timeout and fail-closed options.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tascer_core::HookEvent;

use super::command::CommandHook;
use super::config;
use super::error::{HookConfigError, HookError};
use super::handler::{FnHook, Hook};
use super::input::HookInput;
use super::matcher::Matcher;
use super::output::HookOutput;
use super::registered::{HookHandler, HookOptions, RegisteredHook};

/// The hooks of a session. Build it with [`HookRegistry::builder`] or
/// [`HookRegistry::from_settings`]; hand it to a
/// [`HookRunner`](super::HookRunner).
#[derive(Debug, Clone, Default)]
pub struct HookRegistry {
    hooks: Vec<RegisteredHook>,
    warnings: Vec<String>,
}

impl HookRegistry {
    /// An empty registry.
    pub fn new() -> HookRegistry {
        HookRegistry::default()
    }

    /// A builder for in-process hooks (and settings).
    pub fn builder() -> HookRegistryBuilder {
        HookRegistryBuilder::default()
    }

    /// Command hooks from a settings `hooks` value (Claude Code's shape:
    /// `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",
    /// "command":"…","timeout":30}]}]}` plus Tascer's `failClosed` and
    /// `priority`). `null` gives an empty registry. Commands run with
    /// `project_dir` as working directory.
    pub fn from_settings(
        value: &Value,
        project_dir: impl AsRef<Path>,
    ) -> Result<HookRegistry, HookConfigError> {
        let parsed = config::parse(value, project_dir.as_ref())?;
        let mut registry = HookRegistry::new();
        registry.warnings = parsed.warnings;
        for h in parsed.hooks {
            registry.push(h);
        }
        Ok(registry)
    }

    /// A plugin's command hooks (`hooks/hooks.json`'s `hooks` value, in
    /// the settings' shape, its `${CLAUDE_PLUGIN_ROOT}` already expanded):
    /// as [`from_settings`](Self::from_settings), but each hook runs with
    /// `CLAUDE_PLUGIN_ROOT` set to `plugin_root` and is named
    /// `plugin <plugin>: <command>` in its records.
    pub fn from_plugin(
        value: &Value,
        project_dir: impl AsRef<Path>,
        plugin: &str,
        plugin_root: &Path,
    ) -> Result<HookRegistry, HookConfigError> {
        let mut registry = HookRegistry::from_settings(value, project_dir)?;
        for hook in &mut registry.hooks {
            let name = format!("plugin {plugin}: {}", hook.name());
            hook.options.name = Some(name);
            if let HookHandler::Command(command) = &mut hook.handler {
                command.plugin_root = Some(plugin_root.to_path_buf());
            }
        }
        Ok(registry)
    }

    /// Adds a hook after the existing ones.
    pub fn push(&mut self, hook: RegisteredHook) {
        self.hooks.push(hook);
    }

    /// Appends another registry's hooks (and warnings) after these.
    pub fn extend(&mut self, other: HookRegistry) {
        self.hooks.extend(other.hooks);
        self.warnings.extend(other.warnings);
    }

    /// All hooks in registration order.
    pub fn hooks(&self) -> &[RegisteredHook] {
        &self.hooks
    }

    /// Number of hooks.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// True when there are no hooks.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// True when some hook is registered for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// Things in the settings that were skipped (unsupported hook types or
    /// events Tascer does not fire).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The hooks that run for `input`, in run order: ascending priority,
    /// registration order among equals.
    pub fn matching(&self, input: &HookInput) -> Vec<&RegisteredHook> {
        let event = input.event();
        let subject = input.matcher_subject();
        let mut hooks: Vec<&RegisteredHook> = self
            .hooks
            .iter()
            .filter(|h| h.event == event && h.matcher.matches(subject.as_deref()))
            .collect();
        hooks.sort_by_key(|h| h.options.priority);
        hooks
    }
}

/// Builds a [`HookRegistry`]. Invalid matchers are reported by
/// [`build`](HookRegistryBuilder::build).
#[derive(Default)]
pub struct HookRegistryBuilder {
    registry: HookRegistry,
    error: Option<HookConfigError>,
    counter: usize,
}

impl HookRegistryBuilder {
    /// Registers an async closure for `event` under `matcher` (`""` or
    /// `"*"` = all) with default options.
    pub fn on<F, Fut>(self, event: HookEvent, matcher: &str, f: F) -> Self
    where
        F: Fn(HookInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookOutput, HookError>> + Send + 'static,
    {
        self.on_with(event, matcher, HookOptions::default(), f)
    }

    /// Registers an async closure with options.
    pub fn on_with<F, Fut>(
        mut self,
        event: HookEvent,
        matcher: &str,
        options: HookOptions,
        f: F,
    ) -> Self
    where
        F: Fn(HookInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookOutput, HookError>> + Send + 'static,
    {
        self.counter += 1;
        let name = options
            .name
            .clone()
            .unwrap_or_else(|| format!("{event}[{matcher}]#{}", self.counter));
        self.add(
            event,
            matcher,
            options,
            HookHandler::InProcess(Arc::new(FnHook::new(name, f))),
        )
    }

    /// Registers a [`Hook`] with default options.
    pub fn hook(self, event: HookEvent, matcher: &str, hook: Arc<dyn Hook>) -> Self {
        self.hook_with(event, matcher, HookOptions::default(), hook)
    }

    /// Registers a [`Hook`] with options.
    pub fn hook_with(
        self,
        event: HookEvent,
        matcher: &str,
        options: HookOptions,
        hook: Arc<dyn Hook>,
    ) -> Self {
        self.add(event, matcher, options, HookHandler::InProcess(hook))
    }

    /// Registers a shell command hook running in `project_dir`.
    pub fn command(
        self,
        event: HookEvent,
        matcher: &str,
        command: impl Into<String>,
        project_dir: impl AsRef<Path>,
        options: HookOptions,
    ) -> Self {
        let handler = HookHandler::Command(CommandHook {
            command: command.into(),
            project_dir: project_dir.as_ref().to_path_buf(),
            plugin_root: None,
        });
        self.add(event, matcher, options, handler)
    }

    /// Adds the command hooks of a settings `hooks` value (see
    /// [`HookRegistry::from_settings`]).
    pub fn settings(mut self, value: &Value, project_dir: impl AsRef<Path>) -> Self {
        match HookRegistry::from_settings(value, project_dir) {
            Ok(r) => self.registry.extend(r),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    fn add(
        mut self,
        event: HookEvent,
        matcher: &str,
        options: HookOptions,
        handler: HookHandler,
    ) -> Self {
        match Matcher::new(Some(matcher)) {
            Ok(matcher) => self.registry.push(RegisteredHook {
                event,
                matcher,
                handler,
                options,
            }),
            Err(source) => {
                self.error.get_or_insert(HookConfigError::BadMatcher {
                    event: event.to_string(),
                    matcher: matcher.to_string(),
                    source,
                });
            }
        }
        self
    }

    /// The registry, or the first configuration error.
    pub fn build(self) -> Result<HookRegistry, HookConfigError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.registry),
        }
    }
}
