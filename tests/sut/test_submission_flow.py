"""The submission flow as a user drives it: what is refused before the first query, exit codes, Ctrl-C, and
``inference-audit package`` of finished runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sut_helpers import OFFLINE_TRIAL, sim_engine

from loadgen_sut.cli import main
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.run.preflight import preflight
from loadgen_sut.settings import RunMode
from rules import find_benchmark
from rules.models import Scenario


def _preflight(mode: RunMode, conf: str = "", **kw: object) -> list[str]:
    rnd, bench = find_benchmark("v6.1", "llama3.1-8b")
    req = RunRequest(
        round_name="v6.1", benchmark="llama3.1-8b", scenario="Offline", mode=mode, engine=sim_engine(), out=Path("x"), **kw  # type: ignore[arg-type]
    )
    _, findings = preflight(req, rnd, bench, Scenario.OFFLINE, conf)
    return [f"{f.rule}:{f.severity.value}" for f in findings]


def test_submission_refuses_what_can_only_fail_after_the_run() -> None:
    rules = _preflight(RunMode.SUBMISSION, dataset="builtin")
    assert "RUN-DATASET:error" in rules
    rules = _preflight(RunMode.SUBMISSION, dataset="data.jsonl", dataset_limit=100)
    assert "RUN-DATASET:error" in rules
    rules = _preflight(RunMode.SUBMISSION, dataset="data.jsonl", max_new_tokens=16)
    assert "RUN-GENERATION:error" in rules and "RUN-DATASET:error" not in rules
    # a trial may use them
    assert not [r for r in _preflight(RunMode.SUBMISSION_TRIAL, max_new_tokens=16) if r.startswith(("RUN-DATASET", "RUN-GEN"))]


def test_interactive_lines_in_user_conf_are_reported() -> None:
    rules = _preflight(RunMode.PERFORMANCE, conf="llama3_1-8b.Interactive.target_qps = 5\n")
    assert "RUN-CONF-INTERACTIVE:warning" in rules
    assert "RUN-CONF-INTERACTIVE:error" in _preflight(RunMode.SUBMISSION, conf="*.Interactive.min_duration = 5\n")
    assert not [r for r in _preflight(RunMode.PERFORMANCE, conf="*.Server.target_qps = 5\n") if "INTERACTIVE" in r]


def _trial_cli(tmp_path: Path, *extra: str) -> int:
    conf = tmp_path / "trial.conf"
    conf.write_text(OFFLINE_TRIAL, encoding="utf-8")
    argv = ["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Offline", "--round", "v6.1"]
    argv += ["--mode", "submission-trial", "--submitter", "Demo", "--user-conf", str(conf), "--out", str(tmp_path / "out")]
    argv += ["--sim-ttft-ms", "uniform:2,6", "--sim-tpot-ms", "0.5", "--progress-interval", "0", *extra]
    return main(argv)


def test_trial_exit_code_and_package_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A submission-trial that ran exits 0 (NOT_SUBMITTABLE, as the README says) although its tree has trial errors;
    ``inference-audit package`` lays the same run out in another tree, and refuses to overwrite it."""
    assert _trial_cli(tmp_path) == 0
    (run_dir,) = (tmp_path / "out" / "runs").iterdir()
    record = json.loads((run_dir / "run-record.json").read_text(encoding="utf-8"))
    assert record["verdict"]["status"] == "NOT_SUBMITTABLE"
    assert (run_dir / "mlperf.conf").is_file()
    capsys.readouterr()
    tree = tmp_path / "again"
    code = main(["package", str(run_dir), "--tree", str(tree), "--submitter", "Other"])
    out = capsys.readouterr().out
    assert code == 1  # the trial's tree is invalid (durations, 32-sample data set): the check says so
    res = tree / "closed" / "Other" / "results" / "simulated_system" / "llama3.1-8b" / "Offline"
    assert (res / "measurements.json").is_file() and (res / "TEST06" / "verify_accuracy.txt").is_file()
    assert "PERF-MIN-DURATION" in out and "MEAS-" not in out
    assert main(["package", str(run_dir), "--tree", str(tree), "--submitter", "Other"]) == 2
    assert "already exists" in capsys.readouterr().err


def test_package_refuses_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run").mkdir()
    assert main(["package", str(tmp_path / "run"), "--tree", str(tmp_path / "t"), "--submitter", "X"]) == 2
    assert "run-record.json" in capsys.readouterr().err
    (tmp_path / "run" / "run-record.json").write_text('{"schema_version": 1}', encoding="utf-8")
    assert main(["package", str(tmp_path / "run"), "--tree", str(tmp_path / "t"), "--submitter", "X"]) == 2
    assert "not a run record" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_ctrl_c_ends_the_run_without_a_traceback_and_keeps_a_record(tmp_path: Path) -> None:
    conf = tmp_path / "long.conf"
    conf.write_text("*.Server.target_qps = 50\n*.Server.min_duration = 60000\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "simulated", "--benchmark", "llama3.1-8b"]
    cmd += ["--scenario", "Server", "--round", "v6.1", "--user-conf", str(conf), "--out", str(tmp_path / "out")]
    cmd += ["--progress-interval", "0"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal: SIGINT not ignored
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((tmp_path / "out" / "runs").glob("*/performance/mlperf_log_detail.txt")):
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "Traceback" not in out, out
    (record,) = (tmp_path / "out" / "runs").glob("*/run-record.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["verdict"]["status"] == "INCOMPLETE"
    assert any("interrupted" in r for r in data["verdict"]["reasons"])


def test_submission_refuses_a_partial_data_set_by_its_size_not_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "mine.jsonl"
    copy.write_bytes((Path(__file__).resolve().parents[2] / "loadgen_sut" / "data" / "builtin_summaries.jsonl").read_bytes())
    argv = ["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Offline", "--round", "v6.1"]
    argv += ["--mode", "submission", "--submitter", "Demo", "--dataset", str(copy), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert "holds 32 samples" in capsys.readouterr().err
    assert not (tmp_path / "out" / "runs").exists() or not any((tmp_path / "out" / "runs").iterdir())


def test_deadline_option_is_parsed_and_validated(tmp_path: Path) -> None:
    import argparse

    from loadgen_sut.cli.run import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        ["--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--out", "x", "--deadline-s", "30"]
    )
    assert args.deadline_s == 30.0
    with pytest.raises(SystemExit) as exc:
        main(["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--out", "x",
              "--deadline-s", "0"])
    assert exc.value.code == 2
