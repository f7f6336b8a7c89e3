//! Who may ask: the address the server binds (loopback unless the user
//! allows the network), the access token every API request carries, and
//! the `Host` header (a DNS-rebinding guard).

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;

use crate::error::{ApiError, ServeError};

/// The variable that sets the access token instead of a random one.
pub const TOKEN_ENV: &str = "TASCER_SERVE_TOKEN";

/// The fewest characters a token given in [`TOKEN_ENV`] may have.
pub const MIN_TOKEN_CHARS: usize = 16;

/// What the access checks need: the token and whether hosts other than
/// the loopback names are accepted.
#[derive(Debug, Clone)]
pub struct Access {
    token: String,
    allow_remote: bool,
}

impl Access {
    /// Checks with `token`; `allow_remote` also accepts IP-literal hosts
    /// (a DNS-rebinding attack needs a name, so an address is safe).
    pub fn new(token: String, allow_remote: bool) -> Self {
        Self {
            token,
            allow_remote,
        }
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// True when `headers` carry `Authorization: Bearer <the token>`.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return false;
        };
        let Ok(value) = value.to_str() else {
            return false;
        };
        let Some(given) = value.strip_prefix("Bearer ") else {
            return false;
        };
        given.trim().as_bytes().ct_eq(self.token.as_bytes()).into()
    }

    /// True when the `Host` header names this machine's loopback
    /// (`localhost`, `127.0.0.1`, `[::1]`, any port) or, with
    /// `allow_remote`, any IP address.
    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let name = host_name(host);
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || self.allow_remote,
            Err(_) => false,
        }
    }
}

/// The host part of a `Host` header value (`[::1]:8080` → `[::1]`).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// The access token: [`TOKEN_ENV`] when set (at least
/// [`MIN_TOKEN_CHARS`] characters, no whitespace), else 32 random bytes in
/// hex.
pub fn token_from(env: Option<String>) -> Result<String, ServeError> {
    if let Some(token) = env.filter(|t| !t.is_empty()) {
        if token.chars().count() < MIN_TOKEN_CHARS {
            return Err(ServeError::Token(
                "is too short: use at least 16 characters",
            ));
        }
        if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ServeError::Token(
                "must not contain spaces or control characters",
            ));
        }
        return Ok(token);
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ServeError::Random(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// Refuses a non-loopback `addr` unless `allow_remote`; with it, returns
/// the warning to show.
pub fn check_bind(addr: SocketAddr, allow_remote: bool) -> Result<Option<String>, ServeError> {
    if addr.ip().is_loopback() {
        return Ok(None);
    }
    if !allow_remote {
        return Err(ServeError::Remote { addr });
    }
    Ok(Some(format!(
        "serving on {addr}, which is not a loopback address: anyone who can reach it and has \
         the token can read every recorded session (the traffic is plain HTTP)"
    )))
}

/// Middleware on every route: a request whose `Host` is not allowed gets
/// a 403 (the page included).
pub async fn require_host(State(access): State<Access>, request: Request, next: Next) -> Response {
    if !access.host_allowed(request.headers()) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "this server answers only requests addressed to localhost, 127.0.0.1 or [::1] \
             (the Host header names another host)",
        )
        .into_response();
    }
    next.run(request).await
}

/// Middleware on the API: a request without the token gets a 401.
pub async fn require_token(State(access): State<Access>, request: Request, next: Next) -> Response {
    if !access.authorized(request.headers()) {
        let mut response = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong access token: send `Authorization: Bearer <token>` with the \
             token `tascer serve` printed",
        )
        .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_loopback_hosts_pass_unless_remote_is_allowed() {
        let local = Access::new("t".repeat(16), false);
        for ok in [
            "localhost:80",
            "127.0.0.1:4000",
            "[::1]:9",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(local.host_allowed(&headers(&[(header::HOST, ok)])), "{ok}");
        }
        for bad in [
            "evil.example:80",
            "10.0.0.2:80",
            "localhost.evil.example",
            "",
        ] {
            assert!(
                !local.host_allowed(&headers(&[(header::HOST, bad)])),
                "{bad}"
            );
        }
        assert!(!local.host_allowed(&HeaderMap::new()));
        let remote = Access::new("t".repeat(16), true);
        assert!(remote.host_allowed(&headers(&[(header::HOST, "10.0.0.2:80")])));
        assert!(!remote.host_allowed(&headers(&[(header::HOST, "evil.example")])));
    }

    #[test]
    fn the_bearer_token_must_match_exactly() {
        let access = Access::new("0123456789abcdef".into(), false);
        let auth = |v: &str| headers(&[(header::AUTHORIZATION, v)]);
        assert!(access.authorized(&auth("Bearer 0123456789abcdef")));
        assert!(!access.authorized(&auth("Bearer 0123456789abcde")));
        assert!(!access.authorized(&auth("Basic 0123456789abcdef")));
        assert!(!access.authorized(&HeaderMap::new()));
    }

    #[test]
    fn tokens_are_random_or_given_and_long_enough() {
        let a = token_from(None).unwrap();
        let b = token_from(None).unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(token_from(Some("x".repeat(20))).unwrap(), "x".repeat(20));
        assert!(token_from(Some("short".into())).is_err());
        assert!(token_from(Some("has a space in it ok".into())).is_err());
    }

    #[test]
    fn a_remote_bind_is_refused_unless_allowed() {
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
        assert!(check_bind(lo, false).unwrap().is_none());
        assert!(matches!(
            check_bind(any, false),
            Err(ServeError::Remote { .. })
        ));
        assert!(check_bind(any, true).unwrap().is_some());
    }
}
