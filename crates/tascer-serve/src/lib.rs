//! `tascer serve`: a local, read-only HTTP API and web page over a Tascer
//! home's store (docs/viewer.md).
//!
//! The server binds loopback unless told otherwise ([`check_bind`]), asks
//! every API request for the access token ([`token_from`]) and answers only
//! requests addressed to a loopback name (a DNS-rebinding guard). It reads:
//! the session list ([`sessions`]), one session as a timeline
//! ([`timeline`]), the ledger's verification and the attestation (the same
//! work as `tascer verify` and `tascer export`, from
//! `tascer_ledger::audit`), and the contracts ([`contracts`]). The API is
//! described by an OpenAPI 3.1 document ([`openapi::document`], served at
//! `/api/openapi.json`); the page is three static files built into the
//! binary.

pub mod access;
pub mod contracts;
pub mod error;
pub mod home;
pub mod openapi;
pub mod routes;
pub mod sessions;
pub mod timeline;

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

pub use access::{Access, MIN_TOKEN_CHARS, TOKEN_ENV, check_bind, token_from};
pub use contracts::ContractSources;
pub use error::{ApiError, ServeError};

use crate::contracts::Contracts;
use crate::home::Home;
use crate::routes::{AppState, router};

/// What to serve, and where.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The Tascer home whose store is read.
    pub home: PathBuf,
    /// The address to bind (port 0: any free port).
    pub addr: SocketAddr,
    /// Serve on a non-loopback address.
    pub allow_remote: bool,
    /// The access token.
    pub token: String,
    /// The contracts to show.
    pub contracts: ContractSources,
}

/// A bound server, not yet answering.
#[derive(Debug)]
pub struct Server {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    token: String,
    warning: Option<String>,
    app: axum::Router,
}

impl Server {
    /// Checks the address (refusing a non-loopback one unless
    /// `allow_remote`) and binds it.
    pub async fn bind(options: ServeOptions) -> Result<Server, ServeError> {
        check_bind(options.addr, options.allow_remote)?;
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|source| ServeError::Io {
                addr: options.addr,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Io {
            addr: options.addr,
            source,
        })?;
        // The warning names the port bound (not the 0 asked for).
        let warning = check_bind(addr, options.allow_remote)?;
        let state = AppState {
            home: Arc::new(Home::new(options.home)),
            contracts: Arc::new(Contracts::new(options.contracts)),
        };
        let access = Access::new(options.token.clone(), options.allow_remote);
        Ok(Server {
            listener,
            addr,
            token: options.token,
            warning,
            app: router(state, access),
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address with the token: what to open in a browser. An
    /// unspecified address (`0.0.0.0`, `::`) is shown as 127.0.0.1.
    pub fn url(&self) -> String {
        let ip = match self.addr.ip() {
            ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            ip => ip,
        };
        let host = match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        format!("http://{host}:{}/?token={}", self.addr.port(), self.token)
    }

    /// The warning to show about the address (a non-loopback one).
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Answers requests until `shutdown` completes.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let addr = self.addr;
        axum::serve(self.listener, self.app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| ServeError::Io { addr, source })
    }
}
