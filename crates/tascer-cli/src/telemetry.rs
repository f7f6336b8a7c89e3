//! OpenTelemetry for `tascer run` and `tascer hook` (docs/telemetry.md):
//! the configuration read, the exporters started (cargo feature `otel`),
//! and at exit the last batch sent within its deadline. What could not be
//! honoured is one warning line on standard error; the session goes on.

use std::sync::Arc;

use tascer::Options;
use tascer::observe::Observer;
use tascer_telemetry::{Telemetry, TelemetryConfig};

/// Running telemetry; dropping it sends the last batch (bounded wait).
#[derive(Default)]
pub struct Running {
    telemetry: Option<Telemetry>,
}

impl Running {
    /// The observer to give the session or the hook host, if telemetry
    /// is on.
    pub fn observer(&self) -> Option<Arc<dyn Observer>> {
        self.telemetry.as_ref().map(Telemetry::observer)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(warning) = self.telemetry.take().and_then(Telemetry::shutdown) {
            eprintln!("tascer: {warning}");
        }
    }
}

/// Starts telemetry as the environment and the settings `options` read
/// configure it, for `host` (`tascer` or `claude-code`).
pub fn start(options: &Options, host: &str) -> Running {
    match configured(options) {
        Some(config) => start_with(&config, host),
        None => Running::default(),
    }
}

/// What the environment and the settings `options` read configure;
/// `None` when telemetry is off (a configuration that cannot be used is
/// said once).
fn configured(options: &Options) -> Option<TelemetryConfig> {
    // A settings file that cannot be read is the session's error to report.
    let settings = tascer::observe::telemetry_settings(options).unwrap_or_default();
    let env = |name: &str| std::env::var(name).ok();
    match TelemetryConfig::resolve(&env, &settings) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("tascer: telemetry is off: {err}");
            None
        }
    }
}

fn start_with(config: &TelemetryConfig, host: &str) -> Running {
    for warning in &config.warnings {
        eprintln!("tascer: telemetry: {warning}");
    }
    match Telemetry::start(config, host) {
        Ok(telemetry) => Running {
            telemetry: Some(telemetry),
        },
        Err(err) => {
            eprintln!("tascer: telemetry is off: {err}");
            Running::default()
        }
    }
}

/// Telemetry for `tascer hook` (the hook server, or an event answered in
/// its own process): the environment and the user's settings
/// (`$TASCER_HOME/settings.json`) configure it; the spans carry Claude
/// Code's `session_id` and `tool_use_id`. Returns the runtime the gRPC
/// exporter runs on (kept until the telemetry is dropped).
pub fn start_for_hook() -> (Option<tokio::runtime::Runtime>, Running) {
    let options = Options {
        setting_sources: vec![tascer::guard::settings::SettingsSource::User],
        ..Options::default()
    };
    let Some(config) = configured(&options) else {
        return (None, Running::default());
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("tascer-otel")
        .enable_all()
        .build()
        .ok();
    let _entered = runtime.as_ref().map(tokio::runtime::Runtime::enter);
    let running = start_with(&config, "claude-code");
    if let Some(observer) = running.observer() {
        tascer_claude::observe::set_observer(observer);
    }
    (runtime, running)
}
