"""Type stubs of the ``tracelight`` package (the docstrings are the package's own)."""

import os
from typing import Any, Dict, List, Optional, Union

import pyarrow as pa

__version__: str

PathLike = Union[str, os.PathLike[str]]

class TraceError(ValueError):
    """A file that could not be read: ``file`` names it, ``reason`` says why."""

    file: Optional[str]
    reason: Optional[str]
    def __init__(self, message: str, file: Optional[str] = ..., reason: Optional[str] = ...) -> None: ...

class TraceWarning(UserWarning):
    """A trace cut short: the events before the cut were kept."""

class Viewer:
    """The viewer with one trace; notebooks render it through ``_repr_html_``."""

    name: str
    height: int
    tab: Optional[str]
    def _repr_html_(self) -> str:
        """The page in an ``<iframe srcdoc>`` and the script that posts it the trace."""
    def save(self, path: PathLike) -> None:
        """Writes the output as a standalone HTML page."""

def show(trace_or_path: Union["Trace", PathLike], height: int = ..., tab: Optional[str] = ...) -> Viewer:
    """The viewer inline in a Jupyter / VS Code notebook with this trace open.

    ``height`` in pixels; ``tab`` one of ``overview``, ``timeline``, ``operators``, ``flame``,
    ``kernels``, ``gpu``, ``memory``, ``compare``. The trace is embedded in the output (gzipped)
    and handed over by ``postMessage``: nothing is uploaded, no network is used.
    """

class _Report:
    path: str
    def analyze(self) -> Dict[str, Any]:
        """The object ``tracelight analyze PATH --json`` prints, as Python dicts and lists."""
    def summary(self) -> str:
        """The Markdown ``tracelight summary PATH`` prints."""
    def ops(self) -> pa.Table:
        """Operators, one row per name (``analyze``'s ``ops``), like ``key_averages()``."""
    def kernels(self) -> pa.Table:
        """GPU kernels, one row per name (``analyze``'s ``kernels``)."""
    def steps(self) -> pa.Table:
        """Profiler steps with their time breakdown (``analyze``'s ``steps``)."""
    def memory(self) -> pa.Table:
        """Memory by operator and device from ``[memory]`` events (``analyze``'s ``memory.ops``)."""
    def flight_recorder(self) -> Optional[Dict[str, Any]]:
        """The Flight Recorder verdict of the dumps read; ``None`` without dumps."""
    def flight_recorder_entries(self) -> pa.Table:
        """Every Flight Recorder entry of the dumps read, one row each."""

class Trace(_Report):
    """One file read by :func:`load`."""

    @property
    def format(self) -> str:
        """``kineto``, ``cuda_snapshot``, ``memory_timeline``, … (``analyze``'s ``files[].format``)."""
    def slices(self) -> pa.Table:
        """Every slice of a Kineto trace, one row each, from the columnar model (name, cat,
        kind, thread and input_dims as dictionary columns; ts_ns, dur_ns, track, depth, parent,
        correlation, external_id, device, stream as int64, null where absent)."""
    def show(self, height: int = ..., tab: Optional[str] = ...) -> Viewer:
        """The viewer inline in a notebook with this file open (see :func:`show`)."""

class Run(_Report):
    """A profiling run folder read by :func:`load`: every rank's trace and memory files."""

    def ranks(self) -> pa.Table:
        """Per rank: step time, compute, communication, waits, memory peaks (``analyze``'s ``ranks``)."""
    def collectives(self) -> pa.Table:
        """Collectives matched across ranks with skew, waits and bandwidth (``analyze``'s ``collectives``)."""

def load(path: PathLike) -> Union[Trace, Run]:
    """Reads a trace file or a run folder (a folder is a run, as ``tracelight analyze DIR``).

    Raises :class:`TraceError` naming the file and the reason when the input cannot be read.
    """

def digest(path: PathLike, out_dir: PathLike, stem: Optional[str] = ...) -> Dict[str, Any]:
    """Writes the digest of one Kineto trace into ``out_dir`` (``tracelight digest TRACE -o DIR``);
    returns ``{"header", "files", "bytes", "source_bytes", "rank"}``."""

def digest_stem(file_name: str) -> str:
    """The digest name ``tracelight digest`` gives a trace file."""

def diff(a: PathLike, b: PathLike, markdown: bool = ...) -> Union[Dict[str, Any], str]:
    """``tracelight diff A B --json`` as a dict (``markdown=True``: its Markdown); two traces, run
    folders or allocator snapshots."""
