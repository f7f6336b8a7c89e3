//! The built-in gates and their options.

mod always_block;
mod command_allowed;
mod diff_size;
mod exit_code;
mod file_exists;
mod file_protected;
mod secrets;
mod syntax;
mod tests_pass;
mod tree_syntax;

use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::error::GateError;
use super::gate::Gate;

pub use always_block::AlwaysBlockOptions;
pub use command_allowed::CommandAllowedOptions;
pub use diff_size::DiffSizeOptions;
pub use file_protected::FileProtectedOptions;
pub use secrets::{SecretFinding, SecretScanner, redact, redact_with};
pub use tests_pass::TestsPassOptions;

/// Options of the built-in gates (the `validation.gates` settings value).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BuiltinOptions {
    /// `command_allowed` options.
    pub command_allowed: CommandAllowedOptions,
    /// `file_protected` options.
    pub file_protected: FileProtectedOptions,
    /// `tests_pass` options.
    pub tests_pass: TestsPassOptions,
    /// `diff_size_limit` options.
    pub diff_size_limit: DiffSizeOptions,
    /// `always_block` options.
    pub always_block: AlwaysBlockOptions,
}

/// The gates [`all`] built last, with the options they were built from.
static LAST_BUILT: LastBuilt = Mutex::new(None);

/// Gates kept with the options they were built from.
type LastBuilt = Mutex<Option<(BuiltinOptions, Vec<Arc<dyn Gate>>)>>;

/// Every built-in gate, plus the `not_protected` alias.
///
/// The gates hold nothing of a session (what they build lazily, such as
/// `file_protected`'s glob set, depends only on their options), so the
/// gates built last are handed out again for the same options: a process
/// that builds governance per call (the hook server, a session per
/// contract) parses the default globs and command prefixes once.
pub(crate) fn all(options: &BuiltinOptions) -> Result<Vec<Arc<dyn Gate>>, GateError> {
    built_once(&LAST_BUILT, options)
}

/// The gates for `options`: those in `last` when they were built from the
/// same options, else new ones, then kept in `last`.
fn built_once(last: &LastBuilt, options: &BuiltinOptions) -> Result<Vec<Arc<dyn Gate>>, GateError> {
    let mut last = last.lock();
    if let Some((built_from, gates)) = last.as_ref()
        && built_from == options
    {
        return Ok(gates.clone());
    }
    let gates = build(options)?;
    *last = Some((options.clone(), gates.clone()));
    Ok(gates)
}

/// Builds every built-in gate for `options`.
fn build(options: &BuiltinOptions) -> Result<Vec<Arc<dyn Gate>>, GateError> {
    let protected = Arc::new(file_protected::FileProtected::new(
        "file_protected",
        &options.file_protected,
    )?);
    let not_protected = Arc::new(file_protected::FileProtected::new(
        "not_protected",
        &options.file_protected,
    )?);
    Ok(vec![
        Arc::new(command_allowed::CommandAllowed::new(
            options.command_allowed.clone(),
        )),
        protected,
        not_protected,
        Arc::new(file_exists::FileExists),
        Arc::new(exit_code::ExitCodeZero),
        Arc::new(syntax::SyntaxValid),
        Arc::new(tests_pass::TestsPass::new(options.tests_pass.clone())),
        Arc::new(secrets::NoSecretsLeaked),
        Arc::new(diff_size::DiffSizeLimit::new(
            options.diff_size_limit.clone(),
        )),
        Arc::new(always_block::AlwaysBlock::new(options.always_block.clone())),
    ])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(gates: &[Arc<dyn Gate>]) -> Vec<&str> {
        gates.iter().map(|g| g.name()).collect()
    }

    #[test]
    fn the_same_options_get_the_gates_built_last_and_other_options_new_ones() {
        let last = LastBuilt::new(None);
        let defaults = BuiltinOptions::default();
        let first = built_once(&last, &defaults).unwrap();
        let again = built_once(&last, &defaults).unwrap();
        assert_eq!(names(&first), names(&again));
        assert!(
            first.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)),
            "built once for the same options"
        );
        let mut other = BuiltinOptions::default();
        other.command_allowed.deny.push("git reset --hard".into());
        let changed = built_once(&last, &other).unwrap();
        assert_eq!(names(&first), names(&changed));
        assert!(
            first.iter().zip(&changed).all(|(a, b)| !Arc::ptr_eq(a, b)),
            "other options build other gates"
        );
    }
}
