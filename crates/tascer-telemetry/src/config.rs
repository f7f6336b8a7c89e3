//! What telemetry is configured, from the standard `OTEL_*` variables over
//! the settings' `telemetry` block ([`TelemetryConfig::resolve`]). Always
//! compiled: a build without exporters still knows it was asked for them.

use std::collections::BTreeMap;
use std::time::Duration;

use tascer_settings::{OtlpSignalSettings, TelemetrySettings};

use crate::error::TelemetryError;

/// How long one export may take unless configured (the OTLP default).
pub const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the last batch may take at exit unless configured.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);
/// `service.name` unless configured.
pub const DEFAULT_SERVICE_NAME: &str = "tascer";

/// An OTLP protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP/gRPC.
    Grpc,
    /// OTLP/HTTP with protobuf bodies (the default).
    HttpProtobuf,
}

/// One signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Spans.
    Traces,
    /// Metrics.
    Metrics,
    /// Log events.
    Logs,
}

impl Signal {
    /// `traces`, `metrics`, `logs`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Traces => "traces",
            Signal::Metrics => "metrics",
            Signal::Logs => "logs",
        }
    }

    /// `TRACES`, `METRICS`, `LOGS` (as in the variables' names).
    fn upper(self) -> &'static str {
        match self {
            Signal::Traces => "TRACES",
            Signal::Metrics => "METRICS",
            Signal::Logs => "LOGS",
        }
    }
}

/// Where one signal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalConfig {
    /// The full URL (HTTP: with `/v1/<signal>`).
    pub endpoint: String,
    /// How it is sent.
    pub protocol: Protocol,
    /// Headers sent with every export.
    pub headers: BTreeMap<String, String>,
    /// How long one export may take.
    pub timeout: Duration,
}

/// What telemetry is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Spans, when sent.
    pub traces: Option<SignalConfig>,
    /// Metrics, when sent.
    pub metrics: Option<SignalConfig>,
    /// Log events, when sent.
    pub logs: Option<SignalConfig>,
    /// Resource attributes, `service.name` among them.
    pub resource: BTreeMap<String, String>,
    /// How long the last batch may take at exit.
    pub shutdown_timeout: Duration,
    /// What was configured but cannot be honoured (said once, at start).
    pub warnings: Vec<String>,
    /// What turned it on, for messages (`OTEL_EXPORTER_OTLP_ENDPOINT`,
    /// `telemetry.otlp.endpoint`, …).
    pub source: String,
}

impl TelemetryConfig {
    /// The configuration `env` (a variable's value by name) and the
    /// settings' `telemetry` block ask for; `Ok(None)` when telemetry is
    /// off: nothing configures an endpoint, `OTEL_SDK_DISABLED=true`, or
    /// `telemetry.enabled` is false. A variable wins over the setting it
    /// stands for.
    pub fn resolve(
        env: &dyn Fn(&str) -> Option<String>,
        settings: &TelemetrySettings,
    ) -> Result<Option<TelemetryConfig>, TelemetryError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || settings.enabled == Some(false)
        {
            return Ok(None);
        }
        let mut warnings = Vec::new();
        let mut sources = Vec::new();
        let mut signals = [None, None, None];
        for (slot, signal) in
            signals
                .iter_mut()
                .zip([Signal::Traces, Signal::Metrics, Signal::Logs])
        {
            *slot = signal_config(&var, settings, signal, &mut warnings, &mut sources)?;
        }
        let [traces, metrics, logs] = signals;
        if traces.is_none() && metrics.is_none() && logs.is_none() {
            if settings.enabled == Some(true) {
                return Err(invalid(
                    "telemetry.enabled",
                    "is true but no OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or telemetry.otlp.endpoint)",
                ));
            }
            return Ok(None);
        }
        sources.dedup();
        Ok(Some(TelemetryConfig {
            traces,
            metrics,
            logs,
            resource: resource(&var, settings)?,
            shutdown_timeout: settings
                .shutdown_timeout_ms
                .map_or(DEFAULT_SHUTDOWN_TIMEOUT, Duration::from_millis),
            warnings,
            source: sources.join(", "),
        }))
    }

    /// The configuration of `signal`, if it is sent.
    pub fn signal(&self, signal: Signal) -> Option<&SignalConfig> {
        match signal {
            Signal::Traces => self.traces.as_ref(),
            Signal::Metrics => self.metrics.as_ref(),
            Signal::Logs => self.logs.as_ref(),
        }
    }
}

/// One signal's configuration: its own variables, then the common ones,
/// then its settings, then the common settings.
fn signal_config(
    var: &dyn Fn(&str) -> Option<String>,
    settings: &TelemetrySettings,
    signal: Signal,
    warnings: &mut Vec<String>,
    sources: &mut Vec<String>,
) -> Result<Option<SignalConfig>, TelemetryError> {
    let upper = signal.upper();
    let exporter_var = format!("OTEL_{upper}_EXPORTER");
    let otlp = settings.otlp.clone().unwrap_or_default();
    let own = match signal {
        Signal::Traces => otlp.traces.clone(),
        Signal::Metrics => otlp.metrics.clone(),
        Signal::Logs => otlp.logs.clone(),
    }
    .unwrap_or_default();
    if var(&exporter_var).is_some_and(|v| v.trim() == "none") || own.enabled == Some(false) {
        return Ok(None);
    }
    if let Some(exporter) = var(&exporter_var).filter(|v| v.trim() != "otlp") {
        warnings.push(format!(
            "{exporter_var}={exporter} is not supported (only otlp); {} are sent over OTLP",
            signal.name()
        ));
    }
    let protocol_var = format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL");
    let (protocol_name, protocol_from) = first([
        (var(&protocol_var), protocol_var.clone()),
        (
            var("OTEL_EXPORTER_OTLP_PROTOCOL"),
            "OTEL_EXPORTER_OTLP_PROTOCOL".into(),
        ),
        (
            own.protocol.clone(),
            format!("telemetry.otlp.{}.protocol", signal.name()),
        ),
        (otlp.protocol.clone(), "telemetry.otlp.protocol".into()),
    ])
    .unwrap_or_else(|| ("http/protobuf".into(), String::new()));
    let protocol = protocol_of(&protocol_name, &protocol_from, warnings)?;
    let endpoint = endpoint(
        var,
        &own,
        otlp.endpoint.as_deref(),
        signal,
        protocol,
        sources,
    )?;
    let Some(endpoint) = endpoint else {
        return Ok(None);
    };
    let mut headers = otlp.headers.clone();
    headers.extend(own.headers.clone());
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS".to_string(),
        format!("OTEL_EXPORTER_OTLP_{upper}_HEADERS"),
    ] {
        if let Some(text) = var(&name) {
            headers.extend(key_values(&name, &text)?);
        }
    }
    let timeout_var = format!("OTEL_EXPORTER_OTLP_{upper}_TIMEOUT");
    let timeout = match first([
        (var(&timeout_var), timeout_var.clone()),
        (
            var("OTEL_EXPORTER_OTLP_TIMEOUT"),
            "OTEL_EXPORTER_OTLP_TIMEOUT".into(),
        ),
    ]) {
        Some((text, name)) => Duration::from_millis(
            text.trim()
                .parse()
                .map_err(|_| invalid(&name, &format!("must be milliseconds, not {text:?}")))?,
        ),
        None => own
            .timeout_ms
            .or(otlp.timeout_ms)
            .map_or(DEFAULT_EXPORT_TIMEOUT, Duration::from_millis),
    };
    Ok(Some(SignalConfig {
        endpoint,
        protocol,
        headers,
        timeout,
    }))
}

/// The signal's URL: its own endpoint as it is, else the common one with
/// `/v1/<signal>` appended for HTTP. `None` when neither is configured.
fn endpoint(
    var: &dyn Fn(&str) -> Option<String>,
    own: &OtlpSignalSettings,
    common: Option<&str>,
    signal: Signal,
    protocol: Protocol,
    sources: &mut Vec<String>,
) -> Result<Option<String>, TelemetryError> {
    let own_var = format!("OTEL_EXPORTER_OTLP_{}_ENDPOINT", signal.upper());
    let own_key = format!("telemetry.otlp.{}.endpoint", signal.name());
    if let Some((url, name)) = first([(var(&own_var), own_var), (own.endpoint.clone(), own_key)]) {
        check_url(&name, &url)?;
        sources.push(name);
        return Ok(Some(url.trim().to_string()));
    }
    let common_var = "OTEL_EXPORTER_OTLP_ENDPOINT".to_string();
    let Some((url, name)) = first([
        (var(&common_var), common_var),
        (common.map(str::to_string), "telemetry.otlp.endpoint".into()),
    ]) else {
        return Ok(None);
    };
    check_url(&name, &url)?;
    sources.push(name);
    let base = url.trim().trim_end_matches('/');
    Ok(Some(match protocol {
        Protocol::Grpc => base.to_string(),
        Protocol::HttpProtobuf => format!("{base}/v1/{}", signal.name()),
    }))
}

/// The resource: `service.name` (variable, setting, default), the
/// settings' attributes, `OTEL_RESOURCE_ATTRIBUTES` over them.
fn resource(
    var: &dyn Fn(&str) -> Option<String>,
    settings: &TelemetrySettings,
) -> Result<BTreeMap<String, String>, TelemetryError> {
    let mut out = settings.resource_attributes.clone();
    if let Some(text) = var("OTEL_RESOURCE_ATTRIBUTES") {
        out.extend(key_values("OTEL_RESOURCE_ATTRIBUTES", &text)?);
    }
    let name = var("OTEL_SERVICE_NAME")
        .or_else(|| settings.service_name.clone())
        .or_else(|| out.get("service.name").cloned())
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.into());
    out.insert("service.name".into(), name);
    Ok(out)
}

fn protocol_of(
    name: &str,
    from: &str,
    warnings: &mut Vec<String>,
) -> Result<Protocol, TelemetryError> {
    match name.trim() {
        "grpc" => Ok(Protocol::Grpc),
        "http/protobuf" => Ok(Protocol::HttpProtobuf),
        "http/json" => {
            warnings.push(format!(
                "{from}=http/json is not supported; sending http/protobuf to the same endpoint"
            ));
            Ok(Protocol::HttpProtobuf)
        }
        other => Err(invalid(
            from,
            &format!("must be grpc, http/protobuf or http/json, not {other:?}"),
        )),
    }
}

fn check_url(name: &str, url: &str) -> Result<(), TelemetryError> {
    let url = url.trim();
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(invalid(
            name,
            &format!("must be an http:// or https:// URL, not {url:?}"),
        ))
    }
}

/// `key=value,key2=value2` (W3C baggage style, values percent-decoded),
/// as the OTLP headers and resource attribute variables are written.
pub fn key_values(name: &str, text: &str) -> Result<BTreeMap<String, String>, TelemetryError> {
    let mut out = BTreeMap::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(invalid(
                name,
                &format!("{pair:?} is not key=value (pairs are separated by commas)"),
            ));
        };
        let key = percent_decode(key.trim());
        if key.is_empty() {
            return Err(invalid(name, &format!("{pair:?} has an empty key")));
        }
        out.insert(key, percent_decode(value.trim()));
    }
    Ok(out)
}

/// `%XX` escapes decoded (an invalid escape is kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first value given, with the name it came from.
fn first<const N: usize>(candidates: [(Option<String>, String); N]) -> Option<(String, String)> {
    candidates
        .into_iter()
        .find_map(|(value, name)| value.map(|v| (v, name)))
}

fn invalid(name: &str, message: &str) -> TelemetryError {
    TelemetryError::Invalid {
        name: name.to_string(),
        message: message.to_string(),
    }
}
