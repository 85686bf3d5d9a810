"""bench/device/workers_ladder.sh at a tiny scale: the device's one call, run here end to end (real token servers,
real LoadGen tests with real client workers), so that it is known to work before a device machine is spent on it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # two short LoadGen tests (about 30 s on 2 cores)
def test_quick_ladder_runs_each_worker_count_and_says_where_it_saturates(tmp_path: Path) -> None:
    env = dict(os.environ, QUICK="1", OUT=str(tmp_path / "out"), WORK=str(tmp_path / "work"),
               LADDER_ARGS="--workers 1,2 --rates 100")  # fmt: skip
    proc = subprocess.run(["bash", str(REPO / "bench" / "device" / "workers_ladder.sh")], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((tmp_path / "out" / "workers_ladder.json").read_text())
    assert (tmp_path / "out" / "ladder.log").is_file()
    assert [s["workers"] for s in doc["summary"]] == [1, 2]
    assert [(r["workers"], r["rate"]) for r in doc["rows"]] == [(1, 100.0), (2, 100.0)]
    for row, s in zip(doc["rows"], doc["summary"], strict=True):
        assert row["validity"] in ("VALID", "INVALID") and row["completed_per_s"] > 0
        assert row["held"] == (row["why"] == "")  # held, or saturated with the reason said
        assert (s["highest_held"] == 100.0) == row["held"]
        assert row["loadgen_process_cpu_s"] is not None and row["client_cpu_cores"] > 0
    assert "saturates at" in proc.stdout
