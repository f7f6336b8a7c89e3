//! Retry delays: exponential backoff with full jitter, and `retry-after`.

use std::time::Duration;

use reqwest::header::HeaderMap;

/// The longest `retry-after` we honour; longer hints fall back to backoff.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The backoff ceiling before retry number `retry` (1-based):
/// `initial × 2^(retry-1)`, capped at `max`.
pub(crate) fn backoff_ceiling(retry: u32, initial: Duration, max: Duration) -> Duration {
    let factor = 2u32.saturating_pow(retry.saturating_sub(1).min(30));
    initial.saturating_mul(factor).min(max)
}

/// A random delay in `[0, ceiling]` ("full jitter").
pub(crate) fn jittered_backoff(retry: u32, initial: Duration, max: Duration) -> Duration {
    let ceiling = backoff_ceiling(retry, initial, max);
    let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(fastrand::u64(0..=millis))
}

/// The server's hint from `retry-after-ms` or `retry-after` (seconds). HTTP
/// dates, garbage and hints over a minute give `None`.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let parse = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    let delay = if let Some(ms) = header("retry-after-ms").and_then(parse) {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::from_secs_f64(header("retry-after").and_then(parse)?)
    };
    (delay <= MAX_RETRY_AFTER).then_some(delay)
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn ceiling_doubles_and_caps() {
        let ms = Duration::from_millis;
        assert_eq!(backoff_ceiling(1, ms(500), ms(20_000)), ms(500));
        assert_eq!(backoff_ceiling(2, ms(500), ms(20_000)), ms(1000));
        assert_eq!(backoff_ceiling(4, ms(500), ms(20_000)), ms(4000));
        assert_eq!(backoff_ceiling(10, ms(500), ms(20_000)), ms(20_000));
        assert_eq!(backoff_ceiling(u32::MAX, ms(500), ms(20_000)), ms(20_000));
        for retry in 1..6 {
            assert!(jittered_backoff(retry, ms(10), ms(50)) <= ms(50));
        }
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after", HeaderValue::from_static("0.5"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(500)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("3600"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
    }
}
