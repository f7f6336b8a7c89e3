//! Where the CLI's log lines go (shared by `tascer` and `tascer-hook`).

/// Warnings (and `TASCER_LOG`'s levels) on standard error, coloured only
/// when it is a terminal: hooks, SDKs and CI logs read it as plain text.
pub fn init_tracing() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("TASCER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
