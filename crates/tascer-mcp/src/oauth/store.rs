//! Per-server token files: `<token dir>/<server>.json`, mode 0600 in a
//! 0700 directory, written atomically. Also rmcp's credential store, so
//! refreshed tokens are saved as soon as rmcp gets them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

use crate::names::sanitize_name;

/// The token file of `server` under `dir`.
pub fn token_file(dir: &Path, server: &str) -> PathBuf {
    dir.join(format!("{}.json", sanitize_name(server)))
}

/// A client registered with an authorization server (dynamic
/// registration), reused for later logins and refreshes.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Registration {
    /// The authorization server's token endpoint it belongs to.
    pub token_endpoint: String,
    /// The registered client ID.
    pub client_id: String,
    /// Its secret, when the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

#[derive(Clone, Default, Serialize, Deserialize)]
struct TokenFile {
    /// The server URL the tokens are for: a file for another URL is ignored.
    url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    registration: Option<Registration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<StoredCredentials>,
}

/// One server's tokens: in memory, and in its file when there is a token
/// directory.
#[derive(Clone)]
pub(crate) struct TokenStore {
    path: Option<PathBuf>,
    data: Arc<Mutex<TokenFile>>,
}

impl TokenStore {
    /// The store of `server` at `url`; reads its file when it exists and
    /// names the same URL.
    pub fn open(dir: Option<&Path>, server: &str, url: &str) -> Self {
        let path = dir.map(|d| token_file(d, server));
        let data = path
            .as_deref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice::<TokenFile>(&bytes).ok())
            .filter(|f| f.url == url)
            .unwrap_or_else(|| TokenFile {
                url: url.to_owned(),
                ..TokenFile::default()
            });
        TokenStore {
            path,
            data: Arc::new(Mutex::new(data)),
        }
    }

    /// True when tokens are stored.
    pub fn has_credentials(&self) -> bool {
        self.data
            .lock()
            .credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    }

    /// The stored client registration for that token endpoint.
    pub fn registration(&self, token_endpoint: &str) -> Option<Registration> {
        self.data
            .lock()
            .registration
            .clone()
            .filter(|r| r.token_endpoint == token_endpoint)
    }

    /// The stored client registration, whatever its server.
    pub fn any_registration(&self) -> Option<Registration> {
        self.data.lock().registration.clone()
    }

    /// Records a client registration.
    pub fn set_registration(&self, registration: Registration) -> Result<(), String> {
        let snapshot = {
            let mut data = self.data.lock();
            data.registration = Some(registration);
            data.clone()
        };
        self.persist(&snapshot)
    }

    fn persist(&self, data: &TokenFile) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        write_private(path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Writes `data` as JSON to `path` with mode 0600 (directory 0700),
/// through a temporary file and a rename.
fn write_private(path: &Path, data: &TokenFile) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let bytes = serde_json::to_vec_pretty(data).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let mut file = options.open(&tmp)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.data.lock().credentials.clone())
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let snapshot = {
            let mut data = self.data.lock();
            data.credentials = Some(credentials);
            data.clone()
        };
        self.persist(&snapshot)
            .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let snapshot = {
            let mut data = self.data.lock();
            data.credentials = None;
            data.clone()
        };
        self.persist(&snapshot)
            .map_err(AuthError::CredentialStoreError)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn file_is_private_and_bound_to_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("mcp-auth");
        let store = TokenStore::open(Some(&tokens), "my server", "http://a/mcp");
        store
            .set_registration(Registration {
                token_endpoint: "http://a/token".into(),
                client_id: "id".into(),
                client_secret: Some("sec".into()),
            })
            .unwrap();
        let path = token_file(&tokens, "my server");
        assert!(path.ends_with("my_server.json"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(&tokens).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let again = TokenStore::open(Some(&tokens), "my server", "http://a/mcp");
        assert_eq!(
            again.registration("http://a/token").unwrap().client_id,
            "id"
        );
        assert!(again.registration("http://b/token").is_none());
        let other_url = TokenStore::open(Some(&tokens), "my server", "http://evil/mcp");
        assert!(other_url.any_registration().is_none());
    }
}
