"""simdjson's DOM parse of a trace file: the issue-30 peer (pysimdjson, one thread).

    python3 bench/simdjson_parse.py FILE [RUNS]

Prints, per run, the seconds to read the file into memory, the seconds of `Parser.parse` on those
bytes (simdjson's stage 1 + stage 2: the whole DOM, one thread) and both as decoded MB/s. The
parse walks the document once (`traceEvents` length) so a lazy proxy cannot skip work. Tracelight's
figure to set beside it is `examples/parse FILE` (read + model, first byte to model ready).
"""

import sys
import time

import simdjson


def main() -> None:
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    parser = simdjson.Parser()
    for k in range(runs):
        t0 = time.perf_counter()
        with open(path, "rb") as f:
            data = f.read()
        t1 = time.perf_counter()
        doc = parser.parse(data)
        n = len(doc["traceEvents"]) if isinstance(doc, simdjson.Object) else len(doc)
        t2 = time.perf_counter()
        mb = len(data) / 1e6
        print(
            f"{path}: run {k}: {mb:.1f} MB, {n} events; read {t1 - t0:.3f} s, "
            f"parse {t2 - t1:.3f} s = {mb / (t2 - t1):.0f} MB/s; "
            f"read+parse {t2 - t0:.3f} s = {mb / (t2 - t0):.0f} MB/s",
            flush=True,
        )
        del doc


if __name__ == "__main__":
    main()
