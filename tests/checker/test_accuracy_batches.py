"""LoadGen's accuracy-mode batches (ACC-SAMPLES): the pairs it logs per loadable set, in closed form, bounded."""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.checks.accuracy_run import accuracy_batch_count, loadgen_accuracy_batches, planned_issued
from checker.engine import check_tree
from rules import load_round
from tests.checker.fixture_cases import materialize

SCENARIOS = ("Offline", "MultiStream", "SingleStream", "Server")


@settings(max_examples=300, deadline=None)
@given(
    total=st.integers(0, 5000),
    set_size=st.integers(1, 700),
    scenario=st.sampled_from(SCENARIOS),
    spq=st.integers(1, 16),
    logs=st.booleans(),
)
def test_the_closed_form_is_the_plan(total: int, set_size: int, scenario: str, spq: int, logs: bool) -> None:
    plan = loadgen_accuracy_batches(total, set_size, scenario, spq, logs_batch_size=logs)
    assert len(plan) == accuracy_batch_count(total, set_size)
    assert sum(q * n for q, n in plan) == planned_issued(total, set_size, scenario, spq, logs)


def test_the_real_retinanet_batches() -> None:
    """retinanet Offline (published v5.1 logs): 24,781 images in sets of 64, 387 x 64 + 13."""
    plan = loadgen_accuracy_batches(24781, 64, "Offline", 64)
    assert len(plan) == 388 and plan[0] == (1, 64) and plan[-1] == (1, 13)
    # LoadGen before 5.0.11 logs the configured samples_per_query for each Offline set
    assert set(loadgen_accuracy_batches(24781, 64, "Offline", 7920000, logs_batch_size=False)) == {(1, 7920000)}


def test_a_huge_logged_qsl_is_judged_without_building_its_plan(tmp_path: Path) -> None:
    """A hostile accuracy log: a QSL of 10^15 samples loaded in sets of 1 is one finding in bounded time and memory."""
    acc = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Offline/accuracy/mlperf_log_detail.txt"
    spec = {
        "base": "llm",
        "mutations": [
            {"op": "mllog_set", "path": acc, "key": "qsl_reported_total_count", "value": 10**15},
            {"op": "mllog_set", "path": acc, "key": "effective_performance_sample_count", "value": 1},
        ],
    }
    root = materialize(spec, tmp_path / "tree")
    t0 = time.perf_counter()
    report = check_tree(root, load_round("v5.1"), workers=1)
    assert time.perf_counter() - t0 < 30
    (offline,) = [r for r in report.results if r.path.endswith("/Offline")]
    hits = [f for f in offline.findings if f.rule == "ACC-SAMPLES" and "batch(es)" in f.message]
    assert hits and "in 1000000000000000 batch(es) of up to 1" in hits[0].message
