"""loadgen_sut.compliance: TEST06 audit.config and verify_accuracy.txt, on genuine LoadGen runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.findings import UnusableInput
from checker.parsers.accuracy_log import ACCURACY_LOG_NAME
from loadgen_sut.compliance import DETAILS_FILE, VERIFY_FILE, verify_test06_run
from loadgen_sut.compliance import test06_audit_config as make_audit_config
from rules.models import Scenario
from rules.registry import load_round

RunTest06 = Callable[..., Path]

# The values of mlcommons/inference compliance/TEST06/audit.config.
OFFICIAL = {
    "mode": "2",
    "accuracy_log_rng_seed": "720381539243781796",
    "accuracy_log_sampling_target": "100",
    "min_query_count": "100",
    "min_duration": "0",
    "sample_concatenate_permutation": "0",
}


def _official_checker_verdict(lines: list[str]) -> bool:
    """How the submission checker reads TEST06's verify_accuracy.txt (compliance check)."""
    lines = [line.strip() for line in lines]
    first = "First token check pass: True" in lines or "First token check pass: Skipped" in lines
    return first and "EOS check pass: True" in lines and "Sample length check pass: True" in lines


def test_audit_config_has_official_values() -> None:
    rnd = load_round("v5.1")
    bm = rnd.benchmark("llama3.1-8b")
    assert bm is not None
    text = make_audit_config(rnd, bm)
    keys = dict(re.findall(r"^\*\.\*\.(\w+) = (\S+)$", text, re.M))
    assert keys == OFFICIAL
    edge = rnd.benchmark("llama3.1-8b-edge")
    assert edge is not None and "TEST06" not in edge.compliance_tests
    with pytest.raises(UnusableInput, match="does not require TEST06"):
        make_audit_config(rnd, edge)


def test_loadgen_applies_the_config(test06_run: RunTest06) -> None:
    detail = (test06_run("Server") / "mlperf_log_detail.txt").read_text()
    assert '"key": "effective_accuracy_log_sampling_target", "value": 100' in detail
    assert '"key": "effective_accuracy_log_rng_seed", "value": 720381539243781796' in detail
    assert '"key": "effective_test_mode", "value": "PerformanceOnly"' in detail


@pytest.mark.parametrize("scenario", ["Server", "Offline"])
def test_verify_pass_writes_official_file(test06_run: RunTest06, tmp_path: Path, scenario: str) -> None:
    run_dir = test06_run(scenario)
    log = run_dir / ACCURACY_LOG_NAME
    before = log.read_bytes()
    result = verify_test06_run(log, 2, tmp_path / "TEST06")  # scenario read from the detail log
    assert result.scenario is Scenario(scenario)
    lines = (tmp_path / "TEST06" / VERIFY_FILE).read_text().splitlines()
    first = "First token check pass: Skipped" if scenario == "Offline" else "First token check pass: True"
    assert lines == [
        first,
        "EOS check pass: True",
        "Sample length check pass: True",
        "TEST06 verification complete",
    ]
    assert _official_checker_verdict(lines)
    assert (tmp_path / "TEST06" / "accuracy" / ACCURACY_LOG_NAME).read_bytes() == before
    assert log.read_bytes() == before
    assert "samples logged: " in (tmp_path / "TEST06" / DETAILS_FILE).read_text()


@pytest.mark.parametrize(
    ("scenario", "fault", "line"),
    [
        ("Server", "first-token", "First token check pass: False"),
        ("Server", "double-eos", "EOS check pass: False"),
        ("Offline", "count", "Sample length check pass: False"),
    ],
)
def test_verify_failure_kinds(
    test06_run: RunTest06, tmp_path: Path, scenario: str, fault: str, line: str
) -> None:
    run_dir = test06_run(scenario, fault)
    verify_test06_run(run_dir / ACCURACY_LOG_NAME, None, tmp_path, scenario=Scenario(scenario))
    lines = (tmp_path / VERIFY_FILE).read_text().splitlines()
    assert line in lines and lines[-1] == "TEST06 verification failed"
    assert not _official_checker_verdict(lines)
    details = (tmp_path / DETAILS_FILE).read_text()
    assert "FAIL" in details and "qsl_idx" in details and "official default" in details


def test_verify_refuses_bad_setups(test06_run: RunTest06, tmp_path: Path) -> None:
    run_dir = test06_run("Server")
    # A log that already sits in <out>/accuracy/ would be copied onto itself.
    nested = tmp_path / "nested" / "accuracy"
    nested.mkdir(parents=True)
    (nested / ACCURACY_LOG_NAME).write_bytes((run_dir / ACCURACY_LOG_NAME).read_bytes())
    with pytest.raises(UnusableInput, match="overwrite the input"):
        verify_test06_run(nested / ACCURACY_LOG_NAME, 2, nested.parent, scenario=Scenario.SERVER)
    # Without a scenario and without the detail log there is nothing to read it from.
    with pytest.raises(UnusableInput, match=r"no mlperf_log_detail\.txt"):
        verify_test06_run(nested / ACCURACY_LOG_NAME, 2, tmp_path / "out")


def test_verify_defaults_to_the_benchmark_eos_ids(test06_run: RunTest06, tmp_path: Path) -> None:
    """No EOS id from the engine: the benchmark's rules-data EOS ids are used (Llama-3.1: 128001/128008/128009)."""
    bench = load_round("v5.1").benchmark("llama3.1-8b")
    good = test06_run("Server", "none", "--eos", "128009") / ACCURACY_LOG_NAME
    bad = test06_run("Server", "double-eos", "--eos", "128009") / ACCURACY_LOG_NAME
    assert verify_test06_run(good, None, tmp_path / "good", benchmark=bench).passed
    failed = verify_test06_run(bad, None, tmp_path / "bad", benchmark=bench)
    assert failed.eos.passed is False
    assert "EOS check pass: False" in (tmp_path / "bad" / VERIFY_FILE).read_text()
    assert "EOS id: 128001/128008/128009" in (tmp_path / "bad" / DETAILS_FILE).read_text()
    # an engine that names its EOS id wins over the rules data
    assert verify_test06_run(bad, 2, tmp_path / "engine", benchmark=bench).eos.passed is True


def test_verify_command(test06_run: RunTest06, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``inference-audit verify TEST06 RUN_DIR --out DIR``: the same verification, exit 0/1, a new DIR only."""
    from loadgen_sut.cli import main

    good, bad = test06_run("Server"), test06_run("Server", "double-eos")
    assert main(["verify", "TEST06", str(good), "--out", str(tmp_path / "good"), "--eos-token-id", "2"]) == 0
    out = capsys.readouterr().out
    assert "EOS check pass: True" in out and "TEST06: PASSED" in out
    assert (tmp_path / "good" / VERIFY_FILE).read_text().splitlines()[-1] == "TEST06 verification complete"
    assert main(["verify", "TEST06", str(bad), "--out", str(tmp_path / "bad")]) == 1
    assert "EOS check pass: False" in (tmp_path / "bad" / VERIFY_FILE).read_text()
    capsys.readouterr()
    before = (tmp_path / "good" / VERIFY_FILE).read_bytes()
    assert main(["verify", "TEST06", str(bad), "--out", str(tmp_path / "good")]) == 2  # never replaced
    assert (tmp_path / "good" / VERIFY_FILE).read_bytes() == before
    assert "exists" in capsys.readouterr().err
    assert main(["verify", "TEST06", str(tmp_path), "--out", str(tmp_path / "x")]) == 2  # no log there
    assert main(["verify", "TEST06", str(good), "--out", str(tmp_path / "y"), "--benchmark", "nope"]) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
