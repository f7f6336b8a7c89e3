//! What can go wrong: starting the server ([`ServeError`]) and answering
//! one request ([`ApiError`], a JSON body `{"error": …}` with its status).

use std::net::SocketAddr;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tascer_core::error_chain;

/// The server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without `--allow-remote`.
    #[error(
        "refusing to serve on {addr}: it is not a loopback address, and the API shows every \
         recorded session (pass --allow-remote to serve it to the network anyway)"
    )]
    Remote {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The token given in `TASCER_SERVE_TOKEN` cannot be used.
    #[error("TASCER_SERVE_TOKEN {0}")]
    Token(&'static str),
    /// No random token could be drawn.
    #[error("cannot draw a random access token: {0}")]
    Random(String),
    /// The address could not be bound, or serving failed.
    #[error("cannot serve on {addr}")]
    Io {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A request's failure: its status and a message for the JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, in one line.
    pub message: String,
}

impl ApiError {
    /// A 400: the request's parameters are wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 404: no such session (or other thing).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// A 500 from an error of the store or the ledger: its whole chain.
    pub fn internal(err: &(dyn std::error::Error + 'static)) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, error_chain(err))
    }

    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.message});
        (self.status, Json(body)).into_response()
    }
}
