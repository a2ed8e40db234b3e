"""Shared fixtures: the corpus (read in place, ../shared/corpus from the repo root) and the CLI
binary the bindings are compared against (an independent path through the same core: its own
process, its own JSON printing)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
CORPUS = Path(os.environ.get("TRACELIGHT_CORPUS", ROOT.parent / "shared" / "corpus"))
CLI = Path(os.environ.get("TRACELIGHT_CLI", ROOT / "target" / "release" / "tracelight"))


# In CI (CI or TRACELIGHT_REQUIRE_CORPUS set to anything but empty, 0 or false) a missing corpus
# file fails the test naming it, instead of skipping it: a run without the corpus must not pass.
REQUIRE_CORPUS = any(
    os.environ.get(k, "") not in ("", "0", "false") for k in ("TRACELIGHT_REQUIRE_CORPUS", "CI")
)


def corpus(rel: str) -> Path:
    p = CORPUS / rel
    if not p.exists():
        if REQUIRE_CORPUS:
            pytest.fail(f"corpus file {p} is missing (TRACELIGHT_REQUIRE_CORPUS/CI is set)")
        pytest.skip(f"{p} absent")
    return p


def cli(*args: str) -> str:
    if not CLI.exists():
        pytest.fail(f"{CLI} missing: cargo build --release -p tracelight-cli")
    return subprocess.run(
        [str(CLI), *map(str, args)], check=True, capture_output=True, text=True
    ).stdout


def cli_json(path) -> dict:
    return json.loads(cli("analyze", path, "--json"))
