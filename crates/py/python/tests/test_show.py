"""tracelight.show(): the rendered cell output, opened in headless Chromium from a file, loads the
trace into the embedded single-file viewer by postMessage and selects the tab asked for, with no
network request."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import tracelight
from conftest import ROOT, cli_json, corpus

CHECK = Path(__file__).with_name("show_check.mjs")


def render_and_open(viewer, tmp_path, tab=None):
    if shutil.which("node") is None or not Path("/usr/bin/chromium").exists():
        pytest.skip("node or /usr/bin/chromium absent")
    page = tmp_path / "cell.html"
    viewer.save(page)
    png = ROOT / "target" / "e2e" / f"notebook-show-{tab or 'default'}.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    args = ["node", str(CHECK), str(page), str(png)] + ([tab] if tab else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), page


def test_show_loads_the_trace_in_the_inline_viewer_and_opens_the_tab(tmp_path):
    path = corpus("real/hta/nccl_data_a100_rank0of2.json.gz")
    t = tracelight.load(path)
    v = tracelight.show(t, height=700, tab="kernels")
    html = v._repr_html_()
    assert 'srcdoc="' in html and "height:700px" in html
    got, page = render_and_open(v, tmp_path, tab="kernels")
    assert got["errors"] == [], got
    assert got["state"] == "loaded", got
    # What the page read is what the CLI reads: the same number of events, the file's name.
    assert got["events"] == cli_json(path)["files"][0]["events"]
    assert path.name in json.dumps(got["loaded_files"])
    # A srcdoc frame is embed mode: the compact layout, no open bar.
    assert got["embedded"] == 1 and got["open_bar_visible"] is False
    assert got["tab"] == "tab-kernels"
    # Only the page's own file (and the about:srcdoc frame); the trace came by postMessage.
    page_url = got["url"]
    others = [u for u in got["requests"] if u != page_url and not u.startswith(("about:", "blob:", "data:"))]
    assert others == []


def test_show_of_a_plain_json_path_gzips_it_and_defaults_to_the_overview(tmp_path):
    path = corpus("generated/lstm_mem.1795343595561069429.pt.trace.json")
    v = tracelight.show(str(path))
    assert v._data[:2] == b"\x1f\x8b" and len(v._data) < path.stat().st_size / 3
    got, _ = render_and_open(v, tmp_path)
    assert got["errors"] == [] and got["state"] == "loaded", got
    assert got["events"] == cli_json(path)["files"][0]["events"]
    assert got["tab"] == "tab-overview"
    # Embed mode's overview: the headline cards over a painted timeline.
    assert got["overview_cards"] is True


def test_show_refuses_an_unknown_tab_and_a_run():
    path = corpus("generated/lstm_mem.1795343595561069429.pt.trace.json")
    with pytest.raises(ValueError):
        tracelight.show(path, tab="nope")
    with pytest.raises(TypeError):
        tracelight.show(tracelight.load(corpus("generated/ddp_gloo_2rank")))
