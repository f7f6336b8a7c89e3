//! Which file a command name really runs: symlinks (a link in the
//! workspace to `/bin/rm`) and `PATH` changes (`PATH=bin:$PATH name`) are
//! followed on the filesystem, so deny rules see the real program; a
//! program file outside the system directories is code the analysis
//! cannot see.

use std::path::{Path, PathBuf};

use super::super::paths::canonicalize;
use super::{OpaqueCode, ShellAnalysis, base_name};

/// Directories whose programs are installed software, not files an agent
/// could have just written.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/", "/nix/", "/snap/",
];

fn is_system(path: &Path) -> bool {
    let s = path.to_string_lossy();
    SYSTEM_DIRS.iter().any(|d| s.starts_with(d))
}

/// Resolves the programs of `analysis` against the filesystem (relative
/// to `cwd`): adds the real program's name to a command's aliases, and
/// records a program file outside the system directories as opaque.
pub fn resolve_programs(analysis: &mut ShellAnalysis, cwd: &Path, home: Option<&Path>) {
    let mut path_dirs: Vec<PathBuf> = Vec::new();
    for value in &analysis.path_values {
        for part in value.text.split(':') {
            let part = part.trim_matches('"');
            if matches!(part, "$PATH" | "${PATH}") {
                continue;
            }
            if part.contains(['$', '`']) {
                let cmd = analysis.commands.first().cloned();
                if let Some(command) = cmd {
                    analysis.opaque.push(OpaqueCode {
                        command,
                        what: format!("`PATH` holds `{part}`, known only at run time"),
                        code_word: None,
                    });
                }
                continue;
            }
            let dir = if part.is_empty() { "." } else { part };
            path_dirs.push(canonicalize(Path::new(dir), cwd, home));
        }
    }
    let changes_dir = analysis
        .commands
        .iter()
        .any(|c| matches!(c.base_name(), Some("cd" | "pushd" | "popd")));
    let mut opaque = Vec::new();
    for cmd in &mut analysis.commands {
        let Some(name) = cmd.name().map(str::to_string) else {
            continue;
        };
        if changes_dir && name.contains('/') && !name.starts_with('/') {
            opaque.push(OpaqueCode {
                command: cmd.clone(),
                what: format!("`{name}` is named relative to a directory changed by `cd`"),
                code_word: Some(0),
            });
            continue;
        }
        let file = if name.contains('/') {
            Some(canonicalize(Path::new(&name), cwd, home))
        } else {
            path_dirs
                .iter()
                .map(|d| d.join(&name))
                .find(|p| p.is_file())
                .map(|p| canonicalize(&p, cwd, home))
        };
        let Some(file) = file.filter(|f| f.is_file()) else {
            continue;
        };
        let real = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !real.is_empty() && real != base_name(&name) && !cmd.aliases.contains(&real) {
            cmd.aliases.push(real.clone());
            cmd.aliases.extend(super::programs::aliases(&real));
        }
        if !is_system(&file) {
            opaque.push(OpaqueCode {
                command: cmd.clone(),
                what: format!(
                    "`{name}` runs the program file {}, whose code is not checked",
                    file.display()
                ),
                code_word: Some(0),
            });
        }
    }
    analysis.opaque.extend(opaque);
}
