"""The ``tracelight`` command, installed with the wheel (``pip install tracelight``): the console
script ``tracelight`` and ``python -m tracelight`` run the CLI's own Rust function
(``tracelight_cli::commands::outcome``) in this process, so every subcommand, flag, exit code and
byte of output is the native binary's (``crates/py/python/tests/test_cli.py`` compares them)."""

import os
import sys
from typing import List, Optional

from . import _native


def main(argv: Optional[List[str]] = None) -> None:
    """Runs ``tracelight ARGS…`` (``sys.argv[1:]`` by default) and exits with its code."""
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    if args[:1] in (["view"], ["mcp"]):
        # Servers: they write as they go, from Rust, until stopped (Ctrl-C, or stdin closed).
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            code = _native._interactive(args)
        except KeyboardInterrupt:
            # As the binary, which SIGINT ends: 128 + 2.
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    out, err, code = _native._cli(args)
    if out:
        try:
            sys.stdout.flush()
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            # As the binary does: a reader that closed the pipe early (`| head -1`) got what it
            # wanted; end quietly, and keep Python from reporting the pipe again at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    if err:
        sys.stderr.flush()
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()
    sys.exit(code)
