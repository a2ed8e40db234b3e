"""tracelight.ray on a local Ray (2 CPUs): digests fanned out as one task per trace, the run read
back from the digests alone, compared with the single-process `tracelight analyze DIR --json` of
the traces themselves. Ray is a large install, so this file runs only where it is installed
(`bash scripts/python.sh --ray` installs it and runs this file); elsewhere it is skipped."""

import pytest

from conftest import cli_json, corpus
from synth_ranks import write_ranks

ray = pytest.importorskip("ray")
import tracelight.ray as tlray  # noqa: E402

# What the ranks view, the collective matching and the straggler work need; the per-rank `file`
# names the digest on one side and the trace on the other, so it is compared apart.
KEYS = ["collectives", "straggler", "no_straggler", "alignment", "unmatched_collective_calls"]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=200 << 20)
    yield
    ray.shutdown()


def same_run(from_digests: dict, from_traces: dict) -> None:
    for k in KEYS:
        assert from_digests.get(k) == from_traces.get(k), k
    strip = lambda rows: [{k: v for k, v in r.items() if k != "file"} for r in rows]  # noqa: E731
    assert strip(from_digests["ranks"]) == strip(from_traces["ranks"])


def test_dlrm_8_ranks_on_ray_equal_the_single_process_answer(tmp_path):
    kineto = corpus("real/param/dlrm_8rank/kineto")
    got = tlray.run(str(tmp_path / "digests"), str(kineto / "*.pt.trace.json"))
    assert got["ray"]["traces"] == 8
    assert got["ray"]["digest_bytes"] < got["ray"]["trace_bytes"] / 10
    same_run(got, cli_json(kineto))


def test_256_synthetic_ranks_on_ray_find_the_slow_rank(tmp_path):
    traces = tmp_path / "traces"
    write_ranks(traces, 256, steps=3, slow=137, slow_extra_us=200.0)
    got = tlray.run(str(tmp_path / "digests"), str(traces / "rank-*.pt.trace.json"))
    assert got["ray"]["traces"] == 256
    same_run(got, cli_json(traces))
    # By construction: rank 137 computes 200 us longer, every all_reduce waits for it.
    assert got["straggler"]["rank"] == 137
    assert got["straggler"]["method"] == "collective_arrival"
    assert len(got["collectives"]) == 3
    assert all(len(c["ranks"]) == 256 for c in got["collectives"])
    # Skew: rank 137 starts 200 us + its jitter (137 % 7 x 3 us) after the earliest ranks
    # (jitter 0).
    assert [c["skew_us"] for c in got["collectives"]] == [200.0 + 3.0 * (137 % 7)] * 3


def test_cli_entry_point_prints_the_straggler(tmp_path, capsys):
    traces = tmp_path / "traces"
    write_ranks(traces, 4, steps=2, slow=2)
    assert tlray.main([str(tmp_path / "d"), str(traces / "*.json")]) == 0
    out = capsys.readouterr().out
    assert "4 traces" in out and "straggler: rank 2" in out
