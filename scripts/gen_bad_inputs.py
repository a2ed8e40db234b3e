#!/usr/bin/env python3
"""Writes the corpus of hostile and broken inputs (issue 16).

    python3 scripts/gen_bad_inputs.py                  # the small files, committed under
                                                       # crates/core/tests/fixtures/bad/
    python3 scripts/gen_bad_inputs.py --large DIR      # also the big ones, into DIR (made at test
                                                       # time: the gzip bomb, 10^6 events)

Every file is made here from nothing (no corpus file is copied). What each must get is checked by
`crates/core/tests/bad_inputs.rs` (natively) and, for a subset, `tests/e2e/bad_inputs.test.mjs` (in
the page); the README's testing section has the table. Output is deterministic: gzip headers carry no
time stamp, so re-running the script leaves the committed files unchanged.
"""
import argparse
import gzip
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "..", "crates", "core", "tests", "fixtures", "bad")

# The file a code-running pickle would create; tests check it never appears.
PWNED = "/tmp/tracelight_pickle_ran_code"


def trace(events, extra=""):
    """A Kineto trace from event texts (written by hand: json.dumps cannot write NaN keys twice)."""
    body = ",\n".join(events)
    return f'{{"schemaVersion": 1,{extra} "traceEvents": [\n{body}\n]}}\n'.encode()


def x(name, ts, dur, tid=1, more=""):
    return f'{{"ph": "X", "cat": "cpu_op", "name": {name}, "pid": 1, "tid": {tid}, "ts": {ts}, "dur": {dur}{more}}}'


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def png_1x1():
    def chunk(kind, data):
        c = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + c

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def small():
    f = {}
    f["empty.json"] = b""
    f["png_renamed.json"] = png_1x1()
    f["whitespace_only.json"] = b" \n\t" * 30000
    f["not_a_trace.json"] = b'{"hello": "world", "list": [1, 2, 3]}\n'
    f["trace_events_not_array.json"] = b'{"schemaVersion": 1, "traceEvents": 5}\n'
    # Names with bytes that are not UTF-8: a lone continuation byte, 0xff, an overlong '/', a UTF-16
    # surrogate written as UTF-8, and a multi-byte sequence cut short.
    names = [b"\xff\xfeop", b"aten::\x80mm", b"\xc0\xaf", b"\xed\xa0\x80kernel", b"cut\xe2\x82"]
    raw = trace([x('"%s"', 10 * i, 5) for i in range(len(names))])
    for n in names:
        raw = raw.replace(b"%s", n, 1)
    f["invalid_utf8_names.json"] = raw
    # ts and dur that are NaN, negative, 1e300, missing or not numbers; one good event.
    f["bad_ts_dur.json"] = trace(
        [
            x('"good"', 0, 10),
            x('"ts_nan"', "NaN", 5),
            x('"ts_negative"', -5, 5, tid=2),
            x('"ts_1e300"', "1e300", 5),
            x('"ts_infinity"', "Infinity", 5),
            '{"ph": "X", "cat": "cpu_op", "name": "ts_missing", "pid": 1, "tid": 1, "dur": 5}',
            x('"ts_string"', '"soon"', 5),
            x('"dur_nan"', 20, "NaN"),
            x('"dur_negative"', 30, -5),
            x('"dur_1e300"', 40, "1e300"),
            '{"ph": "X", "cat": "cpu_op", "name": "dur_missing", "pid": 1, "tid": 1, "ts": 50}',
            x('"dur_null"', 60, "null"),
        ]
    )
    # dur of 9.3e18 ns does not fit an i64; a ts near the i64 ceiling plus a dur past it.
    f["dur_overflow.json"] = trace(
        [
            x('"good"', 0, 10),
            x('"dur_overflows_i64_ns"', 20, "9300000000000000"),
            x('"dur_overflows_i64_ns_exp"', 20, "9.3e15"),
            x('"end_overflows_i64_ns"', "9000000000000000", "500000000000000", tid=2),
        ]
    )
    # Duplicate keys inside an event (last wins, as in JSON.parse and Python) and two traceEvents.
    f["duplicate_keys.json"] = (
        b'{"schemaVersion": 1, "traceEvents": [\n'
        b'{"ph": "X", "name": "first", "name": "second", "pid": 1, "tid": 1, "ts": 1, "ts": 2, '
        b'"dur": 3, "dur": 4, "args": {"k": 1, "k": 2}}\n'
        b'], "traceEvents": [\n'
        b'{"ph": "X", "name": "again", "pid": 1, "tid": 1, "ts": 10, "dur": 1}\n'
        b']}\n'
    )
    # Flows that form cycles: a -> b -> a, a self-loop, and a three-cycle a -> b -> c -> a.
    def flow(ph, fid, ts, tid):
        bp = ', "bp": "e"' if ph == "f" else ""
        return f'{{"ph": "{ph}", "cat": "ac2g", "name": "ac2g", "id": {fid}, "pid": 1, "tid": {tid}, "ts": {ts}{bp}}}'

    f["flow_cycle.json"] = trace(
        [
            x('"a"', 0, 10, tid=1),
            x('"b"', 0, 10, tid=2),
            x('"c"', 0, 10, tid=3),
            flow("s", 1, 1, 1), flow("f", 1, 2, 2),
            flow("s", 2, 3, 2), flow("f", 2, 4, 1),
            flow("s", 3, 5, 1), flow("f", 3, 5, 1),
            flow("s", 4, 6, 1), flow("f", 4, 7, 2),
            flow("s", 5, 7, 2), flow("f", 5, 8, 3),
            flow("s", 6, 8, 3), flow("f", 6, 9, 1),
        ]
    )
    # Pickles that try to run `touch PWNED`: GLOBAL + REDUCE (protocol 2), STACK_GLOBAL (protocol 4),
    # INST (protocol 0). A data-only decoder refuses each before anything runs.
    cmd = f"touch {PWNED}".encode()
    f["pickle_global_os_system.pickle"] = (
        b"\x80\x02cos\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd + b"\x85R."
    )
    f["pickle_stack_global_os_system.pickle"] = (
        b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c" + bytes([len(cmd)]) + cmd + b"\x85R."
    )
    f["pickle_inst_os_system.pickle"] = b"(S'" + cmd + b"'\nios\nsystem\n."
    # Declared lengths of 2^62: a FRAME, a BINUNICODE8 string, a BINBYTES8 and a BYTEARRAY8.
    big = struct.pack("<Q", 1 << 62)
    f["pickle_frame_2p62.pickle"] = b"\x80\x04\x95" + big + b"]."
    f["pickle_list_2p62_unicode8.pickle"] = b"\x80\x04]\x8d" + big + b"abc"
    f["pickle_binbytes8_2p62.pickle"] = b"\x80\x04\x8e" + big + b"abc"
    f["pickle_bytearray8_2p62.pickle"] = b"\x80\x05\x96" + big + b"abc"
    # A pickle that is data but not a snapshot (a list of ints).
    f["pickle_not_a_snapshot.pickle"] = b"\x80\x02]q\x00(K\x01K\x02e."
    # Memory timelines of the wrong shape.
    f["memory_timeline_length_mismatch.json"] = b"[[1, 2, 3], [[0, 1, 2]]]\n"
    f["memory_timeline_rows_not_arrays.json"] = b"[[1, 2], [5, 6]]\n"
    f["memory_timeline_strings.json"] = b'[["a", "b"], [["x"], ["y"]]]\n'
    f["memory_timeline_nan.json"] = b"[[1, NaN], [[0, 1], [0, 2]]]\n"
    f["memory_timeline_raw_three_fields.json"] = b"[[1, 1, 4096], [2, 2, 4096], [3, 1, 8]]\n"
    f["memory_timeline_raw_bad_action.json"] = b"[[1, 9, 4096, 0], [2, 2, 4096, 0]]\n"
    f["memory_timeline_truncated.json"] = b"[[1, 2, 3], [[0, 1, 2], [0, 1"
    # Compressible big ones, committed gzipped (the loader inflates on the fly).
    depth = 100_000
    deep = trace([x('"deep_args"', 0, 1, more=', "args": {"a": ' + "[" * depth + "]" * depth + "}")])
    f["deep_args_1e5.json.gz"] = gz(deep)
    deep_unclosed = trace([x('"deep_args"', 0, 1, more=', "args": {"a": ' + "[" * depth + "}")])
    f["deep_args_1e5_unbalanced.json.gz"] = gz(deep_unclosed)
    f["name_1e6_chars.json.gz"] = gz(trace([x('"' + "n" * 1_000_000 + '"', 0, 1), x('"short"', 2, 1)]))
    return f


def bomb(path, gib=2):
    """`{"traceEvents": [` then `gib` GiB of spaces then `]}`, in one gzip member of about 2 MB:
    every 1 MiB of spaces deflates (after a full flush) to the same bytes, so the block is written
    once and repeated; the trailer's CRC is the real one."""
    head = b'{"traceEvents": ['
    block = b" " * (1 << 20)
    n = gib << 10
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
    out += c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    one = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(head)
    for _ in range(n):
        crc = zlib.crc32(block, crc)
    tail = b"]}"
    out += one * n
    out += c.compress(tail) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(tail, crc)
    size = (len(head) + n * len(block) + len(tail)) & 0xFFFFFFFF
    out += struct.pack("<II", crc, size)
    with open(path, "wb") as fh:
        fh.write(out)


def large(d):
    os.makedirs(d, exist_ok=True)
    bomb(os.path.join(d, "gzip_bomb_2gib_whitespace.json.gz"))
    # 10^6 complete events on one thread, all at the same ts with the same dur.
    ev = b'{"ph": "X", "cat": "cpu_op", "name": "same", "pid": 1, "tid": 1, "ts": 5, "dur": 1},\n'
    body = b'{"traceEvents": [\n' + ev * 999_999 + ev[:-2] + b"\n]}\n"
    with open(os.path.join(d, "same_ts_1e6.json.gz"), "wb") as fh:
        fh.write(gz(body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=BAD, help="where the small files go")
    ap.add_argument("--large", help="also write the large files into this folder")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, data in sorted(small().items()):
        with open(os.path.join(a.out, name), "wb") as fh:
            fh.write(data)
    if a.large:
        large(a.large)


if __name__ == "__main__":
    main()
