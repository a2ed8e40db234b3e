"""Arrow tables from the native module's column buffers.

The native side returns, per column, ``(name, kind, length, null_count, buffers, children)`` with
buffers in Arrow's layout for that kind; here they become ``pyarrow`` arrays through
``Array.from_buffers`` with no Python object per row.
"""

import pyarrow as pa

_PRIMITIVE = {
    "null": pa.null(),
    "bool": pa.bool_(),
    "int64": pa.int64(),
    "uint64": pa.uint64(),
    "float64": pa.float64(),
    "large_string": pa.large_string(),
}


def _array(col):
    name, kind, length, nulls, buffers, children = col
    kids = [_array(c) for c in children]
    bufs = [None if b is None else pa.py_buffer(b) for b in buffers]
    if kind == "dictionary":
        indices = pa.Array.from_buffers(pa.int32(), length, bufs, null_count=nulls)
        return name, pa.DictionaryArray.from_arrays(indices, kids[0][1])
    if kind == "list":
        typ = pa.large_list(pa.field("item", kids[0][1].type))
    elif kind == "struct":
        typ = pa.struct([pa.field(n, a.type) for n, a in kids])
    else:
        typ = _PRIMITIVE[kind]
    arr = pa.Array.from_buffers(
        typ, length, bufs, null_count=nulls, children=[a for _, a in kids] or None
    )
    return name, arr


def table(columns) -> pa.Table:
    """A ``pyarrow.Table`` of the native columns, in their order."""
    named = [_array(c) for c in columns]
    return pa.table({n: a for n, a in named}) if named else pa.table({})
