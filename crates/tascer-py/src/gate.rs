//! Python functions as gates: `register_gate(name)` on the Python side
//! hands the function here; the pipeline runs it like any gate.
//!
//! The function is called as `gate(call, phase)` with `call` a dict
//! (`tool_name`, `input`, `cwd`, `changed_files`, and after the tool
//! `output` and `is_error`) and `phase` `"pre"` or `"post"`. It returns
//! `True`/`None` (pass), `False` (fail), or `(passed, message)`. An
//! exception is a failed gate whose message names it, never a crash; the
//! gate runner's timeout (`timeout_ms`) bounds the call.

use std::sync::Arc;

use futures::future::BoxFuture;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};
use serde_json::{Value, json};
use tascer::guard::gates::{Gate, GateContext, GateResult, Phase};

/// A gate that calls a Python function.
pub struct PythonGate {
    inner: Arc<Function>,
}

/// The gate's name and its function (shared with the blocking thread that
/// calls it, so no GIL is needed to hand it over).
struct Function {
    name: String,
    function: Py<PyAny>,
}

impl PythonGate {
    /// The gate `name` calling `function`.
    pub fn new(name: String, function: Py<PyAny>) -> Self {
        PythonGate {
            inner: Arc::new(Function { name, function }),
        }
    }
}

impl Function {
    /// Calls the function with the GIL held; its verdict.
    fn call(&self, call: &Value, phase: &str) -> GateResult {
        Python::attach(|py| {
            let outcome = to_python(py, call)
                .and_then(|call| self.function.bind(py).call1((call, phase)))
                .and_then(|returned| verdict(&returned));
            match outcome {
                Ok((true, message)) => GateResult::pass(&self.name, message),
                Ok((false, message)) => GateResult::fail(&self.name, message),
                Err(err) => GateResult::fail(
                    &self.name,
                    format!("the Python gate raised {}", describe(py, &err)),
                ),
            }
        })
    }
}

/// The call as the function sees it.
fn call_value(ctx: &GateContext) -> Value {
    let mut call = json!({
        "tool_name": ctx.tool_name,
        "input": ctx.input,
        "cwd": ctx.cwd.display().to_string(),
        "changed_files": ctx.changed_files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
    });
    if let Some(output) = &ctx.output {
        call["output"] = Value::String(output.content.to_text());
        call["is_error"] = Value::Bool(output.is_error);
    }
    call
}

/// `value` as a Python object (through `json.loads`).
fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}

/// What the function returned: `(passed, message)`.
fn verdict(returned: &Bound<'_, PyAny>) -> PyResult<(bool, String)> {
    if returned.is_none() {
        return Ok((true, "passed".to_owned()));
    }
    if let Ok(passed) = returned.cast::<PyBool>() {
        let passed = passed.is_true();
        let message = if passed { "passed" } else { "rejected" };
        return Ok((passed, message.to_owned()));
    }
    if let Ok(pair) = returned.cast::<PyTuple>()
        && pair.len() == 2
    {
        let passed = pair.get_item(0)?.is_truthy()?;
        let message = pair.get_item(1)?.str()?.to_string();
        return Ok((passed, message));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "a gate returns True, False, None or (passed, message), not {}",
        returned.get_type().name()?
    )))
}

/// `TypeName: message` of a Python exception.
fn describe(py: Python<'_>, err: &PyErr) -> String {
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an exception".to_owned());
    format!("{kind}: {}", err.value(py))
}

impl Gate for PythonGate {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        let call = call_value(ctx);
        let phase = match ctx.phase {
            Phase::Pre => "pre",
            Phase::Post => "post",
        };
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            // The GIL may be held elsewhere for a while: wait for it on a
            // blocking thread, never on the runtime's workers.
            let name = inner.name.clone();
            match tokio::task::spawn_blocking(move || inner.call(&call, phase)).await {
                Ok(result) => result,
                Err(err) => GateResult::fail(name, format!("the Python gate died: {err}")),
            }
        })
    }
}
