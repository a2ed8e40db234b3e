"""``tracelight mcp`` driven by the official Python MCP client (``mcp`` on PyPI) over stdio, as an
agent would: the tools are listed with descriptions and schemas; each tool's answer equals
``tracelight analyze --json`` (or ``diff --json``) of the same files under the same keys, read
through a separate process; ``slices`` is checked against the trace's own JSON parsed here; bad
input comes back as an MCP error naming the file. Skips (saying so) where ``mcp`` is not installed.
"""

import asyncio
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT, cli, cli_json, corpus

mcp = pytest.importorskip(
    "mcp", reason="the official MCP client (pip install mcp) is not installed in this environment"
)
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

H100 = ROOT / "crates/core/tests/fixtures/torch-2.11-cuda13-h100"
MLP = H100 / "gpu_mlp.pt.trace.json.gz"
MLP_PLAIN = H100 / "gpu_mlp_plain.pt.trace.json.gz"
LM = H100 / "gpu_lm_bf16.pt.trace.json.gz"
SNAPSHOT = H100 / "gpu_lm_bf16.snapshot.pickle"
FR = ROOT / "crates/core/tests/fixtures/fr-torch-2.15-gloo/missing_rank"
TOOLS = {"summary", "top_ops", "top_kernels", "steps", "compare", "ranks", "collectives", "memory", "hang", "slices"}


def session_run(fn, command=None):
    """Runs ``fn(session)`` against ``tracelight mcp`` (the release binary unless ``command``)."""
    if not CLI.exists():
        pytest.fail(f"{CLI} missing: cargo build --release -p tracelight-cli")
    cmd = command or [str(CLI), "mcp"]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:])

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await fn(s)

    return asyncio.run(main())


def call(name, args):
    async def go(s):
        r = await s.call_tool(name, args)
        assert not field(r, "is_error", "isError"), r
        return json.loads(r.content[0].text)

    return session_run(go)


def call_error(name, args):
    async def go(s):
        with pytest.raises(MCPError) as e:
            await s.call_tool(name, args)
        return e.value

    return session_run(go)


def field(obj, snake, camel):
    """A field of the client's models: snake_case in mcp 2, camelCase in mcp 1."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def rows(answer):
    return [{k: v for k, v in r.items() if k != "link"} for r in answer["rows"]]


def test_tools_are_listed_with_what_their_numbers_mean():
    async def go(s):
        return (await s.list_tools()).tools

    tools = session_run(go)
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert len(t.description) > 150, t.name
        schema = field(t, "input_schema", "inputSchema")
        assert schema["type"] == "object" and schema["required"], t.name
    d = {t.name: t.description for t in tools}
    assert "exposed_comm_us = communication not overlapped by compute" in d["summary"]
    assert "live_at_peak_bytes" in d["memory"]


def test_summary_equals_analyze_json():
    a = cli_json(LM)
    s = call("summary", {"paths": [str(LM)]})
    for k in ("files", "steps", "gpu", "categories", "flops", "launch", "warnings"):
        assert s[k] == a[k], k
    assert s["memory"]["peak_allocated_bytes"] == a["memory"]["peak_allocated_bytes"]
    want = [{k: c[k] for k in ("cause", "us", "share_of_window", "intervals")} for c in a["idle_causes"]["causes"]]
    assert s["idle_causes"]["causes"] == want
    assert [r["title"] for r in s["recommendations"]] == [r["title"] for r in a["recommendations"]]
    assert s["link"] == "#tab=overview"


def test_top_ops_and_kernels_equal_analyze_json_in_any_scope():
    a = cli_json(MLP)
    ops = call("top_ops", {"paths": [str(MLP)], "limit": 5})
    assert rows(ops) == a["ops"][:5]
    assert ops["total"] == len(a["ops"])
    name = a["ops"][0]["name"]
    assert ops["rows"][0]["link"].startswith("#tab=timeline&op=") and ops["rows"][0]["link"].endswith("&n=1")
    by_cpu = call("top_ops", {"paths": [str(MLP)], "limit": 7, "sort_by": "self_cpu_us"})
    assert rows(by_cpu) == sorted(a["ops"], key=lambda r: -r["self_cpu_us"])[:7]
    scoped = json.loads(cli("analyze", MLP, "--json", "--scope", "step:2"))
    k = call("top_kernels", {"paths": [str(MLP)], "scope": "step:2", "limit": 4})
    assert rows(k) == scoped["kernels"][:4]
    assert k["total"] == len(scoped["kernels"]) and k["scope"] == scoped["scope"]
    assert "scope=step:2" in k["rows"][0]["link"]
    assert name


def test_steps_compare_memory_and_hang_equal_the_cli():
    a = cli_json(MLP)
    st = call("steps", {"paths": [str(MLP)]})
    assert [{k: v for k, v in r.items() if k != "link"} for r in st["steps"]] == a["steps"]
    assert st["steps"][0]["link"] == "#tab=timeline&step=" + a["steps"][0]["name"].replace("#", "%23")

    d = json.loads(cli("diff", MLP_PLAIN, MLP, "--json"))
    c = call("compare", {"a": str(MLP_PLAIN), "b": str(MLP), "limit": 3})
    for k in ("verdict", "step", "figures", "breakdown", "gpu", "memory"):
        assert c[k] == d[k], k
    assert c["ops"]["rows"] == d["ops"][:3] and c["ops"]["total"] == len(d["ops"])

    snap = cli_json(SNAPSHOT)["snapshot"]
    m = call("memory", {"paths": [str(SNAPSHOT)], "limit": 3})
    dev, want = m["snapshot"]["devices"][0], snap["devices"][0]
    for k in ("peak_active_bytes", "reserved_bytes", "segments", "actions"):
        assert dev[k] == want[k], k
    assert dev["by_stack"] == want["by_stack"][:3]

    fr = cli_json(FR)["flight_recorder"]
    h = call("hang", {"paths": [str(FR)]})
    assert h["verdict"] == fr["verdict"] and h["hang"] == fr["hang"]
    assert h["hang"]["culprits"] == [2]  # the rank the fixture's generator (gen.py) left out


def test_ranks_and_collectives_of_a_run_folder():
    run = corpus("generated/ddp_gloo_2rank")
    a = cli_json(run)
    r = call("ranks", {"paths": [str(run)]})
    for k in ("ranks", "straggler", "no_straggler", "alignment", "run"):
        assert r.get(k) == a.get(k), k
    c = call("collectives", {"paths": [str(run)], "limit": 3})
    assert c["rows"] == sorted(a["collectives"], key=lambda x: -x["latency_us"])[:3]
    assert c["total"] == len(a["collectives"])


def test_slices_in_a_window_match_the_trace_json():
    # Independent: the trace's own complete events ("ph": "X"), read here, that overlap the
    # window of ProfilerStep#2 (trace ns = µs × 1000).
    with gzip.open(MLP) as f:
        events = json.load(f)["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    step = next(e for e in xs if e["name"] == "ProfilerStep#2")
    lo = round(step["ts"] * 1000)
    hi = lo + round(step["dur"] * 1000)
    inside = [e for e in xs if round(e["ts"] * 1000) < hi and round(e["ts"] * 1000) + round(e["dur"] * 1000) > lo]
    s = call("slices", {"path": str(MLP), "start_ns": lo, "end_ns": hi, "limit": 2000})
    assert s["total"] == len(inside)
    assert sorted(r["name"] for r in s["rows"]) == sorted(e["name"] for e in inside)
    assert s["rows"] == sorted(s["rows"], key=lambda r: r["start_ns"])
    few = call("slices", {"path": str(MLP), "start_ns": lo, "end_ns": hi, "limit": 5, "order": "duration"})
    assert len(few["rows"]) == 5 and few["truncated"] and few["total"] == len(inside)
    longest = sorted(inside, key=lambda e: -round(e["dur"] * 1000))[:5]
    assert [r["dur_ns"] for r in few["rows"]] == [round(e["dur"] * 1000) for e in longest]
    assert few["rows"][0]["link"].startswith("#tab=timeline&file=0&visStart=")
    mm = call("slices", {"path": str(MLP), "start_ns": lo, "end_ns": hi, "name": "aten::mm", "limit": 2000})
    assert mm["total"] == sum("aten::mm" in e["name"] for e in inside)


def test_errors_are_mcp_errors_naming_the_file():
    missing = "/nonexistent/rank0.pt.trace.json"
    e = call_error("summary", {"paths": [missing]})
    assert missing in e.message
    e = call_error("slices", {"path": str(SNAPSHOT), "start_ns": 0, "end_ns": 10})
    assert str(SNAPSHOT) in e.message and "Kineto trace" in e.message
    e = call_error("hang", {"paths": [str(MLP)]})
    assert str(MLP) in e.message
    e = call_error("top_ops", {"paths": [str(MLP)], "sort_by": "name"})
    assert "sort_by" in e.message
    e = call_error("top_ops", {})
    assert "paths" in e.message


def test_the_wheels_console_script_serves_mcp_too():
    script = Path(sys.executable).parent / "tracelight"
    if not script.exists():
        pytest.skip(f"{script} absent: the wheel is not installed in this environment")

    async def go(s):
        return (await s.list_tools()).tools

    assert {t.name for t in session_run(go, [str(script), "mcp"])} == TOOLS
