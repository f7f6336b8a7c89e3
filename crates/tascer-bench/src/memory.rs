//! Memory figures of processes, from `/proc`.

/// A `kB` field of `/proc/<pid>/status` (`pid` may be `self`), e.g.
/// `VmRSS` (resident now) or `VmHWM` (peak resident), in KiB.
pub fn status_kib(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| {
            l.strip_prefix(field)
                .is_some_and(|rest| rest.starts_with(':'))
        })?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
