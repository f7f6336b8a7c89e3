//! The `oauth` object of an HTTP server's config (Claude Code's
//! `clientId`/`callbackPort`, plus what the MCP authorization spec's
//! other registration and grant options need).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which OAuth grant gets the server's access token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OAuthGrant {
    /// Authorization code with PKCE, through the browser and a loopback
    /// redirect (needs `tascer mcp login` or an interactive session).
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine): `clientId` with
    /// `clientSecret`, or with a private key (`private_key_jwt`).
    ClientCredentials,
    /// Enterprise-managed authorization (cross-app access, SEP-990): the
    /// enterprise IdP's ID token (`idToken`/`idTokenFile`) is exchanged at
    /// the IdP (`idp*`) for an ID-JAG, which the server's authorization
    /// server exchanges for an access token (`clientId`/`clientSecret`).
    CrossAppAccess,
}

impl OAuthGrant {
    fn is_default(&self) -> bool {
        *self == OAuthGrant::AuthorizationCode
    }
}

/// OAuth settings of one HTTP server; every field is optional.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A pre-registered client ID (no dynamic registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The pre-registered client's secret (confidential clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Fixed port of the loopback redirect `http://127.0.0.1:PORT/callback`
    /// (for a client registered with that redirect URI); default: any
    /// free port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// Scopes to request; default: the server's `WWW-Authenticate`
    /// challenge, else its protected-resource metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// An HTTPS URL of a client ID metadata document, used as the client
    /// ID when the authorization server supports those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The grant (default `authorization_code`).
    #[serde(default, skip_serializing_if = "OAuthGrant::is_default")]
    pub grant: OAuthGrant,
    /// PEM private key file for `private_key_jwt` client authentication
    /// (client credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
    /// The same key inline (PEM text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_pem: Option<String>,
    /// JWT signing algorithm of that key: ES256 (default), ES384, RS256,
    /// RS384 or RS512.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// Cross-app access: the enterprise IdP's issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_issuer: Option<String>,
    /// Cross-app access: the IdP's token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_token_endpoint: Option<String>,
    /// Cross-app access: Tascer's client ID at the IdP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_client_id: Option<String>,
    /// Cross-app access: that client's secret (public client without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_client_secret: Option<String>,
    /// Cross-app access: the IdP's ID token for the user, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    /// Cross-app access: a file holding that ID token (read at each use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_file: Option<PathBuf>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |v: &Option<String>| v.as_ref().map(|_| "<redacted>");
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(&self.client_secret))
            .field("callback_port", &self.callback_port)
            .field("scopes", &self.scopes)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("private_key_file", &self.private_key_file)
            .field("private_key_pem", &redacted(&self.private_key_pem))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field("idp_client_secret", &redacted(&self.idp_client_secret))
            .field("id_token", &redacted(&self.id_token))
            .field("id_token_file", &self.id_token_file)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn camel_case_shape_and_redacted_debug() {
        let c: OAuthConfig = serde_json::from_str(
            r#"{"clientId":"c","clientSecret":"s3cret","callbackPort":8765,"scopes":["a"],"grant":"client_credentials"}"#,
        )
        .unwrap();
        assert_eq!(c.client_id.as_deref(), Some("c"));
        assert_eq!(c.callback_port, Some(8765));
        assert_eq!(c.grant, OAuthGrant::ClientCredentials);
        assert!(!format!("{c:?}").contains("s3cret"));
        let back = serde_json::to_value(&c).unwrap();
        assert_eq!(back["clientSecret"], "s3cret");
        assert!(back.get("privateKeyPem").is_none());
        let d = serde_json::to_value(OAuthConfig::default()).unwrap();
        assert_eq!(d, serde_json::json!({}));
    }
}
