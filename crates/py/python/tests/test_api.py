"""tracelight.load / analyze / summary / tables against the `tracelight` CLI on the corpus."""

import json
import warnings

import pyarrow as pa
import pytest

import tracelight
from conftest import ROOT, cli, cli_json, corpus

# A CPU trace with [memory] events, a GPU trace (V100, NCCL, [memory] events), a GPU trace with
# NCCL kernels and no memory, a CUDA allocator snapshot.
FILES = [
    "generated/lstm_mem.1795343595561069429.pt.trace.json",
    "real/hta/v100_rank1of2_profile_memory.json.gz",
    "real/hta/nccl_data_a100_rank0of2.json.gz",
    "real/snapshots/cs336_silmont_tiny_mem_snapshot.pickle",
]
RUNS = ["real/param/dlrm_8rank", "generated/ddp_gloo_2rank"]
TABLES = {"ops": "ops", "kernels": "kernels", "steps": "steps", "memory": ("memory", "ops")}
RUN_TABLES = {**TABLES, "ranks": "ranks", "collectives": "collectives"}


def rows_of(v: dict, key):
    for k in key if isinstance(key, tuple) else (key,):
        v = v[k]
    return v


@pytest.mark.parametrize("rel", FILES)
def test_file_analyze_and_summary_equal_the_cli(rel):
    p = corpus(rel)
    t = tracelight.load(p)
    assert isinstance(t, tracelight.Trace)
    assert t.analyze() == cli_json(p)
    assert t.summary() == cli("summary", p)


@pytest.mark.parametrize("rel", RUNS)
def test_run_folder_analyze_and_summary_equal_the_cli(rel):
    p = corpus(rel)
    r = tracelight.load(p)
    assert isinstance(r, tracelight.Run)
    assert r.analyze() == cli_json(p)
    assert r.summary() == cli("summary", p)


@pytest.mark.parametrize("rel", FILES[:3])
def test_trace_tables_hold_the_cli_rows(rel):
    p = corpus(rel)
    t = tracelight.load(p)
    want = cli_json(p)
    for method, key in TABLES.items():
        tab = getattr(t, method)()
        assert isinstance(tab, pa.Table)
        assert tab.to_pylist() == rows_of(want, key), method
        assert len(tab.to_pandas()) == len(rows_of(want, key))


def test_run_tables_hold_the_cli_rows_with_typed_columns():
    p = corpus(RUNS[0])
    r = tracelight.load(p)
    want = cli_json(p)
    for method, key in RUN_TABLES.items():
        assert getattr(r, method)().to_pylist() == rows_of(want, key), method
    ranks = r.ranks()
    assert ranks.num_rows == 8
    assert ranks.schema.field("rank").type == pa.int64()
    assert ranks.schema.field("step_time_us").type == pa.float64()
    assert ranks.schema.field("steps_us").type == pa.large_list(pa.float64())
    coll = r.collectives()
    per_rank = coll.schema.field("ranks").type
    assert pa.types.is_large_list(per_rank) and pa.types.is_struct(per_rank.value_type)
    df = ranks.to_pandas()
    # The straggler is the rank the others wait for: the one most often last at the collectives.
    assert df.loc[df["arrived_last"].idxmax(), "rank"] == want["straggler"]["rank"]


def test_memory_table_columns_are_numbers_not_objects():
    t = tracelight.load(corpus(FILES[0]))
    m = t.memory()
    assert m.num_rows > 0
    for name in ("allocated_bytes", "peak_bytes", "self_net_bytes"):
        assert m.schema.field(name).type == pa.int64()
    assert m.schema.field("name").type == pa.large_string()


def test_unreadable_files_raise_trace_error_naming_file_and_reason(tmp_path):
    bad = ROOT / "crates/core/tests/fixtures/bad"
    for name, reason in [
        ("empty.json", "the file is empty"),
        ("png_renamed.json", "PNG image"),
    ]:
        p = bad / name
        with pytest.raises(tracelight.TraceError) as e:
            tracelight.load(p)
        assert e.value.file == str(p)
        assert reason in e.value.reason
        assert isinstance(e.value, ValueError)
    missing = tmp_path / "nope.json"
    with pytest.raises(tracelight.TraceError) as e:
        tracelight.load(missing)
    assert e.value.file == str(missing)


def test_truncated_trace_loads_what_parsed_with_a_warning(tmp_path):
    src = corpus(FILES[0]).read_bytes()
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(src[: len(src) // 2])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = tracelight.load(cut)
    assert [x.category for x in w] == [tracelight.TraceWarning]
    assert "truncated" in str(w[0].message)
    assert t.analyze() == cli_json(cut)
    assert 0 < len(t.ops()) <= len(tracelight.load(corpus(FILES[0])).ops())


def test_a_table_the_file_does_not_have_is_a_type_error():
    s = tracelight.load(corpus(FILES[3]))
    assert s.format == "cuda_snapshot"
    with pytest.raises(TypeError):
        s.ops()


def test_slices_table_is_every_slice_of_the_model_checked_against_the_raw_json():
    import collections
    import gzip
    import json

    p = corpus(FILES[2])
    t = tracelight.load(p)
    s = t.slices()
    assert s.schema.field("ts_ns").type == pa.int64()
    assert pa.types.is_dictionary(s.schema.field("name").type)
    # The raw file, parsed here by Python's json: kernel events by name, and their durations.
    raw = json.load(gzip.open(p))["traceEvents"]
    kernels = [e for e in raw if e.get("ph") == "X" and e.get("cat") == "kernel"]
    df = s.to_pandas()
    k = df[df["kind"] == "kernel"]
    assert collections.Counter(k["name"].astype(str)) == collections.Counter(e["name"] for e in kernels)
    assert k["device"].notna().all() and k["stream"].notna().all()
    assert df[df["kind"] == "cpu_op"]["device"].isna().all()
    # Per name of GPU work (kernels, copies, sets), the CLI's calls and total time are the
    # table's count and sum (ns -> us).
    gpu = df[df["kind"].isin(["kernel", "memcpy", "memset"])]
    by_name = gpu.groupby(gpu["name"].astype(str))["dur_ns"].agg(["count", "sum"])
    for row in cli_json(p)["kernels"]:
        assert by_name.loc[row["name"], "count"] == row["calls"]
        assert abs(by_name.loc[row["name"], "sum"] / 1e3 - row["total_us"]) < 1e-3 * row["calls"]
    # A slice's parent is the enclosing slice on its track: it starts no later and ends no earlier.
    child = df[df["parent"].notna()]
    par = df.loc[child["parent"].astype(int).to_numpy()]
    assert (par["ts_ns"].to_numpy() <= child["ts_ns"].to_numpy()).all()
    assert (par["track"].to_numpy() == child["track"].to_numpy()).all()
    with pytest.raises(TypeError):
        tracelight.load(corpus(FILES[3])).slices()


def test_digest_writes_what_the_cli_writes_and_the_folder_loads_as_the_run(tmp_path):
    kineto = corpus("real/param/dlrm_8rank/kineto")
    traces = sorted(kineto.glob("*.pt.trace.json"))
    ours, theirs = tmp_path / "py", tmp_path / "cli"
    for t in traces:
        w = tracelight.digest(t, ours)
        assert w["source_bytes"] == t.stat().st_size and 0 < w["bytes"] < w["source_bytes"]
        assert w["header"].endswith(tracelight.digest_stem(t.name) + ".digest.json")
    cli("digest", *traces, "-o", theirs)
    for f in sorted(theirs.iterdir()):
        assert (ours / f.name).read_bytes() == f.read_bytes(), f.name
    run = tracelight.load(ours)
    assert isinstance(run, tracelight.Run)
    want = cli_json(ours)
    assert run.analyze() == want
    assert run.summary() == cli("summary", ours)
    assert run.ranks().to_pylist() == want["ranks"]
    assert run.collectives().to_pylist() == want["collectives"]
    # From the digests alone, the same matching and straggler as from the traces.
    from_traces = cli_json(kineto)
    for k in ("collectives", "straggler", "no_straggler"):
        assert want[k] == from_traces[k], k


def test_floats_of_the_cli_text_are_parsed_exactly():
    import json
    import random

    from tracelight import _native

    rng = random.Random(17)
    # 26.618088607594938 is a value serde_json's default parser reads one bit off.
    floats = [26.618088607594938] + [rng.uniform(-1e6, 1e6) for _ in range(5000)]
    floats += [rng.random() * 10.0 ** rng.randint(-300, 300) for _ in range(5000)]
    doc = {"a": floats, "b": {"z": 1.5, "y": [{"x": 0.1, "s": '-1.5e3 " 2 \\ 3'}]}, "n": -7}
    text = json.dumps(doc, indent=2, sort_keys=True)
    assert json.loads(_native._exact_json(text)) == doc


FR = ROOT / "crates/core/tests/fixtures/fr-torch-2.15-gloo"


def test_flight_recorder_dumps_give_the_cli_verdict_and_their_entries():
    import pickle

    p = FR / "two_pgs"
    run = tracelight.load(p)
    want = cli_json(p)
    assert run.flight_recorder() == want["flight_recorder"]
    # By construction (the generator's expected.json): rank 3 never issued group 2's #4.
    hang = run.flight_recorder()["hang"]
    assert (hang["pg"], hang["seq"], hang["culprits"]) == ("2", 4, [3])
    e = run.flight_recorder_entries()
    assert e.schema.field("collective_seq_id").type == pa.int64()
    assert e.schema.field("time_started_ns").type == pa.null()  # gloo never discovers it
    df = e.to_pandas()
    # The same entries Python's own pickle reads from each dump (our fixtures: trusted input).
    for rank in range(4):
        with open(p / f"nccl_trace_rank_{rank}", "rb") as f:
            d = pickle.load(f)
        mine = df[df["rank"] == rank]
        assert list(mine["record_id"]) == [x["record_id"] for x in d["entries"]]
        assert list(mine["retired"]) == [x["retired"] for x in d["entries"]]
        assert list(mine["profiling_name"]) == [x["profiling_name"] for x in d["entries"]]
    # One dump alone loads as a Trace with the same table.
    one = tracelight.load(p / "nccl_trace_rank_2")
    assert one.format == "flight_recorder"
    assert one.flight_recorder_entries().num_rows == len(df[df["rank"] == 2])


GEN = ROOT / "crates/core/tests/fixtures/snapshots-gen"


def test_snapshot_diff_and_oom_folder_equal_the_cli_and_the_generated_answers():
    """``tracelight.diff`` on two generated snapshots is ``tracelight diff --json``, and its rows
    are what ``gen.py`` built in; a folder of OOM dumps loads as a run naming rank 2."""
    a, b = GEN / "step_a.pickle", GEN / "step_b.pickle"
    d = tracelight.diff(a, b)
    assert d == json.loads(cli("diff", str(a), str(b), "--json"))
    expected = json.loads((GEN / "expected.json").read_text())["step"]
    rows = {r["key"]: [r["a_bytes"], r["b_bytes"], r["change"]] for r in d["snapshot"]["diff"]["by_frame"]}
    assert rows == expected["by_frame"]
    assert tracelight.diff(a, b, markdown=True) == cli("diff", str(a), str(b))
    run = tracelight.load(GEN / "oom_run").analyze()
    assert [x["rank"] for x in run["oom_dumps"]["differs"]] == [2]
    with pytest.raises(tracelight.TraceError):
        tracelight.diff(a, GEN / "missing.pickle")
