"""The package's exception, raised by the native module for input it cannot read."""

from typing import Optional


class TraceError(ValueError):
    """A file that could not be read: ``file`` names it, ``reason`` says why.

    A ``ValueError`` so that code catching bad input the usual way catches it too.
    """

    def __init__(self, message: str, file: Optional[str] = None, reason: Optional[str] = None):
        super().__init__(message)
        self.file = file
        self.reason = reason


class TraceWarning(UserWarning):
    """A file read only in part: a trace cut short keeps the events before the cut (as the CLI
    and the page do) and says so with this warning at load time, and under ``warnings`` in
    ``analyze()``."""
