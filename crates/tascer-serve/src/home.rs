//! The Tascer home the server reads: its store, opened once it exists
//! (the server never creates one), shared by every request.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tascer_ledger::Ledger;
use tascer_store::{Backend, SessionStore, StoreConfig, open_home_backend};

use crate::error::ApiError;

/// A Tascer home and its store's backend, once opened.
#[derive(Debug)]
pub struct Home {
    path: PathBuf,
    backend: Mutex<Option<Arc<dyn Backend>>>,
}

impl Home {
    /// The home at `path`; its store is opened on first use.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            backend: Mutex::new(None),
        }
    }

    /// The home's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store's backend (`TASCER_STORE`, the home's `store` setting,
    /// else `<home>/tascer.db`), or `None` while no SQLite file exists.
    pub fn backend(&self) -> Result<Option<Arc<dyn Backend>>, ApiError> {
        let mut slot = self.backend.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(backend) = slot.as_ref() {
            return Ok(Some(Arc::clone(backend)));
        }
        let config = StoreConfig::for_home(&self.path).map_err(|e| ApiError::internal(&e))?;
        if !config.exists() {
            return Ok(None);
        }
        let backend = open_home_backend(&self.path).map_err(|e| ApiError::internal(&e))?;
        *slot = Some(Arc::clone(&backend));
        Ok(Some(backend))
    }

    /// The session store, or `None` while there is none.
    pub fn sessions(&self) -> Result<Option<SessionStore>, ApiError> {
        Ok(self.backend()?.map(SessionStore::with_backend))
    }

    /// The ledger (no signing key: the server only reads), or `None`.
    pub fn ledger(&self) -> Result<Option<Ledger>, ApiError> {
        Ok(self
            .backend()?
            .map(|b| Ledger::with_backend(b, self.path.join("evidence"), None)))
    }
}
