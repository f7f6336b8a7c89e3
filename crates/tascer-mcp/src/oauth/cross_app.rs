//! Enterprise-managed authorization (cross-app access, SEP-990) through
//! rmcp's `enterprise` module: the IdP's ID token becomes an ID-JAG at the
//! IdP, which becomes an access token at the server's authorization server.

use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::basic::BasicTokenType;
use oauth2::{ClientSecret, StandardTokenResponse};
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, OAuthTokenResponse, StoredCredentials,
    VendorExtraTokenFields, default_oauth_http_client,
};

use super::config::OAuthConfig;

fn missing(field: &str) -> AuthError {
    AuthError::AuthorizationFailed(format!(
        "cross-app access needs \"{field}\" in the server's oauth config"
    ))
}

fn required<'a>(value: &'a Option<String>, field: &str) -> Result<&'a str, AuthError> {
    value.as_deref().ok_or_else(|| missing(field))
}

/// The user's ID token from the config (inline or file).
fn id_token(config: &OAuthConfig) -> Result<String, AuthError> {
    if let Some(token) = &config.id_token {
        return Ok(token.clone());
    }
    let path = config
        .id_token_file
        .as_ref()
        .ok_or_else(|| missing("idTokenFile"))?;
    std::fs::read_to_string(path)
        .map(|t| t.trim().to_owned())
        .map_err(|e| AuthError::AuthorizationFailed(format!("cannot read {}: {e}", path.display())))
}

/// Runs both exchanges for `resource` (the MCP server URL) against the
/// authorization server described by `metadata`; returns the credentials
/// to store.
pub(crate) async fn exchange(
    config: &OAuthConfig,
    metadata: &AuthorizationMetadata,
    resource: &str,
) -> Result<StoredCredentials, AuthError> {
    let client_id = required(&config.client_id, "clientId")?;
    let issuer = metadata.issuer.clone().ok_or_else(|| {
        AuthError::MetadataError("the authorization server metadata has no issuer".into())
    })?;
    let idp_auth = match &config.idp_client_secret {
        Some(s) => EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(s.clone())),
        None => EmaClientAuthentication::None,
    };
    let idp = EmaAuthorizationServer::new(
        required(&config.idp_issuer, "idpIssuer")?,
        required(&config.idp_token_endpoint, "idpTokenEndpoint")?,
        required(&config.idp_client_id, "idpClientId")?,
    )
    .with_client_authentication(idp_auth);
    let resource_auth = match &config.client_secret {
        Some(s) => EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(s.clone())),
        None => EmaClientAuthentication::None,
    };
    let resource_as =
        EmaAuthorizationServer::new(issuer.clone(), metadata.token_endpoint.clone(), client_id)
            .with_client_authentication(resource_auth);
    let token = id_token(config)?;
    let http = default_oauth_http_client()?;
    let mut request = EmaExchangeRequest::new_with_id_token(idp, resource_as, resource, &token);
    if !config.scopes.is_empty() {
        request = request.with_scopes(config.scopes.clone());
    }
    let access = request
        .exchange(&http, &http)
        .await
        .map_err(|e| AuthError::AuthorizationFailed(format!("cross-app access: {e}")))?;
    let mut response: OAuthTokenResponse = StandardTokenResponse::new(
        access.access_token,
        BasicTokenType::Bearer,
        VendorExtraTokenFields::default(),
    );
    response.set_expires_in(access.expires_in.as_ref());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Ok(StoredCredentials::new(
        client_id.to_owned(),
        Some(response),
        access.scopes.into_iter().collect(),
        Some(now),
    )
    .with_issuer(Some(issuer)))
}
