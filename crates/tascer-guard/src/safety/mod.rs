//! The safety chain's static parts: low-risk auto-approve and path
//! classes (settings `safety.autoApprove`, `safety.pathClasses`), and the
//! shape of the `safety` and `webhooks` settings. The LLM reviewers are in
//! [`crate::reviewers`]; docs/reviewers.md describes the whole chain.

mod low_risk;
mod path_classes;
pub mod settings;

pub use low_risk::{DEFAULT_LOW_RISK_TOOLS, LowRiskPolicy};
pub use path_classes::{
    AutoApprovePolicy, DEFAULT_AUTO_APPROVE_TOOLS, DEFAULT_TRUSTED, PathClass, PathClasses,
};
