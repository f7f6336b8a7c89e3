//! What can go wrong setting telemetry up.

/// Why telemetry is off although something configured it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// A variable or setting has a value that cannot be used.
    #[error("{name}: {message}")]
    Invalid {
        /// The variable or settings key.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// This build has no exporters (the `otel` cargo feature is off).
    #[error(
        "{0} is set, but this tascer was built without OpenTelemetry (cargo feature `otel`); nothing is exported"
    )]
    NotBuilt(String),
    /// The SDK refused the exporter.
    #[error("cannot set up the OTLP {signal} exporter: {message}")]
    Exporter {
        /// `traces`, `metrics` or `logs`.
        signal: &'static str,
        /// The SDK's message.
        message: String,
    },
    /// The thread that builds spans from the loop's facts could not start.
    #[error("cannot start the telemetry thread: {0}")]
    Thread(String),
}
