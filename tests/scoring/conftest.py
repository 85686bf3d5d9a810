"""Fixtures for the accuracy tests: genuine LoadGen accuracy logs made by the tiny SUT."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

TINY_SUT = Path(__file__).resolve().parents[1] / "data" / "loadgen_tiny_sut.py"

RunTinySut = Callable[..., Path]


def run_tiny_sut(outdir: Path, *args: str) -> Path:
    """Run LoadGen with the tiny SUT in a fresh process; returns OUTDIR/mlperf_log_accuracy.json."""
    proc = subprocess.run(
        [sys.executable, str(TINY_SUT), str(outdir), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return outdir / "mlperf_log_accuracy.json"


@pytest.fixture(scope="session")
def tiny_sut() -> RunTinySut:
    """``tiny_sut(outdir, *args)`` runs the tiny SUT (see tests/data/loadgen_tiny_sut.py)."""
    return run_tiny_sut


@pytest.fixture(scope="session")
def server_accuracy_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_tiny_sut(tmp_path_factory.mktemp("server_acc"), "--scenario", "Server", "--samples", "12")


@pytest.fixture(scope="session")
def offline_accuracy_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_tiny_sut(tmp_path_factory.mktemp("offline_acc"), "--scenario", "Offline", "--samples", "12")
