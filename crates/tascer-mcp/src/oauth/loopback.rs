//! The loopback redirect: a one-shot HTTP listener on 127.0.0.1 that
//! receives the authorization server's redirect (`/callback?code=…&state=…`)
//! and hands the URL to the login.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::response::Html;
use axum::routing::get;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

type Slot = Arc<Mutex<Option<oneshot::Sender<String>>>>;

/// A listening loopback redirect.
pub(crate) struct Loopback {
    redirect_uri: String,
    received: Option<oneshot::Receiver<String>>,
    stop: Option<CancellationToken>,
}

impl Loopback {
    /// Listens on `127.0.0.1:port` (any free port when `None`).
    pub async fn bind(port: Option<u16>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((
            Ipv4Addr::LOCALHOST,
            port.unwrap_or(0),
        )))
        .await?;
        let addr = listener.local_addr()?;
        let redirect_uri = format!("http://127.0.0.1:{}/callback", addr.port());
        let (tx, received) = oneshot::channel();
        let slot: Slot = Arc::new(Mutex::new(Some(tx)));
        let base = redirect_uri.clone();
        let app = Router::new()
            .route(
                "/callback",
                get(move |State(slot): State<Slot>, RawQuery(query): RawQuery| {
                    let base = base.clone();
                    async move {
                        let url = match query {
                            Some(q) => format!("{base}?{q}"),
                            None => base,
                        };
                        if let Some(tx) = slot.lock().take() {
                            let _ = tx.send(url);
                        }
                        Html(
                            "<!doctype html><title>Tascer</title><p>Tascer received the \
                             authorization. You can close this window.</p>",
                        )
                    }
                }),
            )
            .with_state(slot);
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stopped.cancelled().await })
                .await;
        });
        Ok(Loopback {
            redirect_uri,
            received: Some(received),
            stop: Some(stop),
        })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The full redirect URL, once the browser comes back (`None` after
    /// `timeout`).
    pub async fn wait(mut self, timeout: Duration) -> Option<String> {
        let received = self.received.take()?;
        let url = tokio::time::timeout(timeout, received)
            .await
            .ok()
            .and_then(Result::ok);
        // Let the page reach the browser before the listener goes.
        if let Some(stop) = self.stop.take() {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                stop.cancel();
            });
        }
        url
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        if let Some(stop) = &self.stop {
            stop.cancel();
        }
    }
}
