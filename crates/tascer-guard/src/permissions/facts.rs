//! Facts about a call computed once per decision: its tool class, the paths
//! it touches, its parsed shell command and its URL host.

use std::path::{Path, PathBuf};

use super::call::ToolCall;
use super::mode::ToolClass;
use super::paths::{TargetPath, target_paths};
use super::shell::{self, ShellAnalysis};

/// What the engine knows about one call.
#[derive(Debug, Clone)]
pub struct CallFacts {
    /// The tool's class.
    pub class: ToolClass,
    /// Paths a file tool touches (canonicalized).
    pub paths: Vec<TargetPath>,
    /// The analysed command of a `Bash` call (`None` when the input has no
    /// `command` string).
    pub shell: Option<ShellAnalysis>,
    /// Lower-case host of a `WebFetch` URL.
    pub host: Option<String>,
    /// The home directory used for `~`.
    pub home: Option<PathBuf>,
}

impl CallFacts {
    /// Computes the facts of `call`.
    pub fn of(call: &ToolCall, home: Option<&Path>) -> Self {
        let class = ToolClass::of(&call.tool_name);
        CallFacts {
            class,
            paths: target_paths(call, home),
            shell: call.command().map(|c| {
                let mut a = shell::analyze(c);
                shell::resolve_programs(&mut a, &call.cwd, home);
                a
            }),
            host: if call.tool_name == "WebFetch" {
                call.input_str("url").and_then(url_host)
            } else {
                None
            },
            home: home.map(Path::to_path_buf),
        }
    }
}

/// The host of an `http(s)` URL, lower-cased, without port or user info.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map(|(_, r)| r)?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}
