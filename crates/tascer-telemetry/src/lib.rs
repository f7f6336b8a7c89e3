//! Tascer's OpenTelemetry (docs/telemetry.md): traces following the GenAI
//! semantic conventions, metrics and log events also under Claude Code's
//! names, sent over OTLP (HTTP/protobuf or gRPC) by batching exporters.
//!
//! - [`TelemetryConfig::resolve`]: what the `OTEL_*` variables and the
//!   settings' `telemetry` block configure (always compiled);
//! - [`Telemetry::start`] (cargo feature `otel`): the SDK and exporters,
//!   and the [`Observer`](tascer_core::observe::Observer) the loop
//!   (`tascer::Options::observer`) or a host reports to;
//! - [`names`]: every span, attribute, metric and event name emitted.
//!
//! The loop knows nothing of this crate: it reports plain facts
//! (`tascer_core::observe`) after each model call and tool call.

mod config;
mod error;
pub mod names;
#[cfg(feature = "otel")]
mod otel;

pub use config::{
    DEFAULT_EXPORT_TIMEOUT, DEFAULT_SERVICE_NAME, DEFAULT_SHUTDOWN_TIMEOUT, Protocol, Signal,
    SignalConfig, TelemetryConfig, key_values,
};
pub use error::TelemetryError;
#[cfg(feature = "otel")]
pub use otel::Telemetry;

/// Whether this build has the exporters (cargo feature `otel`).
pub const BUILT_IN: bool = cfg!(feature = "otel");

/// Running telemetry, in a build without the exporters: never made.
#[cfg(not(feature = "otel"))]
pub struct Telemetry {
    _never: std::convert::Infallible,
}

#[cfg(not(feature = "otel"))]
impl Telemetry {
    /// Always the error that says the exporters are not built in, naming
    /// what asked for them.
    pub fn start(config: &TelemetryConfig, _host: &str) -> Result<Telemetry, TelemetryError> {
        Err(TelemetryError::NotBuilt(config.source.clone()))
    }

    /// Never called (no value exists).
    pub fn observer(&self) -> std::sync::Arc<dyn tascer_core::observe::Observer> {
        match self._never {}
    }

    /// Never called (no value exists).
    pub fn shutdown(self) -> Option<String> {
        match self._never {}
    }
}
