//! `tascer-sandbox-exec --policy-json JSON -- CMD ARGS…`: the helper the
//! Bash tool starts for every sandboxed command.
//!
//! It does what `tascer sandbox --policy-json …` does (enter the sandbox,
//! then become the command) but links nothing besides [`tascer_sandbox`],
//! so starting it costs a fraction of starting `tascer` (BENCHMARKS.md).
//! An internal program: people use `tascer sandbox` (docs/sandbox.md).

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    ExitCode::from(tascer_sandbox::helper_main(&args))
}
