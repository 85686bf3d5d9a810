"""Real LoadGen runs (tiny trial settings) against the simulated engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sut_helpers import sim_engine, trial

from checker.parsers.accuracy_log import parse_accuracy_log
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.record import RECORD_FILE, RunRecord
from loadgen_sut.settings import RunMode
from schemas import schema_errors


def test_server_performance_run_is_valid_loadgen_but_labelled(tmp_path: Path) -> None:
    out = trial(tmp_path, sim_engine(), scenario="Server")
    rec = out.record
    perf = rec.tests[0]
    assert perf.status == "finished"
    assert perf.loadgen is not None and perf.loadgen.result_validity == "VALID"
    assert perf.loadgen.num_errors == 0  # FT before QSC, every sample: no LoadGen runtime errors
    assert perf.sut.issued == perf.sut.completed == perf.loadgen.query_count
    assert perf.sut.failed == 0 and perf.sut.duplicate_completions == 0
    assert perf.loadgen.ttft_p99_ns is not None and perf.loadgen.ttft_p99_ns.count == perf.loadgen.query_count
    # trial overrides + simulated engine: never "VALID"
    assert rec.verdict.status == "NOT_SUBMITTABLE"
    assert rec.simulated and rec.engine is not None and rec.engine.simulated
    assert "simulated" in rec.engine.model
    assert any("SIMULATED" in r for r in rec.verdict.reasons)
    assert any(not o.compliant and o.setting == "min_duration_ms" for o in rec.overrides)
    # the record on disk validates against the committed schema
    on_disk = json.loads((out.run_dir / RECORD_FILE).read_text(encoding="utf-8"))
    assert schema_errors(on_disk, "run-record") == []
    assert RunRecord.model_validate(on_disk) == rec
    # the test ran in its own clean directory, with no audit.config
    assert not (out.run_dir / "performance" / "audit.config").exists()


def test_accuracy_run_logs_every_sample_once_with_real_counts(tmp_path: Path) -> None:
    out = trial(tmp_path, sim_engine(), scenario="Server", mode=RunMode.ACCURACY)
    acc_dir = out.run_dir / "accuracy"
    log = parse_accuracy_log(acc_dir / "mlperf_log_accuracy.json")
    n = out.record.dataset.samples if out.record.dataset else 0
    assert n == 32 and len(log.entries) == n
    assert sorted(e.qsl_idx for e in log.entries) == list(range(n))
    for e in log.entries:
        ids = e.token_ids()
        assert e.token_count == len(ids) >= 2
        first = e.first_token_ids()
        assert first is not None and len(first) == 1 and ids[:1] == first
    assert (acc_dir / "accuracy.txt").read_text(encoding="utf-8").strip().splitlines()[-1].startswith("hash=")
    detail = parse_detail_file(acc_dir / "mlperf_log_detail.txt")
    assert detail.num_errors() == 0
    assert out.record.accuracy is not None


def test_single_token_outputs_are_reported_not_hidden(tmp_path: Path) -> None:
    out = trial(tmp_path, sim_engine(sim_output_tokens="1"), scenario="Server", min_new_tokens=None)
    perf = out.record.tests[0]
    assert perf.status == "finished" and perf.sut.completed == perf.sut.issued
    assert perf.sut.single_token_outputs == perf.sut.completed
    assert out.record.verdict.status == "INVALID"
    assert any("single-token" in r for r in out.record.verdict.reasons)


def test_offline_performance(tmp_path: Path) -> None:
    out = trial(tmp_path, sim_engine(sim_max_concurrency=8), scenario="Offline")
    perf = out.record.tests[0]
    assert perf.loadgen is not None and perf.loadgen.result_validity == "VALID"
    assert perf.loadgen.result_key == "result_tokens_per_second" and (perf.loadgen.result_value or 0) > 0
    assert perf.sut.failed == 0 and perf.sut.completed == perf.sut.issued >= 32


@pytest.mark.slow
def test_find_peak_completes_and_reports_the_peak(tmp_path: Path) -> None:
    """LoadGen reuses query ids across find-peak's runs: every one must still complete (no hang)."""
    conf = "*.Server.target_qps = 100\n*.Server.min_duration = 1000\n"
    out = trial(tmp_path, sim_engine(sim_max_concurrency=16), scenario="Interactive", mode=RunMode.FIND_PEAK, conf=conf)
    t = out.record.tests[0]
    assert t.status == "finished" and t.sut.issued == t.sut.completed and t.sut.duplicate_completions == 0
    assert t.loadgen is not None and t.loadgen.peak_target_qps is not None and t.loadgen.peak_target_qps >= 100
