//! Durations as the loop reports them: whole milliseconds or
//! microseconds, saturating.

use std::time::Duration;

/// `d` in whole milliseconds (`u64::MAX` past that).
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `d` in whole microseconds (`u64::MAX` past that).
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
