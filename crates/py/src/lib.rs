//! `tracelight._native`: the Python extension. Thin on purpose: a file or run folder is read by
//! the CLI's own functions (`tracelight_cli`), its reports are the CLI's `analyze --json` object
//! and `summary` Markdown, and its tables are that object's row arrays turned into Arrow buffers
//! ([`columns`]). The Python package (`python/tracelight`) wraps this in `Trace` / `Run`.

mod columns;
mod slices;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;
use tracelight_cli::analyze::{report_json, report_markdown};
use tracelight_cli::commands::{load, CliError};
use tracelight_cli::run::RunData;
use tracelight_core::ingest::Loaded;
use tracelight_core::warnings::WarningKind;

/// `tracelight.TraceError(message, file, reason)`: defined in Python (`tracelight._errors`) so
/// that it is a plain `ValueError` subclass with `file` and `reason` attributes.
fn trace_error(py: Python<'_>, e: &tracelight_core::Error) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("tracelight._errors")?.getattr("TraceError")?;
        let exc = cls.call1((e.to_string(), e.file.clone(), e.kind.to_string()))?;
        Ok(PyErr::from_value(exc))
    };
    make().unwrap_or_else(|err| err)
}

fn cli_error(py: Python<'_>, e: CliError) -> PyErr {
    match e {
        CliError::Input(e) => trace_error(py, &e),
        CliError::Usage(m) => PyValueError::new_err(m),
    }
}

/// The Arrow buffers of one column, as `(name, kind, length, null_count, buffers, children)`.
fn column_tuple<'py>(py: Python<'py>, c: &columns::Column) -> PyResult<Bound<'py, PyTuple>> {
    let buffers = PyList::empty(py);
    for b in &c.buffers {
        match b {
            Some(b) => buffers.append(PyBytes::new(py, b))?,
            None => buffers.append(py.None())?,
        }
    }
    let children = PyList::empty(py);
    for k in &c.children {
        children.append(column_tuple(py, k)?)?;
    }
    (c.name.as_str(), c.kind, c.len, c.nulls, buffers, children).into_pyobject(py)
}

/// The columns of the row array at `pointer` (`/ops`, `/memory/ops`) of a report object.
fn table_at<'py>(py: Python<'py>, v: &Value, pointer: &str) -> PyResult<Bound<'py, PyList>> {
    let Some(Value::Array(rows)) = v.pointer(pointer) else {
        return Err(PyTypeError::new_err(format!(
            "this report has no {pointer} table"
        )));
    };
    let cols = py.detach(|| columns::table(rows));
    columns_list(py, &cols)
}

fn columns_list<'py>(py: Python<'py>, cols: &[columns::Column]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for c in cols {
        out.append(column_tuple(py, c)?)?;
    }
    Ok(out)
}

/// One file read: a Kineto trace, a CUDA memory snapshot, a memory timeline or an execution trace.
#[pyclass(module = "tracelight._native", frozen)]
struct NativeFile {
    /// Kept as a one-element list: [`report_json`] takes the files of one command line.
    files: Vec<(String, Loaded)>,
    json: OnceLock<Value>,
}

impl NativeFile {
    fn json(&self, py: Python<'_>) -> &Value {
        self.json
            .get_or_init(|| py.detach(|| report_json(&self.files)))
    }
}

#[pymethods]
impl NativeFile {
    /// The format's label (`kineto`, `cuda_snapshot`, …), as in `analyze --json`'s `files`.
    fn format(&self) -> &'static str {
        self.files.first().map_or("", |(_, l)| l.format().label())
    }

    /// `tracelight analyze FILE --json`'s object, as compact JSON text.
    fn analyze_json(&self, py: Python<'_>) -> String {
        self.json(py).to_string()
    }

    /// The truncation warning of a trace cut short (the reader keeps what parsed, as the CLI
    /// does), so that Python can raise it as a warning at load time; `None` for a whole file.
    fn truncated(&self) -> Option<String> {
        let (_, Loaded::Trace(t)) = self.files.first()? else {
            return None;
        };
        t.warnings
            .iter()
            .find(|w| w.kind == WarningKind::Truncated)
            .map(|w| w.line())
    }

    /// `tracelight summary FILE`'s Markdown.
    fn summary(&self, py: Python<'_>) -> String {
        py.detach(|| report_markdown(&self.files))
    }

    /// Every slice of a Kineto trace as Arrow columns ([`slices::slices`]).
    fn slices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Some((_, Loaded::Trace(t))) = self.files.first() else {
            return Err(PyTypeError::new_err(format!(
                "slices() needs a Kineto trace, not a {}",
                self.format()
            )));
        };
        let cols = py.detach(|| slices::slices(t));
        columns_list(py, &cols)
    }

    /// The Arrow columns of the rows at `pointer` in the analyze object.
    fn table<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyList>> {
        table_at(py, self.json(py), pointer)
    }
}

/// A run folder read once ([`RunData`]).
#[pyclass(module = "tracelight._native", frozen)]
struct NativeRun {
    run: RunData,
    json: OnceLock<Value>,
}

impl NativeRun {
    fn json(&self, py: Python<'_>) -> &Value {
        self.json.get_or_init(|| py.detach(|| self.run.json()))
    }
}

#[pymethods]
impl NativeRun {
    /// `tracelight analyze DIR --json`'s object, as compact JSON text.
    fn analyze_json(&self, py: Python<'_>) -> String {
        self.json(py).to_string()
    }

    /// `tracelight summary DIR`'s Markdown.
    fn summary(&self, py: Python<'_>) -> String {
        py.detach(|| self.run.markdown())
    }

    /// The Arrow columns of the rows at `pointer` in the analyze object.
    fn table<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyList>> {
        table_at(py, self.json(py), pointer)
    }
}

/// Reads one file (any format `tracelight analyze` reads), without holding the GIL.
#[pyfunction]
fn load_file(py: Python<'_>, path: &str) -> PyResult<NativeFile> {
    let loaded = py.detach(|| load(path)).map_err(|e| trace_error(py, &e))?;
    Ok(NativeFile {
        files: vec![(path.to_owned(), loaded)],
        json: OnceLock::new(),
    })
}

/// Reads a run folder as `tracelight analyze DIR` does, without holding the GIL.
#[pyfunction]
fn load_run(py: Python<'_>, path: &str) -> PyResult<NativeRun> {
    let run = py
        .detach(|| RunData::load(Path::new(path)))
        .map_err(|e| cli_error(py, e))?;
    Ok(NativeRun {
        run,
        json: OnceLock::new(),
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_class::<NativeRun>()?;
    m.add_function(wrap_pyfunction!(load_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
