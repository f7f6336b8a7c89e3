//! `tascer-hook`: `tascer hook` as a program of its own.
//!
//! Claude Code starts a command hook as a new process for every event, so
//! most of a hook's time is the start-up of its executable. This one links
//! only the hook's path (no command line, MCP server, archive, contracts or
//! mock server), which makes it about half the size of `tascer` and starts
//! faster (BENCHMARKS.md). `tascer install claude-code` uses it when it sits
//! next to `tascer`; it answers exactly as `tascer hook` does.

// `is_invocation` is for `tascer`'s own `main`.
#[allow(dead_code)]
#[path = "../hook.rs"]
mod hook;
#[path = "../logging.rs"]
mod logging;

fn main() -> std::process::ExitCode {
    logging::init_tracing();
    hook::main()
}
