"""The wheel's ``tracelight`` command against the native binary: the console script and
``python -m tracelight`` print the same bytes on stdout and stderr and exit with the same code as
``target/release/tracelight`` for every subcommand (summary, analyze, table, diff and its gate,
digest, help, a usage error, unreadable input). Repository fixtures only: no corpus needed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT

H100 = ROOT / "crates/core/tests/fixtures/torch-2.11-cuda13-h100"
MLP = H100 / "gpu_mlp.pt.trace.json.gz"
MLP_PLAIN = H100 / "gpu_mlp_plain.pt.trace.json.gz"
LM = H100 / "gpu_lm_bf16.pt.trace.json.gz"
FR = ROOT / "crates/core/tests/fixtures/fr-torch-2.15-gloo/wrong_op"
SNAPSHOT = H100 / "gpu_lm_bf16.snapshot.pickle"
GEN = ROOT / "crates/core/tests/fixtures/snapshots-gen"
SCRIPT = Path(sys.executable).parent / ("tracelight.exe" if sys.platform == "win32" else "tracelight")

CASES = {
    "help": ["--help"],
    "usage error": ["frobnicate"],
    "no command": [],
    "unreadable input": ["summary", "/nonexistent/rank0.pt.trace.json"],
    "not a trace": ["table", str(SNAPSHOT)],
    "summary": ["summary", str(MLP)],
    "analyze": ["analyze", str(LM), "--json"],
    "analyze scoped": ["analyze", str(MLP), "--json", "--scope", "step:2"],
    "two traces as a run": ["summary", str(MLP), str(MLP_PLAIN)],
    "snapshot": ["summary", str(SNAPSHOT)],
    "flight recorder": ["analyze", str(FR), "--json"],
    "table": ["table", str(MLP), "--sort-by", "device_total", "--row-limit", "8"],
    "modules": ["table", str(MLP), "--modules"],
    "diff": ["diff", str(MLP_PLAIN), str(MLP)],
    "diff json": ["diff", str(MLP_PLAIN), str(MLP), "--json"],
    "snapshot diff": ["diff", str(GEN / "step_a.pickle"), str(GEN / "step_b.pickle"), "--json"],
    "oom dumps": ["summary", str(GEN / "oom_run")],
    "diff gate held": ["diff", str(MLP), str(LM), "--fail-if", "step_time>+1%"],
    "diff gate crossed": ["diff", str(MLP), str(LM), "--fail-if", "step_time_mean>+1%"],
    "diff gate strict": ["diff", str(MLP), str(LM), "--fail-if", "step_time>+1%", "--strict"],
    "diff bad bound": ["diff", str(MLP), str(LM), "--fail-if", "step_time>>1"],
    "folded": ["diff", str(MLP_PLAIN), str(MLP), "--folded"],
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def native():
    if not CLI.exists():
        pytest.fail(f"{CLI} missing: cargo build --release -p tracelight-cli")
    return {name: run([str(CLI), *args]) for name, args in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_console_script_and_python_m_are_the_native_binary_byte_for_byte(native, name):
    want = native[name]
    assert SCRIPT.exists(), f"the wheel installed no console script at {SCRIPT}"
    for how, cmd in [("console script", [str(SCRIPT)]), ("python -m", [sys.executable, "-m", "tracelight"])]:
        got = run([*cmd, *CASES[name]])
        assert got.returncode == want.returncode, f"{how} {name}: exit {got.returncode} vs {want.returncode}: {got.stderr[-400:]!r}"
        assert got.stdout == want.stdout, f"{how} {name}: stdout differs"
        assert got.stderr == want.stderr, f"{how} {name}: stderr {got.stderr[-400:]!r} vs {want.stderr[-400:]!r}"


def test_the_exit_codes_are_the_contracts(native):
    # Independent of the comparison above: what docs/cli.md promises.
    codes = {name: r.returncode for name, r in native.items()}
    assert codes["help"] == 0 and codes["summary"] == 0 and codes["analyze"] == 0
    assert codes["usage error"] == 64 and codes["no command"] == 64 and codes["diff bad bound"] == 64
    assert codes["unreadable input"] == 2 and codes["not a trace"] == 2
    # The LM's mean step is longer than the MLP's; their few steps are too few for the median's
    # interval to tell (held, not crossed), which only --strict turns into a failure.
    assert codes["diff gate held"] == 0
    assert codes["diff gate crossed"] == 1 and codes["diff gate strict"] == 1
    assert native["unreadable input"].stderr.decode().startswith("tracelight: /nonexistent/rank0.pt.trace.json")


def test_digest_writes_the_same_files_as_the_binary(tmp_path):
    a, b = tmp_path / "native", tmp_path / "wheel"
    want = run([str(CLI), "digest", str(MLP), "-o", str(a)])
    got = run([str(SCRIPT), "digest", str(MLP), "-o", str(b)])
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout == want.stdout.replace(str(a).encode(), str(b).encode())
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and names
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_a_reader_that_closes_the_pipe_early_ends_the_run_quietly():
    # `tracelight analyze BIG --json | head -1`: 0.8 MB into a pipe read for one line.
    for cmd in ([str(CLI)], [str(SCRIPT)]):
        p = subprocess.Popen([*cmd, "analyze", str(LM), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        assert p.wait(timeout=120) == 0, (cmd, err)
        assert err == b"", (cmd, err)


def test_the_console_script_serves_view_and_ctrl_c_stops_it():
    # `tracelight view` from the wheel: the same server as the binary's (tests/e2e/view.test.mjs
    # drives that one in Chromium): the URL it prints answers with the page and the file list,
    # the file's bytes; a request without the token is refused; SIGINT ends it with 130.
    import os
    import re
    import signal
    import urllib.error
    import urllib.request

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    # SIGINT as a terminal delivers it: a shell that started this suite in the background (`cmd &`
    # without job control) passes SIGINT down ignored, and Python then installs no
    # KeyboardInterrupt for it.
    p = subprocess.Popen(
        [str(SCRIPT), "view", "--no-browser", str(MLP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        out = b""
        while b"Ctrl-C stops" not in out:
            line = p.stdout.readline()
            assert line, (out, p.stderr.read())
            out += line
        url = re.search(rb"open (http://127\.0\.0\.1:\d+/[0-9a-f]{32}/)\?files=files\.json\n", out).group(1).decode()
        with urllib.request.urlopen(url) as r:
            assert r.headers["Content-Type"].startswith("text/html")
            assert b"<html" in r.read(4096).lower()
        with urllib.request.urlopen(url + "files.json") as r:
            listed = json.loads(r.read())["files"]
        assert [f["name"] for f in listed] == [MLP.name]
        with urllib.request.urlopen(url + listed[0]["url"]) as r:
            assert r.read() == MLP.read_bytes()
        port_root = url.split("/")[0] + "//" + url.split("/")[2] + "/"
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(port_root + "files.json")
        assert e.value.code == 403
    finally:
        p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 130
