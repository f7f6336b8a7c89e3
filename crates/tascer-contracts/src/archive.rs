//! Archival of a contract's session when it ends: the runner calls a
//! [`SessionArchiver`] after each session (before its worktree is removed,
//! so the working directory is still there) and writes the archive's URL
//! into the contract's Result. The CLI's archiver is the same code that
//! archives after `tascer run` (`archive.auto`); the library only knows
//! this trait, so it does not depend on an object-store client.

use std::path::Path;

use futures::future::BoxFuture;

/// Archives one session; see [`crate::RunOptions::archiver`].
pub trait SessionArchiver: Send + Sync {
    /// Archives session `session_id`, whose working directory is `workdir`.
    /// `Ok(Some(url))`: archived (and verified) at `url`; `Ok(None)`:
    /// archival is off; `Err(why)`: it failed (the session stays intact in
    /// the store; the error goes into the Result).
    fn archive<'a>(
        &'a self,
        session_id: &'a str,
        workdir: &'a Path,
    ) -> BoxFuture<'a, Result<Option<String>, String>>;
}
