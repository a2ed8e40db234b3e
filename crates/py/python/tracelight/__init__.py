"""Tracelight for Python: PyTorch profiler traces read by Tracelight's Rust core.

``load(path)`` reads a Kineto trace (or a memory snapshot, memory timeline or execution trace) as
a :class:`Trace`, or a profiling run folder as a :class:`Run`, exactly as the ``tracelight`` command
does. ``analyze()`` returns what ``tracelight analyze --json`` prints, ``summary()`` the Markdown of
``tracelight summary``; the row tables come as ``pyarrow.Table`` (``.to_pandas()`` a call away).
"""

import json
import os
import warnings
from typing import Any, Dict, Optional, Union

import pyarrow as pa

from . import _native
from ._errors import TraceError, TraceWarning
from ._tables import table as _table
from ._show import Viewer, show

__all__ = [
    "load", "Trace", "Run", "TraceError", "TraceWarning", "show", "Viewer", "digest",
    "digest_stem", "diff", "__version__",
]
__version__ = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]


class _Report:
    """What a trace and a run share: the analyze object, the Markdown and the row tables."""

    def __init__(self, native: Any, path: str):
        self._native = native
        self.path = path
        self._analysis = None

    def analyze(self) -> Dict[str, Any]:
        """The object ``tracelight analyze PATH --json`` prints, as Python dicts and lists.

        A fresh copy each call (the report itself is computed once).
        """
        return json.loads(self._native.analyze_json())

    def summary(self) -> str:
        """The Markdown ``tracelight summary PATH`` prints."""
        return self._native.summary()

    def _table(self, pointer: str) -> pa.Table:
        return _table(self._native.table(pointer))

    def ops(self) -> pa.Table:
        """Operators, one row per name (``analyze``'s ``ops``), like ``key_averages()``."""
        return self._table("/ops")

    def kernels(self) -> pa.Table:
        """GPU kernels, one row per name (``analyze``'s ``kernels``)."""
        return self._table("/kernels")

    def steps(self) -> pa.Table:
        """Profiler steps with their time breakdown (``analyze``'s ``steps``)."""
        return self._table("/steps")

    def memory(self) -> pa.Table:
        """Memory by operator and device from ``[memory]`` events (``analyze``'s ``memory.ops``)."""
        return self._table("/memory/ops")

    def flight_recorder(self) -> Optional[Dict[str, Any]]:
        """The Flight Recorder verdict of the dumps read (``analyze``'s ``flight_recorder``): the
        hang (process group, sequence id, op, missing and disagreeing ranks, culprits), the other
        stuck groups, the ranks x sequence grid per group, ``pg_status`` per rank, the stacks and
        what was inferred. ``None`` when no dump was read."""
        return self.analyze().get("flight_recorder")

    def flight_recorder_entries(self) -> pa.Table:
        """Every Flight Recorder entry of the dumps read, one row each: ``rank``, ``file``,
        ``record_id``, ``pg``, ``collective_seq_id``, ``p2p_seq_id``, ``op``, ``profiling_name``,
        sizes and dtypes (as torch prints them), ``state``, ``retired``, ``time_*_ns`` (null where
        not discovered), ``duration_ms``, ``thread_name`` and ``frames`` (``name at file:line``
        lines, innermost first)."""
        return _table(self._native.fr_entries())

    def _repr_markdown_(self) -> str:
        return self.summary()


class Trace(_Report):
    """One file read by :func:`load`."""

    @property
    def format(self) -> str:
        """``kineto``, ``cuda_snapshot``, ``memory_timeline``, … (``analyze``'s ``files[].format``)."""
        return self._native.format()

    def slices(self) -> pa.Table:
        """Every slice of a Kineto trace, one row each, from the columnar model: ``name``,
        ``cat``, ``kind`` (``cpu_op``, ``kernel``, ``memcpy``, …), ``thread`` and ``input_dims``
        as dictionary (categorical) columns; ``ts_ns``, ``dur_ns`` (exact ns), ``track``,
        ``depth``, ``parent`` (row of the enclosing slice), ``correlation``, ``external_id``,
        ``device`` and ``stream`` (GPU slices) as int64, null where absent. Raises ``TypeError``
        for a file that is not a Kineto trace."""
        return _table(self._native.slices())

    def show(self, height: int = 600, tab: Optional[str] = None) -> Viewer:
        """The viewer inline in a notebook with this file open (see :func:`tracelight.show`)."""
        return show(self, height=height, tab=tab)

    def __repr__(self) -> str:
        return f"tracelight.Trace({self.path!r}, format={self.format!r})"


class Run(_Report):
    """A profiling run folder read by :func:`load`: every rank's trace and memory files."""

    def ranks(self) -> pa.Table:
        """Per rank: step time, compute, communication, waits, memory peaks (``analyze``'s ``ranks``)."""
        return self._table("/ranks")

    def collectives(self) -> pa.Table:
        """Collectives matched across ranks with skew, waits and bandwidth (``analyze``'s ``collectives``)."""
        return self._table("/collectives")

    def __repr__(self) -> str:
        return f"tracelight.Run({self.path!r})"


def load(path: PathLike) -> Union[Trace, Run]:
    """Reads a trace file (``.json``, ``.json.gz``, snapshot pickle, …) or a run folder.

    A folder is a run, read as ``tracelight analyze DIR`` reads it. Raises :class:`TraceError`
    (a ``ValueError``) naming the file and the reason when the input cannot be read; a trace cut
    short loads what parsed and warns with :class:`TraceWarning`.
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        return Run(_native.load_run(p), p)
    native = _native.load_file(p)
    cut = native.truncated()
    if cut is not None:
        warnings.warn(f"{p}: {cut}", TraceWarning, stacklevel=2)
    return Trace(native, p)


def digest(path: PathLike, out_dir: PathLike, stem: Optional[str] = None) -> Dict[str, Any]:
    """Writes the digest of one Kineto trace into ``out_dir``, as ``tracelight digest TRACE -o
    DIR`` does: ``STEM.digest.json`` and one Parquet file per table (pandas, DuckDB, Polars and
    Spark read them). ``stem`` defaults to the trace's name without ``.json[.gz]``. Returns
    ``{"header", "files", "bytes", "source_bytes", "rank"}``. A folder of digests loads as a
    :class:`Run` (``load(out_dir)``), as ``tracelight analyze DIR`` reads it.
    """
    return _native.digest(os.fspath(path), os.fspath(out_dir), stem)


def digest_stem(file_name: str) -> str:
    """The digest name ``tracelight digest`` gives a trace file (``rank0.pt.trace.json.gz`` ->
    ``rank0.pt.trace``)."""
    return _native.digest_stem(file_name)


def diff(a: PathLike, b: PathLike, markdown: bool = False) -> Union[Dict[str, Any], str]:
    """The A/B diff ``tracelight diff A B --json`` prints, as a dict (``markdown=True``: the
    Markdown it prints without ``--json``). A and B are two traces or run folders, or two
    allocator snapshots (recognised from their content): then the dict is ``{"snapshot": {"a_path",
    "b_path", "diff"}}`` with totals, fragmentation, segments before and after and live bytes by
    allocation site, whole stack, ``user_metadata`` and pool. Raises :class:`TraceError` naming the
    file when an input cannot be read.
    """
    args = ["diff", os.fspath(a), os.fspath(b)] + ([] if markdown else ["--json"])
    out, err, code = _native._cli(args)
    if code not in (0, 1):
        raise TraceError(err.decode("utf-8", "replace").strip())
    text = out.decode("utf-8")
    return text if markdown else json.loads(text)
