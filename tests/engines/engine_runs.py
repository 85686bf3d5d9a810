"""Running ``inference-audit run`` as a child process against a real engine, and reading what it recorded."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


def run_recorded(cmd: list[str], cwd: Path, work: Path, timeout_s: float, label: str) -> tuple[int, dict[str, Any], str]:
    """Run ``cmd`` in ``cwd``; (exit code, the newest ``work/runs/*/run-record.json``, stdout + stderr)."""
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False, cwd=cwd)
    print(f"\n{label}: {time.monotonic() - t0:.1f} s (exit {proc.returncode})")
    records = sorted((work / "runs").glob("*/run-record.json"))
    assert records, f"no run record\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    record: dict[str, Any] = json.loads(records[-1].read_text())
    return proc.returncode, record, proc.stdout + proc.stderr


def recorded_test(record: dict[str, Any], name: str) -> dict[str, Any]:
    """The run record's test ``name`` (performance, accuracy, TEST06, ...)."""
    tests = {t["name"]: t for t in record["tests"]}
    assert name in tests, f"no {name} test in the run record: {sorted(tests)}"
    test: dict[str, Any] = tests[name]
    return test
