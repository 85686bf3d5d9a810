"""The run's verdict is a list of findings with RUN-* rules; its status is derived from them in one place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sut_helpers import SERVER_TRIAL, sim_engine, trial

from checker.findings import Finding, Severity
from loadgen_sut import runner
from loadgen_sut.record import (
    RECORD_FILE,
    LoadGenResult,
    RunRecord,
    SutCounts,
    TestRecord,
    Verdict,
    verdict_status,
)
from loadgen_sut.run import child as run_child
from loadgen_sut.run import verdict as run_verdict
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.settings import RunMode
from schemas import schema_errors


def _rules(verdict: Verdict) -> dict[str, Severity]:
    return {f.rule: f.severity for f in verdict.findings}


def _f(rule: str, severity: Severity) -> Finding:
    return Finding(rule=rule, severity=severity, message=rule)


@pytest.mark.parametrize(
    ("findings", "status"),
    [
        ([], "VALID"),
        ([_f("RUN-X", Severity.INFO)], "VALID"),
        ([_f("RUN-SIMULATED", Severity.WARNING)], "NOT_SUBMITTABLE"),
        ([_f("RUN-SIMULATED", Severity.WARNING), _f("RUN-LOADGEN-INVALID", Severity.ERROR)], "INVALID"),
        ([_f("RUN-LOADGEN-INVALID", Severity.ERROR), _f("RUN-INTERRUPTED", Severity.ERROR)], "INCOMPLETE"),
        ([_f("RUN-DEADLINE", Severity.ERROR)], "INCOMPLETE"),
        ([_f("RUN-TEST-FAILED", Severity.ERROR)], "INCOMPLETE"),
        ([_f("RUN-TEST-NOT-RUN", Severity.ERROR)], "INCOMPLETE"),
        ([_f("RUN-INTERRUPTED", Severity.WARNING)], "NOT_SUBMITTABLE"),  # the severity decides, not the rule alone
    ],
)
def test_status_is_derived_from_the_findings(findings: list[Finding], status: str) -> None:
    assert verdict_status(findings) == status
    verdict = Verdict.of(findings)
    assert verdict.status == status
    assert verdict.findings == tuple(findings)
    assert verdict.reasons == tuple(f.message for f in findings)


def _test_record(**kw: Any) -> TestRecord:
    base: dict[str, Any] = {
        "name": "performance",
        "directory": "performance",
        "status": "finished",
        "sut": SutCounts(issued=10, completed=10),
        "loadgen": LoadGenResult(result_validity="VALID"),
    }
    base.update(kw)
    return TestRecord(**base)


def test_each_test_problem_has_its_rule() -> None:
    assert run_verdict.judge_test(_test_record()) == []
    (f,) = run_verdict.judge_test(_test_record(status="deadline", error="the test ran past its deadline of 9 s"))
    assert (f.rule, f.severity) == ("RUN-DEADLINE", Severity.ERROR) and f.message.startswith("performance: deadline")
    (f,) = run_verdict.judge_test(_test_record(status="crashed", error="test process exited with code 1"))
    assert (f.rule, f.severity) == ("RUN-TEST-FAILED", Severity.ERROR)
    bad = _test_record(
        sut=SutCounts(issued=10, completed=9, failed=2, failures_by_kind={"timeout": 2}, single_token_outputs=1),
        loadgen=LoadGenResult(result_validity="INVALID", min_duration_met=False, num_errors=1, error_keys=("e",)),
    )
    assert [(f.rule, f.severity) for f in run_verdict.judge_test(bad)] == [
        ("RUN-SAMPLES-FAILED", Severity.ERROR),
        ("RUN-SINGLE-TOKEN", Severity.ERROR),
        ("RUN-COMPLETIONS", Severity.ERROR),
        ("RUN-LOADGEN-ERRORS", Severity.ERROR),
        ("RUN-LOADGEN-INVALID", Severity.ERROR),
    ]
    (f,) = run_verdict.judge_test(_test_record(loadgen=None))
    assert f.rule == "RUN-LOADGEN-LOG"
    # accuracy mode: LoadGen gives no result validity, and that is no finding
    assert run_verdict.judge_test(_test_record(name="accuracy", loadgen=LoadGenResult())) == []


def _on_disk(run_dir: Path) -> RunRecord:
    data = json.loads((run_dir / RECORD_FILE).read_text(encoding="utf-8"))
    assert schema_errors(data, "run-record") == []
    return RunRecord.model_validate(data)


def test_simulated_trial_is_not_submittable_by_warnings(tmp_path: Path) -> None:
    lines: list[str] = []
    conf = tmp_path / "trial.conf"
    conf.write_text(SERVER_TRIAL, encoding="utf-8")
    request = RunRequest(
        round_name="v6.1",
        benchmark="llama3.1-8b",
        scenario="Server",
        mode=RunMode.PERFORMANCE,
        engine=sim_engine(),
        out=tmp_path / "out",
        user_conf=conf,
        progress_interval_s=0,
    )
    out = runner.run(request, say=lines.append)
    verdict = out.record.verdict
    assert verdict.status == "NOT_SUBMITTABLE"
    assert _rules(verdict) == {"RUN-CONF-NONCOMPLIANT": Severity.WARNING, "RUN-SIMULATED": Severity.WARNING}
    assert "SIMULATED engine: no system was measured" in verdict.reasons
    assert _on_disk(out.run_dir).verdict == verdict
    # the preflight findings stay where they were, apart from the verdict's
    assert "RUN-CONF-NONCOMPLIANT" in {f.rule for f in out.record.findings}
    # printed as the preflight findings are
    at = lines.index("verdict: NOT_SUBMITTABLE [SIMULATED ENGINE]")
    assert "  WARNING RUN-SIMULATED: SIMULATED engine: no system was measured" in lines[at:]
    assert any(line.startswith("  WARNING RUN-CONF-NONCOMPLIANT: ") for line in lines[:at])  # the preflight's


def test_invalid_loadgen_run(tmp_path: Path) -> None:
    # TPOT 150 ms against the Server gate of 100 ms: LoadGen's result is INVALID
    out = trial(tmp_path, sim_engine(sim_ttft_ms="5", sim_tpot_ms="150", sim_output_tokens="3"), scenario="Server")
    verdict = out.record.verdict
    assert verdict.status == "INVALID"
    rules = _rules(verdict)
    assert rules["RUN-LOADGEN-INVALID"] is Severity.ERROR
    assert rules["RUN-SIMULATED"] is Severity.WARNING  # still said, though the error decides
    (invalid,) = [f for f in verdict.findings if f.rule == "RUN-LOADGEN-INVALID"]
    assert "latency constraints not met" in invalid.message
    assert _on_disk(out.run_dir).verdict == verdict


def test_ctrl_c_is_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = run_child.run_child
    calls: list[Path] = []

    def child(spec_path: Path, cwd: Path, deadline_s: float | None = None) -> tuple[int, str | None]:
        calls.append(spec_path)
        if len(calls) > 1:  # Ctrl-C during the accuracy test
            raise KeyboardInterrupt
        return real(spec_path, cwd, deadline_s)

    monkeypatch.setattr(run_child, "run_child", child)
    with pytest.raises(KeyboardInterrupt):
        trial(tmp_path, sim_engine(), scenario="Server", mode=RunMode.SUBMISSION_TRIAL)
    (path,) = (tmp_path / "out" / "runs").glob("*/" + RECORD_FILE)
    verdict = _on_disk(path.parent).verdict
    assert verdict.status == "INCOMPLETE"
    rules = _rules(verdict)
    assert rules["RUN-INTERRUPTED"] is Severity.ERROR
    assert rules["RUN-TEST-NOT-RUN"] is Severity.ERROR
    assert rules["RUN-TRIAL"] is Severity.WARNING
    (not_run,) = [f for f in verdict.findings if f.rule == "RUN-TEST-NOT-RUN"]
    assert not_run.message == "not run: accuracy, TEST06"
