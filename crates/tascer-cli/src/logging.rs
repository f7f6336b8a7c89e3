//! Where the CLI's log lines go (shared by `tascer` and `tascer-hook`).

/// Warnings (and `TASCER_LOG`'s levels) on standard error, coloured only
/// when it is a terminal: hooks, SDKs and CI logs read it as plain text.
pub fn init_tracing() {
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    // Without TASCER_LOG a plain level filter: building an `EnvFilter` is
    // a measurable part of a hook process's start-up.
    match std::env::var("TASCER_LOG") {
        Ok(directives) => builder
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_new(directives)
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init(),
        Err(_) => builder
            .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
            .init(),
    }
}
