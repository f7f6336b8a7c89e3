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

/// Every built-in gate, plus the `not_protected` alias.
pub(crate) fn all(options: &BuiltinOptions) -> Result<Vec<Arc<dyn Gate>>, GateError> {
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
