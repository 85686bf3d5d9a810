"""The GPU smoke report (bench/device/smoke_report.py) over two real harness runs of the simulated engine.

The GPU script itself (bench/device/gpu_smoke.sh) needs torch and minutes; here only its report is
tested: that LoadGen's own numbers reach gpu_smoke.json unchanged, with their counts, and that what
comes back stays within the device tool's limits (at most 8 flat files).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from checker.parsers.mllog import parse_detail_file
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.record import RunRecord
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import run
from loadgen_sut.settings import RunMode

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "device"))

from smoke_report import REPORT_FILE, Step, main, read_steps, step_problem, suggest_qps

CONFS = {
    "Offline": "*.Offline.target_qps = 100\n*.Offline.min_duration = 0\n*.Offline.min_query_count = 32\n",
    "Server": "*.Server.target_qps = 200\n*.Server.min_duration = 2000\n",
}


def _sim_run(base: Path, scenario: str) -> Path:
    out = base / scenario.lower()
    out.mkdir(parents=True)
    conf = out / "user.conf"
    conf.write_text(CONFS[scenario], encoding="utf-8")
    engine = EngineSpec(kind="simulated", model="llama3.1-8b", sim_ttft_ms="uniform:2,6", sim_tpot_ms="0.5")
    request = RunRequest(
        round_name="v6.1",
        benchmark="llama3.1-8b",
        scenario=scenario,
        mode=RunMode.PERFORMANCE,
        engine=engine,
        out=out,
        user_conf=conf,
        max_new_tokens=16,
        progress_interval_s=0,
    )
    run(request, say=lambda _line: None)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("smoke")
    return {"offline": _sim_run(base, "Offline"), "server": _sim_run(base, "Server")}


def _record(run_out: Path) -> RunRecord:
    (path,) = run_out.glob("runs/*/run-record.json")
    return RunRecord.model_validate_json(path.read_text(encoding="utf-8"))


def test_report_carries_loadgens_numbers(runs: dict[str, Path], tmp_path: Path) -> None:
    steps = tmp_path / "steps.tsv"
    steps.write_text("install\t0\t3\nbuild-model\t0\t9\noffline\t1\t30\nserver\t0\t40\n", encoding="utf-8")
    out = tmp_path / "OUT"
    args = ["--offline", str(runs["offline"]), "--server", str(runs["server"]), "--steps", str(steps)]
    rc = main([*args, "--device", "cpu", "--out", str(out)])
    assert rc == 0
    files = sorted(p.name for p in out.iterdir())
    # what the device tool brings back: at most 8 plain files, names of letters, digits, '.', '_' and '-'
    assert len(files) <= 8 and all(re.fullmatch(r"[A-Za-z0-9._-]+", f) for f in files)
    assert all((out / f).is_file() for f in files)
    assert set(files) == {
        REPORT_FILE, "offline-run-record.json", "offline-mlperf_log_summary.txt",
        "server-run-record.json", "server-mlperf_log_summary.txt",
    }  # fmt: skip
    report = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))

    server = _record(runs["server"]).tests[0].loadgen
    assert server is not None and server.ttft_p99_ns is not None and server.tpot_p99_ns is not None
    ttft_p99_ns, tpot_p99_ns = server.ttft_p99_ns.value, server.tpot_p99_ns.value
    assert ttft_p99_ns is not None and tpot_p99_ns is not None
    ttft, tpot = report["headline"]["server_ttft_ms"], report["headline"]["server_tpot_ms"]
    assert ttft["p99_ms"] == pytest.approx(ttft_p99_ns / 1e6, abs=1e-3)
    assert tpot["p99_ms"] == pytest.approx(tpot_p99_ns / 1e6, abs=1e-3)
    assert ttft["count"] == tpot["count"] == server.query_count == server.ttft_p99_ns.count > 0
    detail = parse_detail_file(next(runs["server"].glob("runs/*/performance/mlperf_log_detail.txt")))
    ttft_p50_ns = detail.percentile_ns("first_token", 50)
    assert ttft_p50_ns is not None
    assert ttft["p50_ms"] == pytest.approx(ttft_p50_ns / 1e6, abs=1e-3)
    assert ttft["p50_ms"] <= ttft["p99_ms"]

    offline_record = _record(runs["offline"])
    offline = offline_record.tests[0].loadgen
    assert offline is not None and offline.result_key == "result_tokens_per_second"
    assert report["headline"]["offline_tokens_per_s"] == pytest.approx(offline.result_value)
    off = report["runs"]["offline"]
    # Offline: one query of all samples; LoadGen logs no TTFT/TPOT there, and the report says None, not 0
    assert off["query_count"] == 1 and off["ttft_ms"]["p99_ms"] is None
    assert off["latency_ms"]["count"] == offline_record.tests[0].sut.completed == 32
    assert report["headline"]["validity"] == {
        "offline": offline.result_validity,
        "server": server.result_validity,
    }
    assert report["runs"]["server"]["verdict"] == _record(runs["server"]).verdict.status
    # exit 1 of a run step is an INVALID verdict (a result), not a failed step
    assert report["problems"] == []
    assert report["model"] is None and report["device"] == "cpu"


def test_missing_run_and_failed_steps_are_problems(runs: dict[str, Path], tmp_path: Path) -> None:
    steps = tmp_path / "steps.tsv"
    steps.write_text("install\t0\t3\nbuild-model\t1\t2\nserver\t124\t0\n", encoding="utf-8")
    out = tmp_path / "OUT"
    args = ["--offline", str(runs["offline"]), "--server", str(tmp_path / "absent"), "--steps", str(steps)]
    rc = main([*args, "--model", str(tmp_path / "no-model"), "--out", str(out)])
    assert rc == 1
    report = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))
    assert report["runs"]["server"] is None and report["headline"]["server_ttft_ms"] is None
    problems = "\n".join(report["problems"])
    assert "server: no usable run record" in problems
    assert "model: cannot read" in problems
    assert "step build-model exited 1" in problems and "step server timed out" in problems
    assert [s.name for s in read_steps(steps)] == ["install", "build-model", "server"]
    assert step_problem(Step(name="offline", exit_status=1, wall_s=1.0)) == ""
    assert step_problem(Step(name="install", exit_status=1, wall_s=1.0)) != ""


def test_suggested_rates_follow_the_offline_throughput(runs: dict[str, Path], tmp_path: Path) -> None:
    offline = _record(runs["offline"])
    detail = parse_detail_file(next(runs["offline"].glob("runs/*/performance/mlperf_log_detail.txt")))
    samples_per_s = detail.float_value("result_samples_per_second")
    assert samples_per_s is not None and offline.tests[0].sut.completed == 32
    assert suggest_qps(runs["offline"], 0.5) == pytest.approx(round(samples_per_s * 0.5, 2))
    assert suggest_qps(runs["offline"], 2.0) == pytest.approx(round(samples_per_s * 2.0, 2))
    assert suggest_qps(tmp_path / "absent", 0.5) is None
