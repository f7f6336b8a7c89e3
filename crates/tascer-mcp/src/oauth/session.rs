//! [`ServerAuth`]: one HTTP server's OAuth state: its current
//! authorization (rmcp's `AuthorizationManager`), its token store, and the
//! flows that get a new token when the server answers 401 or 403.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use futures::future::BoxFuture;
use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, JwtSigningAlgorithm,
    OAuthClientConfig, WWWAuthenticateParams,
};
use serde_json::Value;

use super::OAuthOptions;
use super::config::{OAuthConfig, OAuthGrant};
use super::cross_app;
use super::loopback::Loopback;
use super::metadata::resolve;
use super::store::{Registration, TokenStore};
use crate::error::McpError;

/// Authorizations in a row (without a request succeeding in between)
/// before the client gives up: a server that keeps refusing (scope it will
/// never grant) must not loop the user through logins.
const MAX_AUTHORIZATIONS: u32 = 3;

/// Placeholder redirect of a client configured only to refresh tokens.
const REFRESH_REDIRECT: &str = "http://127.0.0.1/callback";

/// One HTTP server's OAuth state.
pub(crate) struct ServerAuth {
    server: String,
    url: String,
    config: OAuthConfig,
    options: OAuthOptions,
    store: TokenStore,
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// The stored tokens were looked at.
    loaded: AtomicBool,
    /// One authorization at a time.
    flow: tokio::sync::Mutex<()>,
    /// Authorizations since a request last succeeded with a token.
    failures: AtomicU32,
    /// Scopes of the current authorization (step-up asks for more).
    granted: parking_lot::Mutex<Vec<String>>,
    /// Why the last recovery failed (for a readable connect error).
    last_failure: parking_lot::Mutex<Option<String>>,
}

impl ServerAuth {
    /// The state of `server` at `url`, with its stored tokens (read lazily).
    pub fn new(
        server: &str,
        url: &str,
        config: Option<OAuthConfig>,
        options: OAuthOptions,
    ) -> Arc<Self> {
        let store = TokenStore::open(options.token_dir.as_deref(), server, url);
        Arc::new(ServerAuth {
            server: server.to_owned(),
            url: url.to_owned(),
            config: config.unwrap_or_default(),
            options,
            store,
            manager: tokio::sync::Mutex::new(None),
            loaded: AtomicBool::new(false),
            flow: tokio::sync::Mutex::new(()),
            failures: AtomicU32::new(0),
            granted: parking_lot::Mutex::new(Vec::new()),
            last_failure: parking_lot::Mutex::new(None),
        })
    }

    fn login_hint(&self) -> String {
        format!(
            "needs an OAuth login: run `tascer mcp login {}`",
            self.server
        )
    }

    fn failed(message: String) -> AuthError {
        AuthError::AuthorizationFailed(message)
    }

    /// The access token to send (refreshed when it is about to expire);
    /// `None` when there is no usable authorization yet.
    pub fn token(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(self.token_now())
    }

    async fn token_now(&self) -> Result<Option<String>, AuthError> {
        let mut guard = self.manager.lock().await;
        if guard.is_none()
            && !self.loaded.swap(true, Ordering::SeqCst)
            && self.store.has_credentials()
        {
            match self.manager_from_store().await {
                Ok(manager) => *guard = manager,
                Err(e) => {
                    tracing::warn!(server = %self.server, error = %e, "cannot use the stored OAuth tokens")
                }
            }
        }
        let Some(manager) = guard.as_ref() else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A request with a token went through.
    pub fn succeeded(&self) {
        self.failures.store(0, Ordering::SeqCst);
    }

    /// An authorization from the stored tokens (and the client that got
    /// them, so they can be refreshed).
    async fn manager_from_store(&self) -> Result<Option<AuthorizationManager>, AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        manager.set_metadata(resolve(&manager, &self.url, None).await?);
        if !manager.initialize_from_store().await? {
            return Ok(None);
        }
        let secret = match (&self.config.client_id, &self.config.client_secret) {
            (Some(id), Some(secret)) => Some((id.clone(), secret.clone())),
            _ => self
                .store
                .any_registration()
                .and_then(|r| Some((r.client_id, r.client_secret?))),
        };
        if let Some((id, secret)) = secret {
            let (stored_id, _) = manager.get_credentials().await?;
            if stored_id == id {
                manager.configure_client(
                    OAuthClientConfig::new(id, REFRESH_REDIRECT).with_client_secret(secret),
                )?;
            }
        }
        Ok(Some(manager))
    }

    /// The server refused `sent` (401, or 403 `insufficient_scope` when
    /// `insufficient`) with `challenge`: refresh, or authorize again (with
    /// the challenged scopes). Errors when that is not possible here (an
    /// unattended run: the message names `tascer mcp login`).
    pub fn recover<'a>(
        &'a self,
        challenge: &'a str,
        sent: Option<&'a str>,
        insufficient: bool,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.recover_now(challenge, sent, insufficient))
    }

    async fn recover_now(
        &self,
        challenge: &str,
        sent: Option<&str>,
        insufficient: bool,
    ) -> Result<(), AuthError> {
        let result = self.try_recover(challenge, sent, insufficient).await;
        *self.last_failure.lock() = result.as_ref().err().map(|e| match e {
            AuthError::AuthorizationFailed(m) => m.clone(),
            other => other.to_string(),
        });
        result
    }

    /// Why the last recovery failed, once.
    pub fn take_failure(&self) -> Option<String> {
        self.last_failure.lock().take()
    }

    async fn try_recover(
        &self,
        challenge: &str,
        sent: Option<&str>,
        insufficient: bool,
    ) -> Result<(), AuthError> {
        let _flow = self.flow.lock().await;
        // Another request may have logged in meanwhile.
        if let Some(current) = self.token().await?
            && Some(current.as_str()) != sent
        {
            return Ok(());
        }
        if self.failures.fetch_add(1, Ordering::SeqCst) >= MAX_AUTHORIZATIONS {
            return Err(Self::failed(format!(
                "still refuses access after {MAX_AUTHORIZATIONS} authorizations{}",
                if insufficient {
                    " (insufficient scope)"
                } else {
                    ""
                }
            )));
        }
        if !insufficient && sent.is_some() {
            let refreshed = match self.manager.lock().await.as_ref() {
                Some(manager) => manager
                    .refresh_token()
                    .await
                    .ok()
                    .map(|r| r.access_token().secret().clone()),
                None => None,
            };
            if refreshed.is_some_and(|t| Some(t.as_str()) != sent) {
                return Ok(());
            }
        }
        match self.config.grant {
            OAuthGrant::ClientCredentials => self.client_credentials(Some(challenge)).await,
            OAuthGrant::CrossAppAccess => self.cross_app_access(Some(challenge)).await,
            _ => self.authorize(Some(challenge)).await.map(|_| ()),
        }
    }

    /// Logs in now (`tascer mcp login`); returns the granted scopes.
    pub fn login(&self) -> BoxFuture<'_, Result<Vec<String>, McpError>> {
        Box::pin(self.login_now())
    }

    async fn login_now(&self) -> Result<Vec<String>, McpError> {
        let _flow = self.flow.lock().await;
        let challenge = self.probe_challenge().await;
        let result = match self.config.grant {
            OAuthGrant::ClientCredentials => self
                .client_credentials(challenge.as_deref())
                .await
                .map(|()| self.granted.lock().clone()),
            OAuthGrant::CrossAppAccess => self
                .cross_app_access(challenge.as_deref())
                .await
                .map(|()| self.granted.lock().clone()),
            _ => self.authorize(challenge.as_deref()).await,
        };
        result.map_err(|e| McpError::Auth {
            server: self.server.clone(),
            message: e.to_string(),
        })
    }

    /// The `WWW-Authenticate` challenge of an unauthenticated `initialize`
    /// (scope hints and the resource metadata URL), when the server sends one.
    async fn probe_challenge(&self) -> Option<String> {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "tascer", "version": env!("CARGO_PKG_VERSION")}}
        });
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .ok()?;
        if !matches!(response.status().as_u16(), 401 | 403) {
            return None;
        }
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Authorization code with PKCE through the browser and the loopback
    /// redirect.
    async fn authorize(&self, challenge: Option<&str>) -> Result<Vec<String>, AuthError> {
        let Some(browser) = self.options.browser.clone() else {
            return Err(Self::failed(self.login_hint()));
        };
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        let metadata = resolve(&manager, &self.url, challenge).await?;
        manager.set_metadata(metadata.clone());
        let loopback = Loopback::bind(self.config.callback_port)
            .await
            .map_err(|e| Self::failed(format!("cannot listen for the OAuth redirect: {e}")))?;
        let redirect = loopback.redirect_uri().to_owned();
        let request = AuthorizationRequest::new(redirect.clone())
            .with_client_name(self.options.client_name.clone());
        let request = self.with_scopes(request, challenge);
        let request = self
            .with_client(&mut manager, &metadata, request, &redirect)
            .await?;
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| e)?;
        browser
            .open(session.get_authorization_url())
            .await
            .map_err(|e| Self::failed(format!("cannot open the authorization URL: {e}")))?;
        let Some(callback) = loopback.wait(self.options.callback_timeout).await else {
            return Err(Self::failed(format!(
                "no redirect came back to {redirect} within {}s",
                self.options.callback_timeout.as_secs()
            )));
        };
        session.handle_callback_url(&callback).await?;
        let scopes = session.auth_manager.get_current_scopes().await;
        *self.granted.lock() = scopes.clone();
        *self.manager.lock().await = Some(session.auth_manager);
        self.loaded.store(true, Ordering::SeqCst);
        tracing::info!(server = %self.server, scopes = ?scopes, "OAuth login done");
        Ok(scopes)
    }

    /// The configured scopes; else, after an earlier authorization, those
    /// plus the challenged ones (step-up); else rmcp's initial selection
    /// (challenge, then resource metadata).
    fn with_scopes(
        &self,
        request: AuthorizationRequest,
        challenge: Option<&str>,
    ) -> AuthorizationRequest {
        if !self.config.scopes.is_empty() {
            return request.with_scopes(self.config.scopes.clone());
        }
        let mut scopes = self.granted.lock().clone();
        if scopes.is_empty() {
            return request.with_initial_scope_selection();
        }
        let challenged = challenge.and_then(|c| {
            let base = reqwest::Url::parse(&self.url).ok()?;
            WWWAuthenticateParams::parse(c, &base).scope
        });
        for scope in challenged.iter().flat_map(|s| s.split_whitespace()) {
            if !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        }
        request.with_scopes(scopes)
    }

    /// Which client logs in: the configured one, a client ID metadata
    /// document, the registration made for a fixed callback port, or a
    /// new dynamic registration (its ID and secret are stored for refresh).
    async fn with_client(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        request: AuthorizationRequest,
        redirect: &str,
    ) -> Result<AuthorizationRequest, AuthError> {
        let preregistered = |request: AuthorizationRequest, id: String, secret: Option<String>| {
            let request = request.with_preregistered_client(id);
            match secret {
                Some(secret) => request.with_client_secret(secret),
                None => request,
            }
        };
        if let Some(id) = &self.config.client_id {
            return Ok(preregistered(
                request,
                id.clone(),
                self.config.client_secret.clone(),
            ));
        }
        let cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(url) = &self.config.client_metadata_url
            && cimd
        {
            return Ok(request.with_client_metadata_url(url.clone()));
        }
        // A registration names its redirect URI: reuse it only when the
        // port is fixed.
        if self.config.callback_port.is_some()
            && let Some(r) = self.store.registration(&metadata.token_endpoint)
        {
            return Ok(preregistered(request, r.client_id, r.client_secret));
        }
        if metadata.registration_endpoint.is_none() {
            return Err(AuthError::RegistrationFailed(format!(
                "the authorization server of MCP server '{}' offers no dynamic client \
                 registration: set \"oauth\": {{\"clientId\": …}} in the server's config",
                self.server
            )));
        }
        let registered = manager
            .register_client(&self.options.client_name, redirect, &[])
            .await?;
        self.store
            .set_registration(Registration {
                token_endpoint: metadata.token_endpoint.clone(),
                client_id: registered.client_id.clone(),
                client_secret: registered.client_secret.clone(),
            })
            .map_err(AuthError::CredentialStoreError)?;
        Ok(preregistered(
            request,
            registered.client_id,
            registered.client_secret,
        ))
    }

    /// The client-credentials grant (client secret or `private_key_jwt`).
    async fn client_credentials(&self, challenge: Option<&str>) -> Result<(), AuthError> {
        let Some(client_id) = self.config.client_id.clone() else {
            return Err(AuthError::ClientCredentialsError(
                "the client_credentials grant needs \"clientId\" in the server's oauth config"
                    .into(),
            ));
        };
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        let metadata = resolve(&manager, &self.url, challenge).await?;
        manager.set_metadata(metadata);
        let scopes = self.config.scopes.clone();
        let resource = Some(self.url.clone());
        let config = match self.private_key()? {
            Some(key) => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: key.into_bytes(),
                signing_algorithm: self.signing_algorithm()?,
                token_endpoint_audience: None,
                scopes,
                resource,
            },
            None => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: self.config.client_secret.clone().ok_or_else(|| {
                    AuthError::ClientCredentialsError(
                        "the client_credentials grant needs \"clientSecret\" or a private key \
                         in the server's oauth config"
                            .into(),
                    )
                })?,
                scopes,
                resource,
            },
        };
        manager.validate_client_credentials_metadata(&config)?;
        manager.configure_client_credentials(&config)?;
        // rmcp's private_key_jwt exchange future is not `Send` (it holds a
        // form serializer across an await): run it on a blocking thread.
        let runtime = tokio::runtime::Handle::current();
        let (manager, token) = tokio::task::spawn_blocking(move || {
            let token = runtime.block_on(manager.exchange_client_credentials(&config));
            (manager, token)
        })
        .await
        .map_err(|e| AuthError::InternalError(e.to_string()))?;
        let token = token?;
        let scopes = token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        *self.granted.lock() = scopes;
        *self.manager.lock().await = Some(manager);
        self.loaded.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Enterprise-managed authorization (cross-app access).
    async fn cross_app_access(&self, challenge: Option<&str>) -> Result<(), AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        manager.set_credential_store(self.store.clone());
        let metadata = resolve(&manager, &self.url, challenge).await?;
        manager.set_metadata(metadata.clone());
        let credentials = cross_app::exchange(&self.config, &metadata, &self.url).await?;
        *self.granted.lock() = credentials.granted_scopes.clone();
        let client_id = credentials.client_id.clone();
        self.store.save(credentials).await?;
        manager.configure_client_id(&client_id)?;
        *self.manager.lock().await = Some(manager);
        self.loaded.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn private_key(&self) -> Result<Option<String>, AuthError> {
        if let Some(pem) = &self.config.private_key_pem {
            return Ok(Some(pem.clone()));
        }
        let Some(path) = &self.config.private_key_file else {
            return Ok(None);
        };
        std::fs::read_to_string(path).map(Some).map_err(|e| {
            AuthError::ClientCredentialsError(format!("cannot read {}: {e}", path.display()))
        })
    }

    fn signing_algorithm(&self) -> Result<JwtSigningAlgorithm, AuthError> {
        Ok(
            match self.config.signing_algorithm.as_deref().unwrap_or("ES256") {
                "ES256" => JwtSigningAlgorithm::ES256,
                "ES384" => JwtSigningAlgorithm::ES384,
                "RS256" => JwtSigningAlgorithm::RS256,
                "RS384" => JwtSigningAlgorithm::RS384,
                "RS512" => JwtSigningAlgorithm::RS512,
                other => {
                    return Err(AuthError::ClientCredentialsError(format!(
                        "unsupported signing algorithm {other:?} (ES256, ES384, RS256, RS384, RS512)"
                    )));
                }
            },
        )
    }
}
