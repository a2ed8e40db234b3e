"""``python -m tracelight ARGS…``: the ``tracelight`` command (see :mod:`tracelight.cli`)."""

from .cli import main

main()
