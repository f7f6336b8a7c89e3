//! An HTTP client built on first use.

use std::sync::{Arc, OnceLock};

/// How a [`LazyClient`] configures its client.
type Configure = dyn Fn() -> reqwest::ClientBuilder + Send + Sync;

/// A `reqwest::Client` built the first time it is needed, then shared by
/// all clones. Building one loads the system's TLS root certificates
/// (hundreds of files on Linux), which a run that never fetches a URL must
/// not pay for at start-up.
#[derive(Clone)]
pub(crate) struct LazyClient {
    cell: Arc<OnceLock<Result<reqwest::Client, String>>>,
    configure: Arc<Configure>,
}

impl LazyClient {
    /// A client that `configure` sets up when it is first used.
    pub(crate) fn new(
        configure: impl Fn() -> reqwest::ClientBuilder + Send + Sync + 'static,
    ) -> Self {
        LazyClient {
            cell: Arc::new(OnceLock::new()),
            configure: Arc::new(configure),
        }
    }

    /// The client, built now if it was not yet; the error says why it
    /// cannot be built.
    pub(crate) fn get(&self) -> Result<&reqwest::Client, String> {
        self.cell
            .get_or_init(|| {
                (self.configure)()
                    .build()
                    .map_err(|e| format!("Cannot build the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(String::clone)
    }
}

impl std::fmt::Debug for LazyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyClient")
            .field("built", &self.cell.get().is_some())
            .finish_non_exhaustive()
    }
}
