//! What the `OTEL_*` variables and the settings' `telemetry` block turn on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use tascer_settings::TelemetrySettings;
use tascer_telemetry::{Protocol, TelemetryConfig, TelemetryError};

fn resolve(
    vars: &[(&str, &str)],
    settings: &str,
) -> Result<Option<TelemetryConfig>, TelemetryError> {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let settings: TelemetrySettings = serde_json::from_str(settings).unwrap();
    TelemetryConfig::resolve(&|name| vars.get(name).cloned(), &settings)
}

#[test]
fn nothing_configured_is_off() {
    assert_eq!(resolve(&[], "{}").unwrap(), None);
    assert_eq!(
        resolve(&[("OTEL_SERVICE_NAME", "x")], "{}").unwrap(),
        None,
        "a service name alone sends nothing"
    );
}

#[test]
fn the_endpoint_alone_turns_every_signal_on_over_http() {
    let config = resolve(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")], "{}")
        .unwrap()
        .unwrap();
    let traces = config.traces.unwrap();
    assert_eq!(traces.endpoint, "http://c:4318/v1/traces");
    assert_eq!(traces.protocol, Protocol::HttpProtobuf);
    assert_eq!(traces.timeout, Duration::from_secs(10));
    assert_eq!(config.metrics.unwrap().endpoint, "http://c:4318/v1/metrics");
    assert_eq!(config.logs.unwrap().endpoint, "http://c:4318/v1/logs");
    assert_eq!(config.resource["service.name"], "tascer");
}

#[test]
fn per_signal_variables_win_and_are_used_as_they_are() {
    let config = resolve(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4318/custom"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20abc,x-a=1",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-a=2"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2500"),
            ("OTEL_LOGS_EXPORTER", "none"),
        ],
        "{}",
    )
    .unwrap()
    .unwrap();
    let traces = config.traces.unwrap();
    assert_eq!(traces.endpoint, "http://t:4318/custom");
    assert_eq!(traces.protocol, Protocol::HttpProtobuf);
    assert_eq!(traces.headers["authorization"], "Bearer abc");
    assert_eq!(traces.headers["x-a"], "2");
    let metrics = config.metrics.unwrap();
    assert_eq!(metrics.endpoint, "http://c:4317", "gRPC: nothing appended");
    assert_eq!(metrics.protocol, Protocol::Grpc);
    assert_eq!(metrics.headers["x-a"], "1");
    assert_eq!(metrics.timeout, Duration::from_millis(2500));
    assert!(config.logs.is_none(), "OTEL_LOGS_EXPORTER=none");
}

#[test]
fn the_settings_block_configures_and_the_variables_override_it() {
    let settings = r#"{
        "serviceName": "from-settings",
        "resourceAttributes": {"team": "a", "env": "dev"},
        "shutdownTimeoutMs": 500,
        "otlp": {"endpoint": "http://s:4318", "headers": {"x-k": "s"}, "timeoutMs": 1000}
    }"#;
    let config = resolve(&[], settings).unwrap().unwrap();
    assert_eq!(
        config.traces.as_ref().unwrap().endpoint,
        "http://s:4318/v1/traces"
    );
    assert_eq!(config.traces.as_ref().unwrap().headers["x-k"], "s");
    assert_eq!(
        config.traces.as_ref().unwrap().timeout,
        Duration::from_secs(1)
    );
    assert_eq!(config.shutdown_timeout, Duration::from_millis(500));
    assert_eq!(config.resource["service.name"], "from-settings");
    assert_eq!(config.source, "telemetry.otlp.endpoint");

    let config = resolve(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://v:4318"),
            ("OTEL_SERVICE_NAME", "from-env"),
            ("OTEL_RESOURCE_ATTRIBUTES", "env=prod"),
        ],
        settings,
    )
    .unwrap()
    .unwrap();
    assert_eq!(config.traces.unwrap().endpoint, "http://v:4318/v1/traces");
    assert_eq!(config.resource["service.name"], "from-env");
    assert_eq!(config.resource["env"], "prod");
    assert_eq!(config.resource["team"], "a");
}

#[test]
fn disabled_wins_over_an_endpoint() {
    let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
    assert_eq!(
        resolve(&[endpoint, ("OTEL_SDK_DISABLED", "true")], "{}").unwrap(),
        None
    );
    assert_eq!(resolve(&[endpoint], r#"{"enabled": false}"#).unwrap(), None);
    let config = resolve(&[endpoint], r#"{"otlp": {"traces": {"enabled": false}}}"#)
        .unwrap()
        .unwrap();
    assert!(config.traces.is_none());
    assert!(config.metrics.is_some());
}

#[test]
fn bad_values_are_errors_that_name_the_variable() {
    let err = resolve(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318")], "{}").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("OTEL_EXPORTER_OTLP_ENDPOINT: must be an http"),
        "{err}"
    );
    let err = resolve(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
        ],
        "{}",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("OTEL_EXPORTER_OTLP_HEADERS"),
        "{err}"
    );
    let err = resolve(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
        ],
        "{}",
    )
    .unwrap_err();
    assert!(err.to_string().contains("must be milliseconds"), "{err}");
    let err = resolve(&[], r#"{"enabled": true}"#).unwrap_err();
    assert!(err.to_string().contains("no OTLP endpoint"), "{err}");
}

#[test]
fn http_json_is_a_warning_and_sends_protobuf() {
    let config = resolve(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
        "{}",
    )
    .unwrap()
    .unwrap();
    assert_eq!(config.traces.unwrap().protocol, Protocol::HttpProtobuf);
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("http/json is not supported"))
    );
}
