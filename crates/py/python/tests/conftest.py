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


def corpus(rel: str) -> Path:
    p = CORPUS / rel
    if not p.exists():
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
