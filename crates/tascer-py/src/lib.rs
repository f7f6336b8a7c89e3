//! `tascer._tascer`: the Rust core of the `tascer` Python package.
//!
//! The Python side (`python/src/tascer/`) holds the user-facing API
//! (`query`, `TascerAgent`, `register_gate`, the message types); this module
//! gives it one class, [`Session`], over [`tascer::Client`]: the session runs
//! on a Tokio runtime of its own, every blocking call releases the GIL, and
//! values cross as JSON text (messages in the Claude Code stream-json shape,
//! the validation report, the verify report). Python gates run through
//! [`gate::PythonGate`].

mod gate;
mod options;

use std::sync::Arc;

use futures::StreamExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tascer::{Client, MessageStream};
use tokio::sync::Mutex;

/// What a session holds between calls: the client and the messages of the
/// current turn.
struct State {
    client: Option<Client>,
    stream: Option<MessageStream>,
}

/// One Tascer session: `Session(options_json, gates)`, then `query(prompt)`
/// and `next_message()` until it returns `None`.
#[pyclass(module = "tascer._tascer")]
struct Session {
    runtime: tokio::runtime::Runtime,
    state: Mutex<State>,
    session_id: String,
}

fn runtime_error(err: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(err.to_string())
}

#[pymethods]
impl Session {
    /// Opens a session. `options_json` is the JSON of the options
    /// (see `tascer._options`); `gates` are `(name, callable)` pairs.
    #[new]
    fn new(py: Python<'_>, options_json: &str, gates: Vec<(String, Py<PyAny>)>) -> PyResult<Self> {
        let value: serde_json::Value = serde_json::from_str(options_json)
            .map_err(|e| PyValueError::new_err(format!("options are not JSON: {e}")))?;
        let mut options = options::from_json(&value).map_err(PyValueError::new_err)?;
        for (name, callable) in gates {
            options = options.gate(Arc::new(gate::PythonGate::new(name, callable)));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(runtime_error)?;
        let client = py
            .detach(|| runtime.block_on(Client::connect(options)))
            .map_err(runtime_error)?;
        let session_id = client.session_id().to_owned();
        Ok(Session {
            runtime,
            state: Mutex::new(State {
                client: Some(client),
                stream: None,
            }),
            session_id,
        })
    }

    /// The session id.
    #[getter]
    fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Starts a turn with `prompt`; read it with `next_message`.
    fn query(&self, py: Python<'_>, prompt: String) -> PyResult<()> {
        py.detach(|| {
            self.runtime.block_on(async {
                let mut state = self.state.lock().await;
                let client = state.client.as_mut().ok_or_else(closed)?;
                client.query(prompt).await.map_err(runtime_error)?;
                state.stream = Some(client.receive_response());
                Ok(())
            })
        })
    }

    /// The next message of the current turn as JSON, or `None` after its
    /// result.
    fn next_message(&self, py: Python<'_>) -> PyResult<Option<String>> {
        py.detach(|| {
            self.runtime.block_on(async {
                let mut state = self.state.lock().await;
                let Some(stream) = state.stream.as_mut() else {
                    return Ok(None);
                };
                match stream.next().await {
                    Some(message) => serde_json::to_string(&message)
                        .map(Some)
                        .map_err(runtime_error),
                    None => {
                        state.stream = None;
                        Ok(None)
                    }
                }
            })
        })
    }

    /// The session's validation report (JSON): each tool call's record
    /// with its gates, evidence and proof, and the ledger head.
    fn validation_report(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            self.runtime.block_on(async {
                let state = self.state.lock().await;
                let client = state.client.as_ref().ok_or_else(closed)?;
                let report = client.validation_report().await.map_err(runtime_error)?;
                serde_json::to_string(&report).map_err(runtime_error)
            })
        })
    }

    /// Verifies the session's ledger (JSON of the verify report: `ok`,
    /// the entries checked, the first broken one).
    fn verify_proofs(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            self.runtime.block_on(async {
                let state = self.state.lock().await;
                let client = state.client.as_ref().ok_or_else(closed)?;
                let report = client.verify_proofs().await.map_err(runtime_error)?;
                serde_json::to_string(&report).map_err(runtime_error)
            })
        })
    }

    /// Ends the session (its ledger is closed; the store keeps it for
    /// `resume`). Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            self.runtime.block_on(async {
                let mut state = self.state.lock().await;
                state.stream = None;
                if let Some(client) = state.client.take() {
                    client.disconnect().await;
                }
            })
        });
    }
}

fn closed() -> PyErr {
    runtime_error("the session is closed")
}

/// The module `tascer._tascer`.
#[pymodule]
fn _tascer(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Session>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
