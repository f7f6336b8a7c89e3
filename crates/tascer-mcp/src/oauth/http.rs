//! [`AuthedHttp`]: rmcp's streamable HTTP client (reqwest) with OAuth: it
//! sends the server's access token and, when the server answers 401 or
//! 403 `insufficient_scope`, refreshes or authorizes again
//! ([`ServerAuth::recover`]) and repeats the request, mid-session.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};

use super::ServerAuth;

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;
type SseStream = BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

/// reqwest with one server's OAuth.
#[derive(Clone)]
pub(crate) struct AuthedHttp {
    http: reqwest::Client,
    auth: Arc<ServerAuth>,
}

impl AuthedHttp {
    /// Requests through `http`, authorized by `auth`.
    pub fn new(http: reqwest::Client, auth: Arc<ServerAuth>) -> Self {
        AuthedHttp { http, auth }
    }

    /// Runs `call` with the current token; on a 401/403 challenge lets
    /// `auth` recover and runs it again (`auth` bounds the attempts).
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        loop {
            let token = self.auth.token().await.map_err(HttpError::Auth)?;
            let result = call(token.clone()).await;
            let (challenge, insufficient) = match &result {
                Err(StreamableHttpError::AuthRequired(e)) => {
                    (e.www_authenticate_header.clone(), false)
                }
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    (e.www_authenticate_header.clone(), true)
                }
                Ok(_) => {
                    if token.is_some() {
                        self.auth.succeeded();
                    }
                    return result;
                }
                Err(_) => return result,
            };
            self.auth
                .recover(&challenge, token.as_deref(), insufficient)
                .await
                .map_err(HttpError::Auth)?;
        }
    }
}

impl StreamableHttpClient for AuthedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.authorized(|token| {
            self.http.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.authorized(|token| {
            self.http.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        self.authorized(|token| {
            self.http.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, HttpError> {
        self.authorized(|token| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        self.authorized(|token| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
