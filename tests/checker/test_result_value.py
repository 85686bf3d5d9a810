"""checker.result_value: the one result computation behind summary rows and ``table --tree`` (real v5.1 logs)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from checker.parsers.mllog import parse_detail_file
from checker.result_value import ResultStatus, compute_result
from rules.models import Scenario
from rules.registry import load_round

SS_RESULT = "open/NVIDIA/results/Jetson-Thor_TRT/llama3.1-8b-edge/SingleStream"
DETAIL = "performance/run_1/mlperf_log_detail.txt"


def _official_result(shared_dir: Path, location: str) -> float:
    for path in sorted((shared_dir / "data" / "official-verdicts").glob("*summary*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row.get("Location") == location:
                    return float(row["Result"])
    pytest.fail(f"{location} is not in the official summary CSV")


def test_direct_result_matches_official_summary(v51_tree: Path, shared_dir: Path) -> None:
    rnd = load_round("v5.1")
    log = parse_detail_file(v51_tree / SS_RESULT / DETAIL)
    rv = compute_result(log, rnd, rnd.benchmarks["llama3.1-8b-edge"], Scenario.SINGLE_STREAM)
    assert rv.status is ResultStatus.OK and not rv.inferred
    assert rv.key is not None and rv.line == log.line_of(rv.key)
    assert rv.value == pytest.approx(_official_result(shared_dir, SS_RESULT), rel=1e-9)
    assert rv.units == "Latency (ms)"


def test_inferred_and_refused_scenarios(v51_tree: Path) -> None:
    rnd = load_round("v5.1")
    bench = rnd.benchmarks["llama3.1-8b-edge"]
    log = parse_detail_file(v51_tree / SS_RESULT / DETAIL)
    ms = compute_result(log, rnd, bench, Scenario.MULTI_STREAM)
    es_ms = log.float_value("early_stopping_latency_ms")
    assert ms.inferred and es_ms is not None and ms.value == pytest.approx(8 * es_ms / 1e6)
    off = compute_result(log, rnd, bench, Scenario.OFFLINE)
    assert off.inferred and off.value == log.float_value("result_qps_without_loadgen_overhead")
    assert off.line == log.line_of("result_qps_without_loadgen_overhead")
    assert compute_result(log, rnd, bench, Scenario.SERVER).status is ResultStatus.NOT_INFERABLE
    assert compute_result(log, rnd, bench, Scenario.INTERACTIVE).status is ResultStatus.INTERACTIVE_NOT_SERVER
