//! The OpenTelemetry SDK set up from a [`TelemetryConfig`]: a tracer,
//! meter and logger provider, each with a batching exporter (a background
//! thread sends), a thread that builds the spans from the facts the loop
//! queues (the loop only copies and queues), and their shutdown at exit
//! with a bounded deadline.

mod exporters;
mod ids;
mod observer;
mod queue;
mod signals;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::LoggerProvider as _;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tascer_core::observe::Observer;

use crate::config::TelemetryConfig;
use crate::error::TelemetryError;
use observer::OtelObserver;
use queue::{QueueWorker, QueuedObserver};
use signals::Signals;

/// The instrumentation scope's name.
const SCOPE: &str = "tascer";

/// Running telemetry: the providers and the observer that feeds them.
/// [`shutdown`](Self::shutdown) sends what is queued.
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    logger: Option<SdkLoggerProvider>,
    observer: Arc<QueuedObserver>,
    worker: QueueWorker,
    shutdown_timeout: Duration,
    endpoints: String,
}

impl Telemetry {
    /// Sets up the exporters `config` names. `host` is `tascer` (the loop)
    /// or `claude-code` (`tascer hook`). Must run inside a Tokio runtime
    /// when a signal uses gRPC.
    pub fn start(config: &TelemetryConfig, host: &str) -> Result<Telemetry, TelemetryError> {
        let resource = Resource::builder_empty()
            .with_attributes(
                config
                    .resource
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let tracer = match &config.traces {
            Some(c) => Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporters::spans(c)?)
                    .with_id_generator(ids::Ids::default())
                    .with_resource(resource.clone())
                    .build(),
            ),
            None => None,
        };
        let meter = match &config.metrics {
            Some(c) => Some(
                SdkMeterProvider::builder()
                    .with_periodic_exporter(exporters::metrics(c)?)
                    .with_resource(resource.clone())
                    .build(),
            ),
            None => None,
        };
        let logger = match &config.logs {
            Some(c) => Some(
                SdkLoggerProvider::builder()
                    .with_batch_exporter(exporters::logs(c)?)
                    .with_resource(resource)
                    .build(),
            ),
            None => None,
        };
        let signals = Signals::new(
            meter.as_ref().map(|m| m.meter(SCOPE)),
            logger.as_ref().map(|l| l.logger(SCOPE)),
        );
        let observer = OtelObserver::new(tracer.as_ref().map(|t| t.tracer(SCOPE)), signals, host);
        // The spans are built off the loop's thread: a tool call only
        // queues its facts.
        let (observer, worker) =
            queue::start(Box::new(observer)).map_err(|e| TelemetryError::Thread(e.to_string()))?;
        let endpoints = [&config.traces, &config.metrics, &config.logs]
            .into_iter()
            .flatten()
            .map(|s| s.endpoint.clone())
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Telemetry {
            tracer,
            meter,
            logger,
            observer: Arc::new(observer),
            worker,
            shutdown_timeout: config.shutdown_timeout,
            endpoints,
        })
    }

    /// The observer to give the loop or a host.
    pub fn observer(&self) -> Arc<dyn Observer> {
        Arc::clone(&self.observer) as Arc<dyn Observer>
    }

    /// Sends what is queued and stops the exporters, waiting at most the
    /// configured shutdown timeout (a collector that is down or slow never
    /// holds the process). The warning to show, once, when something was
    /// not delivered.
    pub fn shutdown(self) -> Option<String> {
        let Telemetry {
            tracer,
            meter,
            logger,
            observer,
            worker,
            shutdown_timeout,
            endpoints,
        } = self;
        drop(observer);
        let (tx, rx) = mpsc::channel();
        // The providers shut down on a thread of their own: an export in
        // flight may block for its own timeout, and the caller waits only
        // until the deadline.
        let spawned = std::thread::Builder::new()
            .name("tascer-otel-shutdown".into())
            .spawn(move || {
                let mut failed = Vec::new();
                let dropped = worker.finish();
                if dropped > 0 {
                    failed.push(format!(
                        "{dropped} facts dropped: the telemetry queue was full"
                    ));
                }
                if let Some(t) = tracer
                    && let Err(e) = t.shutdown()
                {
                    failed.push(format!("traces: {e}"));
                }
                if let Some(m) = meter
                    && let Err(e) = m.shutdown()
                {
                    failed.push(format!("metrics: {e}"));
                }
                if let Some(l) = logger
                    && let Err(e) = l.shutdown()
                {
                    failed.push(format!("logs: {e}"));
                }
                let _ = tx.send(failed);
            });
        if let Err(e) = spawned {
            return Some(format!("telemetry: cannot flush the last batch: {e}"));
        }
        match rx.recv_timeout(shutdown_timeout) {
            Ok(failed) if failed.is_empty() => None,
            Ok(failed) => Some(format!(
                "telemetry: not everything reached {endpoints} ({}); going on",
                failed.join("; ")
            )),
            Err(_) => Some(format!(
                "telemetry: {endpoints} did not take the last batch within {} ms; going on without it",
                shutdown_timeout.as_millis()
            )),
        }
    }
}
