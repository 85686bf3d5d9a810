"""The submission flow runs the compliance tests the round requires of the benchmark (Benchmark.compliance_tests):
TEST06 for the llama models, TEST07 and TEST09 for gpt-oss-120b; what it cannot produce is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sut_helpers import sim_engine

from checker.engine import check_tree
from checker.findings import Severity, UnusableInput
from loadgen_sut.cli import main
from loadgen_sut.datasets import load_dataset
from loadgen_sut.record import RunRecord
from loadgen_sut.run.plan import (
    TEST_NAMES,
    RunRequest,
    TestDataset,
    compliance_dataset_findings,
    planned_tests,
    refuse_wrong_sized_datasets,
)
from loadgen_sut.run.steps import STEPS, audit_findings
from loadgen_sut.settings import RunMode, TestMode
from rules import load_round
from rules.models import Scenario

GPT_OSS = "gpt-oss-120b"


def _gpt_oss_trial_set(path: Path, n: int = 16) -> Path:
    """A small data set in the gpt-oss-120b accuracy set's columns (prompt, ground_truth, dataset)."""
    rows = []
    for i in range(n):
        if i % 4 == 3:
            rows.append({"prompt": f"Compute {i} * 2. Put the final answer in \\boxed{{}}.", "ground_truth": str(2 * i), "dataset": "aime25"})
        else:
            rows.append({"prompt": f"Q{i}: A) 1 B) 2 C) {i} D) 4", "ground_truth": "C", "dataset": "gpqa_diamond"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_tests_per_benchmark() -> None:
    rnd = load_round("v6.1")
    names = [n for n, _, _ in planned_tests(RunMode.SUBMISSION, rnd.benchmarks[GPT_OSS])]
    assert names == ["performance", "accuracy", "TEST07", "TEST09"]
    llama = planned_tests(RunMode.SUBMISSION_TRIAL, rnd.benchmarks["llama3.1-8b"])
    assert llama == [
        ("performance", TestMode.PERFORMANCE_ONLY, False),
        ("accuracy", TestMode.ACCURACY_ONLY, False),
        ("TEST06", TestMode.PERFORMANCE_ONLY, True),
    ]
    assert planned_tests(RunMode.PERFORMANCE, rnd.benchmarks[GPT_OSS]) == [("performance", TestMode.PERFORMANCE_ONLY, False)]
    assert [n for n, _, _ in planned_tests(RunMode.SUBMISSION, load_round("v6.0").benchmarks[GPT_OSS])][2:] == ["TEST07", "TEST09"]
    needs_test01 = rnd.benchmarks["llama3.1-8b"].model_copy(update={"compliance_tests": ("TEST01", "TEST06")})
    with pytest.raises(UnusableInput, match="TEST01, which this harness cannot produce"):
        planned_tests(RunMode.SUBMISSION, needs_test01)
    assert len(planned_tests(RunMode.ACCURACY, needs_test01)) == 1  # only the submission flow runs compliance tests


def test_one_table_of_steps_after_each_test() -> None:
    """Every LoadGen test a run can have has its steps in one table (none after a performance run)."""
    assert set(STEPS) == set(TEST_NAMES)
    assert STEPS["performance"] == STEPS["find-peak"] == ()
    assert all(len(STEPS[t]) == 1 for t in ("accuracy", "TEST06", "TEST07", "TEST09"))


def test_compliance_data_set_sizes(tmp_path: Path) -> None:
    """TEST07 (990 samples) and TEST09 (6396) of gpt-oss-120b cover their own data sets: --mode submission with
    another size is refused before any test; a trial runs them with a warning."""
    bench = load_round("v6.1").benchmarks[GPT_OSS]
    data = load_dataset(str(_gpt_oss_trial_set(tmp_path / "d.jsonl")))

    def req(mode: RunMode) -> RunRequest:
        return RunRequest("v6.1", GPT_OSS, "Offline", mode, sim_engine(model=GPT_OSS), tmp_path / "out", dataset="d.jsonl")

    per_test = {
        name: TestDataset(spec="d.jsonl", option="--dataset d.jsonl", dataset=data, tokenizer=None)
        for name, _, _ in planned_tests(RunMode.SUBMISSION, bench)
    }
    with pytest.raises(UnusableInput, match=r"TEST07 of gpt-oss-120b covers its own data set of 990 samples"):
        refuse_wrong_sized_datasets(bench, Scenario.OFFLINE, per_test)
    found = compliance_dataset_findings(req(RunMode.SUBMISSION_TRIAL), bench, per_test)
    assert [(f.rule, f.severity) for f in found] == [("RUN-COMPLIANCE-DATASET", Severity.WARNING)] * 2
    assert found[0].message == (
        "TEST07 of gpt-oss-120b covers its own data set of 990 samples (acc/acc_eval_compliance_gpqa.parquet); this "
        f"trial runs it on the 16 samples of {data.name} (--dataset d.jsonl): a rehearsal of the test"
    )
    assert "6396" in found[1].message and "perf_eval_ref.parquet" in found[1].message
    assert compliance_dataset_findings(req(RunMode.PERFORMANCE), bench, per_test) == []


def test_audit_problems_in_the_verdict() -> None:
    """A run without the audit.config (or not in performance mode) is not the test: an ERROR in a trial too; a
    shortfall of the trial's data set is a WARNING there and an ERROR in --mode submission."""
    problems = [
        "LoadGen did not log 'Found Audit Config file (audit.config)': it ran without the test's audit.config",
        "effective_test_mode is 'AccuracyOnly', not 'PerformanceOnly' (the audit.config's mode = 2)",
        "the QSL held 16 samples (qsl_reported_total_count); the test's data set has 990",
    ]
    trial = [f.severity for f in audit_findings("TEST07", problems, RunMode.SUBMISSION_TRIAL)]
    assert trial == [Severity.ERROR, Severity.ERROR, Severity.WARNING]
    assert {f.severity for f in audit_findings("TEST07", problems, RunMode.SUBMISSION)} == {Severity.ERROR}
    assert all(f.rule == "RUN-AUDIT-CONFIG" and f.message.startswith("TEST07: ") for f in audit_findings("TEST07", problems, RunMode.SUBMISSION))


def test_gpt_oss_trial_tree_has_test07_and_test09(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole flow with the simulated engine: TEST07 and TEST09 run with their audit.config, are verified in the
    official format, land in the tree where the HEAD checker looks, and check-submission re-verifies them."""
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Offline.min_duration = 0\n*.Offline.min_query_count = 32\n", encoding="utf-8")
    data = _gpt_oss_trial_set(tmp_path / "gpt_oss_trial.jsonl")
    argv = ["run", "--engine", "simulated", "--benchmark", GPT_OSS, "--scenario", "Offline", "--round", "v6.1"]
    argv += ["--mode", "submission-trial", "--submitter", "Demo", "--user-conf", str(conf), "--out", str(tmp_path / "out")]
    argv += ["--dataset", str(data), "--tree", str(tmp_path / "tree")]
    argv += ["--sim-ttft-ms", "uniform:2,6", "--sim-tpot-ms", "0.5", "--progress-interval", "0"]
    assert main(argv) == 0  # the run went through (NOT_SUBMITTABLE); the trial tree's errors are printed
    out = capsys.readouterr().out
    assert "TEST07 verification: PASS" in out and "TEST09 verification: FAIL" in out
    (run_dir,) = (tmp_path / "out" / "runs").iterdir()
    record = RunRecord.model_validate_json((run_dir / "run-record.json").read_text(encoding="utf-8"))
    assert [t.name for t in record.tests] == ["performance", "accuracy", "TEST07", "TEST09"]
    assert record.test06 is None and record.test07 is not None and record.test09 is not None
    t07, t09 = record.test07, record.test09
    assert t07.passed and t07.samples_scored == 16 and t07.missing_samples == 0 and t07.threshold == 60.698
    assert t07.simulated and "performance_sample_count_override = 16" in t07.audit_config
    # the simulated engine's answers are a few tokens: outside the window set for the 6396-sample performance set
    assert not t09.passed and t09.samples == 16 and (t09.low, t09.high) == (1150.38, 1406.02)
    assert [p for p in t07.audit_problems if "QSL held 16" not in p] == []  # the trial's data set size only
    rules = {f.rule: f.severity for f in record.verdict.findings}
    assert rules["RUN-TEST09-FAILED"] is Severity.WARNING  # another data set than the test's: not judged
    assert record.verdict.status == "NOT_SUBMITTABLE"

    rnd = load_round("v6.1")
    res = tmp_path / "tree" / "closed" / "Demo" / "results" / "simulated_system" / GPT_OSS / "Offline"
    for test in ("TEST07", "TEST09"):
        for rel in rnd.structure.layout.compliance_files[test]:
            assert (res / test / rel).is_file(), (test, rel)
    assert not (res / "TEST06").exists()
    assert "TEST PASS" in (res / "TEST07" / "verify_accuracy.txt").read_text(encoding="utf-8")
    rep = check_tree(tmp_path / "tree", rnd, workers=1)
    (entry,) = rep.results
    errors = {f.rule for f in entry.findings if f.severity is Severity.ERROR}
    assert not errors & {"COMPL-DIR", "COMPL-TEST-DIR", "COMPL-TEST07-REVERIFY"}
    assert any(f.rule == "COMPL-VERIFY" and f.path and "/TEST09/" in f.path for f in entry.findings)
    assert not any(f.rule == "COMPL-VERIFY" and f.path and "/TEST07/" in f.path for f in entry.findings)
    audit = [f.message for f in entry.findings if f.rule == "COMPL-AUDIT-RUN"]
    assert audit and all("QSL held 16 samples" in m for m in audit)  # the data-set size, nothing else
