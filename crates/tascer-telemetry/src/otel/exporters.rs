//! The OTLP exporters of each signal, over HTTP/protobuf or gRPC, with the
//! endpoint, headers and timeout the configuration resolved (programmatic
//! values: the exporters' own reading of the variables is overridden).

use opentelemetry_otlp::{
    LogExporter, MetricExporter, SpanExporter, WithExportConfig, WithHttpConfig, WithTonicConfig,
};

use crate::config::{Protocol, Signal, SignalConfig};
use crate::error::TelemetryError;

/// The span exporter `config` describes.
pub(crate) fn spans(config: &SignalConfig) -> Result<SpanExporter, TelemetryError> {
    let built = match config.protocol {
        Protocol::HttpProtobuf => http(SpanExporter::builder().with_http(), config).build(),
        Protocol::Grpc => grpc(SpanExporter::builder().with_tonic(), config)?.build(),
    };
    built.map_err(|e| exporter_error(Signal::Traces, e))
}

/// The metric exporter `config` describes.
pub(crate) fn metrics(config: &SignalConfig) -> Result<MetricExporter, TelemetryError> {
    let built = match config.protocol {
        Protocol::HttpProtobuf => http(MetricExporter::builder().with_http(), config).build(),
        Protocol::Grpc => grpc(MetricExporter::builder().with_tonic(), config)?.build(),
    };
    built.map_err(|e| exporter_error(Signal::Metrics, e))
}

/// The log exporter `config` describes.
pub(crate) fn logs(config: &SignalConfig) -> Result<LogExporter, TelemetryError> {
    let built = match config.protocol {
        Protocol::HttpProtobuf => http(LogExporter::builder().with_http(), config).build(),
        Protocol::Grpc => grpc(LogExporter::builder().with_tonic(), config)?.build(),
    };
    built.map_err(|e| exporter_error(Signal::Logs, e))
}

/// An HTTP/protobuf exporter builder set to `config`'s endpoint, timeout
/// and headers.
fn http<B: WithExportConfig + WithHttpConfig>(builder: B, config: &SignalConfig) -> B {
    builder
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(&config.endpoint)
        .with_timeout(config.timeout)
        .with_headers(config.headers.clone().into_iter().collect())
}

/// A gRPC exporter builder set to `config`'s endpoint, timeout and
/// headers (as metadata).
fn grpc<B: WithExportConfig + WithTonicConfig>(
    builder: B,
    config: &SignalConfig,
) -> Result<B, TelemetryError> {
    Ok(builder
        .with_endpoint(&config.endpoint)
        .with_timeout(config.timeout)
        .with_metadata(metadata(config)?))
}

/// The headers as gRPC metadata.
fn metadata(config: &SignalConfig) -> Result<tonic::metadata::MetadataMap, TelemetryError> {
    let mut map = tonic::metadata::MetadataMap::new();
    for (key, value) in &config.headers {
        let invalid = |what: &str| TelemetryError::Invalid {
            name: "OTLP headers".into(),
            message: format!("{key:?} is not a valid gRPC metadata {what}"),
        };
        let name = tonic::metadata::MetadataKey::from_bytes(key.to_ascii_lowercase().as_bytes())
            .map_err(|_| invalid("key"))?;
        let value = value.parse().map_err(|_| invalid("value"))?;
        map.insert(name, value);
    }
    Ok(map)
}

fn exporter_error(signal: Signal, error: impl std::fmt::Display) -> TelemetryError {
    TelemetryError::Exporter {
        signal: signal.name(),
        message: error.to_string(),
    }
}
