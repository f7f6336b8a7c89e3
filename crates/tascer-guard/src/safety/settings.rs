//! The `safety` and `webhooks` objects of a settings file, as written
//! (docs/reviewers.md): the shapes of `tascer-settings`, which reads and
//! checks them.

pub use tascer_settings::safety::{
    AutoApproveSettings, FailMode, PathClassSettings, ReviewerSettings, ReviewersSettings,
    SafetySettings, SensitiveAction, WebhookSettings,
};
