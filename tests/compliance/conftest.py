"""Fixtures for the TEST06 tests: genuine LoadGen logs from TEST06-style runs of the tiny SUT."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen_sut.compliance import test06_audit_config
from rules.registry import load_round

TINY_SUT = Path(__file__).resolve().parents[1] / "data" / "loadgen_tiny_sut.py"


def _audit_config() -> str:
    rnd = load_round("v5.1")
    bm = rnd.benchmark("llama2-70b-99")
    assert bm is not None
    return test06_audit_config(rnd, bm)


RunTest06 = Callable[..., Path]


@pytest.fixture(scope="session")
def test06_run(tmp_path_factory: pytest.TempPathFactory) -> RunTest06:
    """``test06_run(scenario, fault="none", *extra)`` runs a TEST06-style performance run; returns its log dir."""
    cache: dict[tuple[str, ...], Path] = {}

    def run(scenario: str, fault: str = "none", *extra: str) -> Path:
        key = (scenario, fault, *extra)
        if key in cache:
            return cache[key]
        out = tmp_path_factory.mktemp(f"test06_{scenario}_{fault}")
        audit = out.parent / f"{out.name}.audit.config"
        audit.write_text(_audit_config())
        cmd = [sys.executable, str(TINY_SUT), str(out), "--scenario", scenario, "--mode", "performance"]
        cmd += ["--samples", "64", "--audit-config", str(audit), "--fault", fault, *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        cache[key] = out
        return out

    return run
