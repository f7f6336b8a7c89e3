//! Authorization server discovery: rmcp's (protected-resource metadata,
//! then RFC 8414 / OpenID discovery, then the 2025-03-26 default
//! endpoints), plus one compatibility case.
//!
//! A 2025-03-26 server without protected-resource metadata is its own
//! authorization server; some publish RFC 8414 metadata at their origin
//! whose `issuer` carries a path (`https://host/oauth`), which rmcp's
//! issuer check rejects. That metadata is accepted when the issuer and
//! every endpoint are on the MCP server's own origin (no other party is
//! involved, so there is no mix-up to defend against); anything else keeps
//! rmcp's error.

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationMetadata};

/// The authorization server metadata of the server at `url`.
pub(crate) async fn resolve(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, AuthError> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => Ok(resolution.metadata),
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => match same_origin_metadata(url, &expected_issuer, &received_issuer).await {
            Some(metadata) => {
                tracing::warn!(
                    url,
                    issuer = %received_issuer,
                    "accepting the MCP server's own authorization server metadata although \
                     its issuer has a path (2025-03-26 compatibility)"
                );
                Ok(metadata)
            }
            None => Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }),
        },
        Err(e) => Err(e),
    }
}

fn origin(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    Some(url.origin().ascii_serialization())
}

async fn same_origin_metadata(
    url: &str,
    expected_issuer: &str,
    received_issuer: &str,
) -> Option<AuthorizationMetadata> {
    let server = origin(url)?;
    if origin(expected_issuer)? != server || origin(received_issuer)? != server {
        return None;
    }
    let response = reqwest::Client::new()
        .get(format!("{server}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata = response.json().await.ok()?;
    let endpoints = [
        Some(metadata.authorization_endpoint.as_str()),
        Some(metadata.token_endpoint.as_str()),
        metadata.registration_endpoint.as_deref(),
        metadata.issuer.as_deref(),
    ];
    let same_origin = endpoints
        .into_iter()
        .flatten()
        .all(|e| origin(e).as_deref() == Some(server.as_str()));
    same_origin.then_some(metadata)
}
