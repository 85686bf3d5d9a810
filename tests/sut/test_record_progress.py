"""Run-record schema in sync with the model; progress lines carry counts."""

from __future__ import annotations

import json
from pathlib import Path

from loadgen_sut.progress import progress_line
from loadgen_sut.record import record_json_schema
from loadgen_sut.sut import SutStats, percentile_with_count

REPO = Path(__file__).resolve().parents[2]


def test_committed_schema_matches_the_model() -> None:
    committed = json.loads((REPO / "schemas" / "run-record.json").read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(record_json_schema())), (
        "regenerate: python -m loadgen_sut.record --schema > schemas/run-record.json"
    )


def test_percentiles_carry_their_count() -> None:
    assert percentile_with_count([], 99) == (None, 0)
    value, n = percentile_with_count([float(i) for i in range(1, 101)], 99)
    assert n == 100 and value is not None and 98.0 < value <= 100.0


def test_progress_line_reports_counts_and_failures() -> None:
    stats = SutStats()
    stats.issued, stats.completed, stats.failed = 10, 8, 2
    stats.ttft_ms.extend([10.0, 20.0, 30.0])
    line = progress_line("performance", stats, stats.started_ns + 2_000_000_000, (0, stats.started_ns))
    assert "issued 10 completed 8 FAILED 2" in line
    assert "4.0 QPS" in line
    assert "TTFT p99" in line and "(n=3)" in line
    assert "TPOT p99 n/a (n=0)" in line
