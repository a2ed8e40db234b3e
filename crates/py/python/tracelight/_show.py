"""``tracelight.show()``: the viewer inline in a Jupyter / VS Code notebook.

The wheel ships the single-file build of the page (``viewer.html``: app, stylesheet, worker and
wasm in one HTML file, made by ``scripts/single_file.mjs``). The cell's output is that page in an
``<iframe srcdoc>`` and a small script that hands it the trace's bytes by ``postMessage`` in
Perfetto's protocol (README "Embedding it"): ``PING`` until ``PONG``, then ``{perfetto: {buffer}}``,
then ``open-tab`` once the page reports ``loaded``. The bytes travel inside the notebook output:
nothing is uploaded and no request is made, so it works offline and in a saved notebook.
"""

import base64
import gzip
import html
import json
import os
import uuid
from importlib import resources
from typing import Any, Optional, Union

TABS = ("overview", "timeline", "operators", "flame", "kernels", "gpu", "memory", "compare")

# Waits for PONG (the app runs), sends the trace once, opens the tab on `loaded`, and mirrors the
# page's state on the wrapper (data-state, and the status line on an error).
_SCRIPT = """
(function () {
  var wrap = document.getElementById(%(id)s);
  var frame = wrap.querySelector('iframe');
  var status = wrap.querySelector('.tracelight-status');
  var bin = atob(%(data)s), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var sent = false, tab = %(tab)s;
  function post(m, transfer) { frame.contentWindow.postMessage(m, '*', transfer || []); }
  window.addEventListener('message', function (e) {
    if (e.source !== frame.contentWindow) return;
    if (e.data === 'PONG' && !sent) {
      sent = true;
      wrap.dataset.state = 'sent';
      post({perfetto: {buffer: bytes.buffer, fileName: %(name)s, title: %(name)s, keepApiOpen: true}}, [bytes.buffer]);
    }
    var ev = e.data && e.data.tracelight;
    if (!ev) return;
    if (ev.event === 'loaded' && ev.role === 'session') {
      wrap.dataset.state = 'loaded';
      status.textContent = '';
      if (tab) post({tracelight: {command: 'open-tab', tab: tab}});
    } else if (ev.event === 'error') {
      wrap.dataset.state = 'error';
      status.textContent = ev.message;
    }
  });
  var ping = setInterval(function () {
    if (sent) clearInterval(ping); else post('PING');
  }, 100);
})();
"""


def _viewer_html() -> str:
    """The single-file build shipped in the wheel."""
    try:
        return resources.files("tracelight").joinpath("viewer.html").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            "tracelight.show() needs the single-file viewer, which this build of the package "
            "lacks: build it (trunk build --release && node scripts/single_file.mjs) before the "
            "wheel (scripts/python.sh copies dist-single/tracelight.html in)"
        ) from None


class Viewer:
    """The viewer with one trace, rendered by notebooks through ``_repr_html_``."""

    def __init__(self, data: bytes, name: str, height: int = 600, tab: Optional[str] = None):
        if tab is not None and tab not in TABS:
            raise ValueError(f"tab must be one of {', '.join(TABS)}, not {tab!r}")
        if not isinstance(height, int) or height < 200:
            raise ValueError(f"height must be an int of at least 200 (pixels), not {height!r}")
        self.name = name
        self.height = height
        self.tab = tab
        # Gzipped in the output when it is not already: the page reads gzip by content, and a
        # JSON trace shrinks ~10x, which is what the notebook file has to hold.
        self._data = data if data[:2] == b"\x1f\x8b" else gzip.compress(data, compresslevel=6)

    def _repr_html_(self) -> str:
        wid = "tracelight-" + uuid.uuid4().hex
        script = _SCRIPT % {
            "id": json.dumps(wid),
            "data": json.dumps(base64.b64encode(self._data).decode("ascii")),
            "name": json.dumps(self.name),
            "tab": json.dumps(self.tab),
        }
        return (
            f'<div id="{wid}" class="tracelight-view" data-state="waiting">'
            f'<iframe title="Tracelight: {html.escape(self.name)}" '
            f'style="width:100%;height:{self.height}px;border:1px solid #ccc;border-radius:4px" '
            f'srcdoc="{html.escape(_viewer_html(), quote=True)}"></iframe>'
            f'<div class="tracelight-status" style="font:12px sans-serif;color:#b00"></div>'
            f"<script>{script}</script></div>"
        )

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the output as a standalone HTML page (open it in a browser, attach it)."""
        page = (
            '<!doctype html><html><head><meta charset="utf-8"><title>'
            f"{html.escape(self.name)}</title></head><body>{self._repr_html_()}</body></html>"
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)

    def __repr__(self) -> str:
        return f"tracelight.Viewer({self.name!r}, height={self.height}, tab={self.tab!r})"


def show(trace_or_path: Any, height: int = 600, tab: Optional[str] = None) -> Viewer:
    """The viewer inline in a notebook, with this trace open.

    ``trace_or_path``: a :class:`tracelight.Trace` or the path of a trace (any file the page
    opens: Kineto ``.json`` / ``.json.gz``, a memory snapshot, …). ``height`` in pixels; ``tab``
    one of ``overview``, ``timeline``, ``operators``, ``flame``, ``kernels``, ``gpu``,
    ``memory``, ``compare``. The trace's bytes are embedded in the cell's output (gzipped) and
    handed to the page by ``postMessage``: nothing is uploaded, no network is used.
    """
    from . import Run, Trace

    if isinstance(trace_or_path, Run):
        raise TypeError(
            "show() opens one trace; for a run, show() one rank's file, or open the folder's "
            "files together in the page for its Ranks tab"
        )
    path = trace_or_path.path if isinstance(trace_or_path, Trace) else os.fspath(trace_or_path)
    with open(path, "rb") as f:
        data = f.read()
    return Viewer(data, os.path.basename(path), height=height, tab=tab)
