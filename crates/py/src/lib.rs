//! `tracelight._native`: the Python extension. Thin on purpose: a file or run folder is read by
//! the CLI's own functions (`tracelight_cli`), its reports are the CLI's `analyze --json` object
//! and `summary` Markdown, and its tables are that object's row arrays turned into Arrow buffers
//! ([`columns`]). The Python package (`python/tracelight`) wraps this in `Trace` / `Run`.

mod columns;
mod exact;
mod slices;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;
use tracelight_cli::analyze::{report_json, report_markdown};
use tracelight_cli::commands::{load, CliError};
use tracelight_cli::run::{run_dir, RunData};
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

    /// A Flight Recorder dump's entries as Arrow columns (one row each).
    fn fr_entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Some((path, Loaded::FlightRecorder(d))) = self.files.first() else {
            return Err(PyTypeError::new_err(format!(
                "flight_recorder_entries() needs a Flight Recorder dump, not a {}",
                self.format()
            )));
        };
        let rank = tracelight_core::ingest::flight_recorder::rank_of_file(path).unwrap_or(0);
        let rows = tracelight_core::report::flight_recorder::entry_rows(rank, path, d);
        let cols = py.detach(|| columns::table(&rows));
        columns_list(py, &cols)
    }
}

/// What a run folder holds: traces (and their memory files, ETs), or digests.
enum RunSource {
    /// Read once ([`RunData`]).
    Traces(RunData),
    /// A folder of digests: the CLI's `analyze DIR --json` text (its digest reader prints it) and
    /// `summary DIR`'s Markdown, made on first use.
    Digests {
        dir: std::path::PathBuf,
        text: String,
        markdown: OnceLock<String>,
    },
}

#[pyclass(module = "tracelight._native", frozen)]
struct NativeRun {
    run: RunSource,
    json: OnceLock<Value>,
}

impl NativeRun {
    fn json(&self, py: Python<'_>) -> &Value {
        self.json.get_or_init(|| {
            py.detach(|| match &self.run {
                RunSource::Traces(r) => r.json(),
                RunSource::Digests { text, .. } => exact::parse(text),
            })
        })
    }
}

#[pymethods]
impl NativeRun {
    /// `tracelight analyze DIR --json`'s object, as compact JSON text (the CLI's own text for
    /// digests).
    fn analyze_json(&self, py: Python<'_>) -> String {
        match &self.run {
            RunSource::Traces(_) => self.json(py).to_string(),
            RunSource::Digests { text, .. } => text.clone(),
        }
    }

    /// Whether the folder was read as digests.
    fn is_digests(&self) -> bool {
        matches!(self.run, RunSource::Digests { .. })
    }

    /// `tracelight summary DIR`'s Markdown.
    fn summary(&self, py: Python<'_>) -> PyResult<String> {
        match &self.run {
            RunSource::Traces(r) => Ok(py.detach(|| r.markdown())),
            RunSource::Digests { dir, markdown, .. } => {
                if let Some(m) = markdown.get() {
                    return Ok(m.clone());
                }
                let m = py
                    .detach(|| run_dir(dir, false))
                    .map_err(|e| cli_error(py, e))?;
                Ok(markdown.get_or_init(|| m).clone())
            }
        }
    }

    /// The Arrow columns of the rows at `pointer` in the analyze object.
    fn table<'py>(&self, py: Python<'py>, pointer: &str) -> PyResult<Bound<'py, PyList>> {
        table_at(py, self.json(py), pointer)
    }

    /// Every rank's Flight Recorder entries as Arrow columns (empty for a run without dumps).
    fn fr_entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = match &self.run {
            RunSource::Traces(r) => r.fr_entry_rows(),
            RunSource::Digests { .. } => Vec::new(),
        };
        let cols = py.detach(|| columns::table(&rows));
        columns_list(py, &cols)
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

/// Reads a run folder as `tracelight analyze DIR` does (a folder holding digests is read as
/// digests), without holding the GIL.
#[pyfunction]
fn load_run(py: Python<'_>, path: &str) -> PyResult<NativeRun> {
    let dir = Path::new(path);
    let run = py
        .detach(|| -> Result<RunSource, CliError> {
            let files = tracelight_cli::digest::walk(dir)?;
            if tracelight_cli::digest::headers(&files).is_empty() {
                return RunData::load(dir).map(RunSource::Traces);
            }
            Ok(RunSource::Digests {
                dir: dir.to_owned(),
                text: run_dir(dir, true)?,
                markdown: OnceLock::new(),
            })
        })
        .map_err(|e| cli_error(py, e))?;
    Ok(NativeRun {
        run,
        json: OnceLock::new(),
    })
}

/// Writes the digest of one trace into `out_dir` (`tracelight digest TRACE -o DIR`), under
/// `stem` (default: the trace's name without `.json[.gz]`); returns what was written.
#[pyfunction]
#[pyo3(signature = (path, out_dir, stem=None))]
fn digest<'py>(
    py: Python<'py>,
    path: &str,
    out_dir: &str,
    stem: Option<&str>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let (trace, out) = (Path::new(path), Path::new(out_dir));
    let w = py
        .detach(|| match stem {
            Some(s) => tracelight_digest::digest_file_as(trace, out, s),
            None => tracelight_digest::digest_file(trace, out),
        })
        .map_err(|e| trace_error(py, &e))?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("header", w.header.display().to_string())?;
    let files: Vec<String> = w.files.iter().map(|f| f.display().to_string()).collect();
    d.set_item("files", files)?;
    d.set_item("bytes", w.bytes)?;
    d.set_item("source_bytes", w.source_bytes)?;
    d.set_item("rank", w.rank)?;
    Ok(d)
}

/// The digest name `tracelight digest` gives a trace file (`worker0.pt.trace.json.gz` ->
/// `worker0.pt.trace`).
#[pyfunction]
fn digest_stem(file_name: &str) -> String {
    tracelight_core::digest::stem(file_name).to_owned()
}

/// [`exact::parse`] and back to compact text: for the tests, which check it against Python's
/// own (correctly rounded) parser.
#[pyfunction]
fn _exact_json(text: &str) -> String {
    exact::parse(text).to_string()
}

/// The `tracelight` command itself, for the wheel's console script (`tracelight.cli`):
/// `(stdout, stderr, exit code)` of `tracelight ARGS…`, from the very function the binary prints
/// (`commands::outcome`), so the two are byte-identical. The GIL is released while it runs.
#[pyfunction]
fn _cli<'py>(py: Python<'py>, args: Vec<String>) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>, u8) {
    let o = py.detach(|| tracelight_cli::commands::outcome(&args));
    (
        PyBytes::new(py, o.stdout.as_bytes()),
        PyBytes::new(py, o.stderr.as_bytes()),
        o.code,
    )
}

/// `tracelight view` and `tracelight mcp` for the console script: the CLI's own function
/// (`commands::interactive`), writing to the process's stdout as it goes; `None` for the other
/// commands. The GIL is released while it serves; Ctrl-C is checked a few times a second and
/// raised as `KeyboardInterrupt` once the server has stopped.
#[pyfunction]
fn _interactive(py: Python<'_>, args: Vec<String>) -> PyResult<Option<u8>> {
    let interrupted = std::sync::Mutex::new(None::<PyErr>);
    let stop = || {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                if let Ok(mut slot) = interrupted.lock() {
                    *slot = Some(e);
                }
                true
            }
        })
    };
    let code = py.detach(|| tracelight_cli::commands::interactive(&args, &stop));
    if let Some(e) = interrupted.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(code)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_class::<NativeRun>()?;
    m.add_function(wrap_pyfunction!(load_file, m)?)?;
    m.add_function(wrap_pyfunction!(load_run, m)?)?;
    m.add_function(wrap_pyfunction!(digest, m)?)?;
    m.add_function(wrap_pyfunction!(digest_stem, m)?)?;
    m.add_function(wrap_pyfunction!(_exact_json, m)?)?;
    m.add_function(wrap_pyfunction!(_cli, m)?)?;
    m.add_function(wrap_pyfunction!(_interactive, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
