//! The `telemetry` object of a settings file (docs/telemetry.md): where
//! OpenTelemetry data goes. The standard `OTEL_*` variables override it
//! (`tascer-telemetry` resolves the two); each key comes from the highest
//! layer that sets it, `headers` and `resourceAttributes` merge key by key.
//! Unknown keys are errors: a misspelt endpoint must not silently turn
//! telemetry off.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The protocols an OTLP endpoint may speak, as `OTEL_EXPORTER_OTLP_PROTOCOL`
/// names them.
pub const OTLP_PROTOCOLS: &[&str] = &["grpc", "http/protobuf", "http/json"];

/// The `telemetry` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TelemetrySettings {
    /// `false` turns telemetry off whatever is configured; `true` without
    /// an endpoint is an error (there is nowhere to send to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The OTLP exporter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp: Option<OtlpSettings>,
    /// `service.name` (default `tascer`; `OTEL_SERVICE_NAME` wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// Resource attributes (`OTEL_RESOURCE_ATTRIBUTES` wins per key).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_attributes: BTreeMap<String, String>,
    /// How long the last batch may take at exit, milliseconds (default
    /// 3000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_timeout_ms: Option<u64>,
}

/// `telemetry.otlp`: the settings of all signals, and per signal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OtlpSettings {
    /// The endpoint of every signal (as `OTEL_EXPORTER_OTLP_ENDPOINT`:
    /// for HTTP, `/v1/traces` etc. are appended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Headers sent with every export (`authorization`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// How long one export may take, milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Traces only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<OtlpSignalSettings>,
    /// Metrics only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<OtlpSignalSettings>,
    /// Log events only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<OtlpSignalSettings>,
}

/// `telemetry.otlp.traces` (`metrics`, `logs`): one signal's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OtlpSignalSettings {
    /// `false` sends nothing of this signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The signal's full URL (nothing appended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Headers, over the common ones.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// How long one export may take, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl TelemetrySettings {
    /// Checks what serde cannot: each endpoint is an `http(s)://` URL and
    /// each protocol one of [`OTLP_PROTOCOLS`].
    pub fn validate(&self) -> Result<(), String> {
        let Some(otlp) = &self.otlp else {
            return Ok(());
        };
        check_signal(
            "telemetry.otlp",
            otlp.endpoint.as_deref(),
            otlp.protocol.as_deref(),
        )?;
        for (name, signal) in [
            ("traces", &otlp.traces),
            ("metrics", &otlp.metrics),
            ("logs", &otlp.logs),
        ] {
            if let Some(s) = signal {
                let at = format!("telemetry.otlp.{name}");
                check_signal(&at, s.endpoint.as_deref(), s.protocol.as_deref())?;
            }
        }
        Ok(())
    }

    /// `self` with what it leaves unset taken from `lower` (a lower
    /// layer's section).
    pub(crate) fn over(mut self, lower: &TelemetrySettings) -> TelemetrySettings {
        self.enabled = self.enabled.or(lower.enabled);
        self.service_name = self.service_name.or_else(|| lower.service_name.clone());
        self.shutdown_timeout_ms = self.shutdown_timeout_ms.or(lower.shutdown_timeout_ms);
        self.resource_attributes = merged(&lower.resource_attributes, self.resource_attributes);
        self.otlp = match (self.otlp, &lower.otlp) {
            (Some(high), Some(low)) => Some(high.over(low)),
            (high, low) => high.or_else(|| low.clone()),
        };
        self
    }
}

impl OtlpSettings {
    fn over(mut self, lower: &OtlpSettings) -> OtlpSettings {
        self.endpoint = self.endpoint.or_else(|| lower.endpoint.clone());
        self.protocol = self.protocol.or_else(|| lower.protocol.clone());
        self.timeout_ms = self.timeout_ms.or(lower.timeout_ms);
        self.headers = merged(&lower.headers, self.headers);
        self.traces = signal_over(self.traces, &lower.traces);
        self.metrics = signal_over(self.metrics, &lower.metrics);
        self.logs = signal_over(self.logs, &lower.logs);
        self
    }
}

fn signal_over(
    high: Option<OtlpSignalSettings>,
    low: &Option<OtlpSignalSettings>,
) -> Option<OtlpSignalSettings> {
    match (high, low) {
        (Some(mut h), Some(l)) => {
            h.enabled = h.enabled.or(l.enabled);
            h.endpoint = h.endpoint.or_else(|| l.endpoint.clone());
            h.protocol = h.protocol.or_else(|| l.protocol.clone());
            h.timeout_ms = h.timeout_ms.or(l.timeout_ms);
            h.headers = merged(&l.headers, h.headers);
            Some(h)
        }
        (high, low) => high.or_else(|| low.clone()),
    }
}

/// `low` with `high`'s keys over it.
fn merged(
    low: &BTreeMap<String, String>,
    high: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out = low.clone();
    out.extend(high);
    out
}

fn check_signal(at: &str, endpoint: Option<&str>, protocol: Option<&str>) -> Result<(), String> {
    if let Some(endpoint) = endpoint
        && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
    {
        return Err(format!(
            "{at}.endpoint must be an http:// or https:// URL, not {endpoint:?}"
        ));
    }
    if let Some(protocol) = protocol
        && !OTLP_PROTOCOLS.contains(&protocol)
    {
        return Err(format!(
            "{at}.protocol must be one of {}, not {protocol:?}",
            OTLP_PROTOCOLS.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TelemetrySettings, String> {
        let settings: TelemetrySettings = serde_json::from_str(text).map_err(|e| e.to_string())?;
        settings.validate()?;
        Ok(settings)
    }

    #[test]
    fn a_bad_protocol_or_endpoint_is_an_error_naming_the_key() {
        let err = parse(r#"{"otlp": {"protocol": "udp"}}"#).unwrap_err();
        assert!(err.contains("telemetry.otlp.protocol"), "{err}");
        let err = parse(r#"{"otlp": {"traces": {"endpoint": "localhost:4318"}}}"#).unwrap_err();
        assert!(err.contains("telemetry.otlp.traces.endpoint"), "{err}");
        let err = parse(r#"{"otlp": {"endpoitn": "http://x"}}"#).unwrap_err();
        assert!(err.contains("endpoitn"), "{err}");
    }

    #[test]
    fn a_higher_layer_wins_per_key_and_headers_merge() {
        let high =
            parse(r#"{"otlp": {"endpoint": "http://high:4318", "headers": {"a": "1"}}}"#).unwrap();
        let low = parse(
            r#"{"serviceName": "low", "otlp": {"endpoint": "http://low:4318", "protocol": "grpc", "headers": {"a": "0", "b": "2"}}}"#,
        )
        .unwrap();
        let merged = TelemetrySettings::default().over(&high).over(&low);
        let otlp = merged.otlp.unwrap();
        assert_eq!(otlp.endpoint.as_deref(), Some("http://high:4318"));
        assert_eq!(otlp.protocol.as_deref(), Some("grpc"));
        assert_eq!(otlp.headers.get("a").map(String::as_str), Some("1"));
        assert_eq!(otlp.headers.get("b").map(String::as_str), Some("2"));
        assert_eq!(merged.service_name.as_deref(), Some("low"));
    }
}
