"""One data set per LoadGen test (``--test-dataset TEST=FILE``): gpt-oss-120b's accuracy run, performance run and
TEST09, and TEST07 each run on their own data set, in the child (``TestSpec.dataset``) and in the parent's scoring.

The data sets here are SYNTHETIC (made-up questions in gpt-oss-120b's parquet columns), of the official sizes where a
test needs them: 4395 (acc_eval_inputs), 6396 (perf_eval_ref), 990 (acc_eval_compliance_gpqa).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sut_helpers import sim_engine

from checker.engine import check_tree
from checker.findings import Severity, UnusableInput
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.cli import main
from loadgen_sut.cli.run import parse_test_datasets
from loadgen_sut.datasets import Dataset, Sample
from loadgen_sut.record import DatasetRecord, RunRecord
from loadgen_sut.run.plan import (
    RunRequest,
    TestDataset,
    dataset_specs,
    refuse_wrong_sized_datasets,
    required_test_samples,
)
from loadgen_sut.run.preflight import preflight
from loadgen_sut.settings import RunMode, parse_user_conf_text, plan_settings
from rules import find_benchmark, load_round
from rules.models import Scenario

GPT_OSS = "gpt-oss-120b"
SIZES = {"accuracy": 4395, "performance": 6396, "TEST07": 990}  # the rules data's counts for v6.1


def _gpt_oss_parquet(path: Path, n: int, subsets: tuple[str, ...] = ("aime25", "gpqa_diamond")) -> Path:
    """``n`` synthetic samples in gpt-oss-120b's columns; the simulated engine answers each one right."""
    rows = []
    for i in range(n):
        sub = subsets[i % len(subsets)]
        rows.append(
            {
                "dataset": sub,
                "ground_truth": str(i % 1000) if sub == "aime25" else "ABCD"[i % 4],
                "input_tokens": [10 + i % 50, 11, 12],
                "text_input": f"<|start|>user<|message|>Synthetic question {i}<|end|><|start|>assistant",
                "prompt": f"Synthetic question {i}",
            }
        )
    pd.DataFrame(rows).to_parquet(path)
    return path


@pytest.fixture(scope="module")
def official_sized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Synthetic data sets of the official sizes (and a TEST07 set one sample short)."""
    d = tmp_path_factory.mktemp("official-sized")
    return {
        "accuracy": _gpt_oss_parquet(d / "acc_eval_inputs.parquet", SIZES["accuracy"]),
        "performance": _gpt_oss_parquet(d / "perf_eval_ref.parquet", SIZES["performance"]),
        "TEST07": _gpt_oss_parquet(d / "acc_eval_compliance_gpqa.parquet", SIZES["TEST07"], ("gpqa_diamond",)),
        "TEST07-short": _gpt_oss_parquet(d / "gpqa_989.parquet", SIZES["TEST07"] - 1, ("gpqa_diamond",)),
    }


def _request(mode: RunMode, bench: str = GPT_OSS, dataset: str = "builtin", **kw: object) -> RunRequest:
    return RunRequest("v6.1", bench, "Offline", mode, sim_engine(model=bench), Path("out"), dataset=dataset, **kw)  # type: ignore[arg-type]


def _mem_dataset(name: str, n: int) -> Dataset:
    return Dataset(name=name, samples=tuple(Sample(index=i, prompt=f"q{i}") for i in range(n)))


# --- the option ---------------------------------------------------------------------------------------------------


def test_parse_test_datasets() -> None:
    got = parse_test_datasets(["test07=a=b.parquet", "Accuracy=gpt-oss:acc.pkl", "performance=perf.parquet"])
    assert got == (("TEST07", "a=b.parquet"), ("accuracy", "gpt-oss:acc.pkl"), ("performance", "perf.parquet"))
    assert parse_test_datasets([]) == ()
    for bad, match in [
        ("TEST07", "write TEST=FILE"),
        ("=x.parquet", "write TEST=FILE"),
        ("TEST07=", "write TEST=FILE"),
        ("TEST08=x.parquet", r"'TEST08' is not a LoadGen test \(performance, accuracy, find-peak, TEST06, TEST07, TEST09\)"),
        ("perf=x.parquet", "'perf' is not a LoadGen test"),
    ]:
        with pytest.raises(UnusableInput, match=match):
            parse_test_datasets([bad])
    with pytest.raises(UnusableInput, match=r"TEST07 has its data set already \(--test-dataset TEST07=a.parquet\)"):
        parse_test_datasets(["TEST07=a.parquet", "test07=b.parquet"])


def test_dataset_specs_per_test(tmp_path: Path) -> None:
    acc, perf, gpqa = (tmp_path / f"{n}.jsonl" for n in ("acc", "perf", "gpqa"))
    for p in (acc, perf, gpqa):
        p.write_text('{"prompt": "q", "reference": "r"}\n', encoding="utf-8")
    req = _request(RunMode.SUBMISSION_TRIAL, dataset=str(perf), test_datasets=(("accuracy", str(acc)), ("TEST07", f"jsonl:{gpqa}")))
    assert dataset_specs(req) == {
        "performance": str(perf),
        "accuracy": str(acc),
        "TEST07": f"jsonl:{gpqa}",
        "TEST09": str(perf),
    }
    assert set(dataset_specs(_request(RunMode.SUBMISSION)).values()) == {"builtin"}  # --dataset serves every test
    refusals = [
        (_request(RunMode.ACCURACY, test_datasets=(("TEST07", str(gpqa)),)), r"\(gpt-oss-120b, --mode accuracy\) has no TEST07 test; its tests: accuracy"),
        (_request(RunMode.SUBMISSION, "llama3.1-8b", test_datasets=(("TEST07", str(gpqa)),)), "its tests: performance, accuracy, TEST06"),
        (_request(RunMode.SUBMISSION_TRIAL, test_datasets=(("TEST07", str(tmp_path / "nope.parquet")),)), r"TEST07=.*nope.parquet: no such data set file"),
        (_request(RunMode.SUBMISSION_TRIAL, dataset=str(tmp_path / "gone.jsonl")), r"--dataset .*gone.jsonl: no such data set file"),
        (_request(RunMode.SUBMISSION_TRIAL, test_datasets=(("TEST10", str(gpqa)),)), "no LoadGen test is called 'TEST10'"),
        (_request(RunMode.SUBMISSION_TRIAL, test_datasets=(("TEST07", str(gpqa)), ("test07", str(acc)))), "TEST07 has its data set already"),
    ]
    for req, match in refusals:
        with pytest.raises(UnusableInput, match=match):
            dataset_specs(req)
    # every test with its own: --dataset (missing here) is not needed
    own = tuple((t, str(acc)) for t in ("performance", "accuracy", "TEST07", "TEST09"))
    assert set(dataset_specs(_request(RunMode.SUBMISSION_TRIAL, dataset=str(tmp_path / "gone"), test_datasets=own)).values()) == {str(acc)}


def test_required_samples_per_test() -> None:
    rnd = load_round("v6.1")
    gpt = rnd.benchmarks[GPT_OSS]
    got = {t: required_test_samples(gpt, Scenario.OFFLINE, t) for t in ("performance", "accuracy", "TEST07", "TEST09")}
    assert got == {"performance": 6396, "accuracy": 4395, "TEST07": 990, "TEST09": 6396}
    llama = rnd.benchmarks["llama3.1-8b"]
    assert {required_test_samples(llama, Scenario.SERVER, t) for t in ("performance", "accuracy", "TEST06")} == {13368}
    vl = rnd.benchmarks["qwen3-vl-235b-a22b"]
    assert required_test_samples(vl, Scenario.INTERACTIVE, "accuracy") == 8000  # the Interactive accuracy subset
    assert required_test_samples(vl, Scenario.INTERACTIVE, "performance") == 48289


def test_submission_sizes_are_judged_per_test() -> None:
    """Right-sized data sets per test pass; a wrong-sized one is refused naming the test, its file and both sizes
    (every wrong one in the same error)."""
    bench = load_round("v6.1").benchmarks[GPT_OSS]

    def data(**sizes: int) -> dict[str, TestDataset]:
        spec = {"performance": "perf.parquet", "TEST09": "perf.parquet"}
        out = {}
        for test in ("performance", "accuracy", "TEST07", "TEST09"):
            s = spec.get(test, f"{test}.parquet")
            n = sizes.get(test, SIZES.get(test, SIZES["performance"]))
            option = f"--dataset {s}" if test in spec else f"--test-dataset {test}={s}"
            out[test] = TestDataset(spec=s, option=option, dataset=_mem_dataset(s, n), tokenizer=None)
        return out

    refuse_wrong_sized_datasets(bench, Scenario.OFFLINE, data())  # the official sizes: accepted
    with pytest.raises(UnusableInput) as exc:
        refuse_wrong_sized_datasets(bench, Scenario.OFFLINE, data(TEST07=989))
    msg = str(exc.value)
    assert "TEST07 (--test-dataset TEST07=TEST07.parquet): TEST07 of gpt-oss-120b covers its own data set of 990" in msg
    assert "the data set holds 989" in msg and "accuracy (" not in msg
    with pytest.raises(UnusableInput) as exc:
        refuse_wrong_sized_datasets(bench, Scenario.OFFLINE, data(accuracy=6396, performance=4395, TEST09=4395))
    msg = str(exc.value)
    assert "accuracy (--test-dataset accuracy=accuracy.parquet): the data set holds 6396 samples, the gpt-oss-120b " in msg
    assert "Offline accuracy run covers 4395 (acc/acc_eval_inputs.parquet)" in msg
    assert "performance (--dataset perf.parquet): the data set holds 4395 samples, the gpt-oss-120b performance run " in msg
    assert "covers the 6396-sample performance data set" in msg and "TEST09 (--dataset perf.parquet)" in msg


def test_builtin_refused_per_test_in_submission(tmp_path: Path) -> None:
    rnd, bench = find_benchmark("v6.1", GPT_OSS)
    real = str(tmp_path / "real.parquet")

    def rules(**kw: Any) -> list[str]:
        _, found = preflight(_request(RunMode.SUBMISSION, **kw), rnd, bench, Scenario.OFFLINE, "")
        return [f.message for f in found if f.rule == "RUN-DATASET"]

    (everything,) = rules()
    assert everything.startswith("--mode submission with the built-in sample set: each test must run")
    (one,) = rules(dataset=real, test_datasets=(("TEST07", "builtin"),))
    assert one.startswith("--mode submission with the built-in sample set for TEST07:")
    assert rules(dataset=real, test_datasets=(("TEST07", real),)) == []


def test_record_dataset_of() -> None:
    a = DatasetRecord(spec="/p.parquet", name="p.parquet", samples=6396, simulated=False, tests=("performance", "TEST09"))
    b = DatasetRecord(spec="/g.parquet", name="g.parquet", samples=990, simulated=False, tests=("TEST07",))
    fields: dict[str, object] = {
        "tool_version": "0", "run_id": "r", "created_utc": "t", "simulated": True, "command": (), "round": "v6.1",
        "benchmark": GPT_OSS, "scenario": "Offline", "mode": "submission",
        "hardware": {"hostname": "h", "os": "o", "python": "3"},
        "settings": {}, "official_settings": {}, "verdict": {"status": "VALID"},
    }
    rnd, bench = find_benchmark("v6.1", GPT_OSS)
    settings = plan_settings(rnd, bench, Scenario.OFFLINE, parse_user_conf_text("", "user.conf")).official
    fields["settings"] = fields["official_settings"] = settings.model_dump()
    rec = RunRecord.model_validate({**fields, "dataset": a, "datasets": (a, b)})
    assert rec.dataset_of("TEST09") == a and rec.dataset_of("TEST07") == b and rec.dataset_of("accuracy") is None
    older = RunRecord.model_validate({**fields, "dataset": a})  # a record written before per-test data sets
    assert older.dataset_of("TEST07") == a


# --- real runs (simulated engine) -----------------------------------------------------------------------------------


def _run_argv(out: Path, mode: str, *extra: str) -> list[str]:
    argv = ["run", "--engine", "simulated", "--benchmark", GPT_OSS, "--scenario", "Offline", "--round", "v6.1"]
    argv += ["--mode", mode, "--submitter", "Demo", "--out", str(out), "--sim-ttft-ms", "1", "--sim-tpot-ms", "0.01"]
    return [*argv, "--progress-interval", "0", *extra]


def _qsl_sizes(run_dir: Path, record: RunRecord) -> dict[str, int | None]:
    return {
        t.name: parse_detail_file(run_dir / t.directory / "mlperf_log_detail.txt").int_value("qsl_reported_total_count")
        for t in record.tests
    }


def test_submission_wrong_sized_test07_is_refused_before_any_work(
    tmp_path: Path, official_sized: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    sets = official_sized
    argv = _run_argv(tmp_path / "out", "submission", "--dataset", str(sets["performance"]))
    argv += ["--test-dataset", f"accuracy={sets['accuracy']}", "--test-dataset", f"TEST07={sets['TEST07-short']}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"TEST07 (--test-dataset TEST07={sets['TEST07-short']}): TEST07 of gpt-oss-120b covers its own data set " in err
    assert "of 990 samples (acc/acc_eval_compliance_gpqa.parquet); the data set holds 989" in err
    assert "accuracy (" not in err and "performance (" not in err  # those two are the right size
    assert not (tmp_path / "out").exists()


def test_gpt_oss_submission_with_its_three_data_sets(
    tmp_path: Path, official_sized: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A gpt-oss-120b --mode submission (compliant settings; simulated engine) with the three data sets of the
    official sizes runs every test, each on its own data set (8-12 s here: an Offline run ends with its one query)."""
    sets = official_sized
    argv = _run_argv(tmp_path / "out", "submission", "--dataset", str(sets["performance"]))
    argv += ["--test-dataset", f"accuracy={sets['accuracy']}", "--test-dataset", f"test07={sets['TEST07']}"]
    assert main(argv) == 1  # the tree is invalid: the honest reasons below, none about the data sets
    printed = capsys.readouterr().out
    assert "data set of performance, TEST09: perf_eval_ref.parquet (6396 samples;" in printed
    assert "data set of accuracy: acc_eval_inputs.parquet (4395 samples;" in printed
    assert "data set of TEST07: acc_eval_compliance_gpqa.parquet (990 samples;" in printed
    (run_dir,) = (tmp_path / "out" / "runs").iterdir()
    record = RunRecord.model_validate_json((run_dir / "run-record.json").read_text(encoding="utf-8"))
    assert [t.name for t in record.tests] == ["performance", "accuracy", "TEST07", "TEST09"]
    assert all(t.status == "finished" and t.sut.failed == 0 for t in record.tests)
    assert _qsl_sizes(run_dir, record) == {"performance": 6396, "accuracy": 4395, "TEST07": 990, "TEST09": 6396}
    for t in record.tests:  # the child loaded the test's own data set
        spec = json.loads((run_dir / f"{t.name}.spec.json").read_text(encoding="utf-8"))
        want = sets["TEST07" if t.name == "TEST07" else "accuracy" if t.name == "accuracy" else "performance"]
        assert spec["dataset"] == str(want.resolve())
    assert [(d.name, d.samples, d.tests) for d in record.datasets] == [
        ("perf_eval_ref.parquet", 6396, ("performance", "TEST09")),
        ("acc_eval_inputs.parquet", 4395, ("accuracy",)),
        ("acc_eval_compliance_gpqa.parquet", 990, ("TEST07",)),
    ]
    assert record.dataset == record.datasets[0]
    # accuracy scored on the accuracy set, TEST07 on its own, TEST09 over the performance set's samples
    assert record.accuracy is not None and record.accuracy["gen_num"] == 4395
    assert record.accuracy["dataset"] == "acc_eval_inputs.parquet" and record.accuracy["simulated"]
    assert "SIMULATED engine output" in (run_dir / "accuracy" / "accuracy.txt").read_text(encoding="utf-8")
    t07, t09 = record.test07, record.test09
    assert t07 is not None and t07.passed and t07.samples_scored == 990 and t07.dataset_samples == t07.required_samples
    assert t07.dataset == "acc_eval_compliance_gpqa.parquet" and t07.audit_problems == ()
    assert "performance_sample_count_override = 990" in t07.audit_config
    assert t09 is not None and t09.samples == 6396 == t09.required_samples and t09.audit_problems == ()
    assert not [f for f in record.findings if f.rule == "RUN-COMPLIANCE-DATASET"]
    # what is left is honest: the simulated engine's short outputs (TEST09), a 600-s Offline run that took less and,
    # on a busy machine, the client's own limits (RUN-CLIENT-BOUND)
    errors = {f.rule for f in record.verdict.findings if f.severity is Severity.ERROR}
    assert "RUN-TEST09-FAILED" in errors and errors <= {"RUN-LOADGEN-INVALID", "RUN-TEST09-FAILED", "RUN-CLIENT-BOUND"}
    rep = check_tree(tmp_path / "out" / "submission", load_round("v6.1"), workers=1)
    (entry,) = rep.results
    size_rules = {"ACC-SAMPLES", "COMPL-TEST07-LOG", "COMPL-TEST09-LOG", "COMPL-AUDIT-RUN", "COMPL-TEST07-REVERIFY"}
    assert not {f.rule for f in entry.findings if f.severity is Severity.ERROR} & size_rules


def test_trial_with_three_small_per_test_data_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """submission-trial with small per-test data sets: each test's logs show its own QSL size, the accuracy run is
    scored on the accuracy set, TEST07 on its own; the size warnings name each compliance test's data set."""
    perf = _gpt_oss_parquet(tmp_path / "perf.parquet", 12)
    acc = _gpt_oss_parquet(tmp_path / "acc.parquet", 5)
    gpqa = _gpt_oss_parquet(tmp_path / "gpqa.parquet", 3, ("gpqa_diamond",))
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Offline.min_duration = 0\n*.Offline.min_query_count = 12\n", encoding="utf-8")
    argv = _run_argv(tmp_path / "out", "submission-trial", "--dataset", str(perf), "--user-conf", str(conf))
    argv += ["--test-dataset", f"accuracy={acc}", "--test-dataset", f"TEST07={gpqa}", "--tree", str(tmp_path / "tree")]
    assert main(argv) == 0  # a trial that ran (NOT_SUBMITTABLE)
    capsys.readouterr()
    (run_dir,) = (tmp_path / "out" / "runs").iterdir()
    record = RunRecord.model_validate_json((run_dir / "run-record.json").read_text(encoding="utf-8"))
    assert record.verdict.status == "NOT_SUBMITTABLE"
    assert _qsl_sizes(run_dir, record) == {"performance": 12, "accuracy": 5, "TEST07": 3, "TEST09": 12}
    assert record.accuracy is not None and (record.accuracy["gen_num"], record.accuracy["dataset"]) == (5, "acc.parquet")
    assert record.accuracy["exact_match"] == 100.0
    text = (run_dir / "accuracy" / "accuracy.txt").read_text(encoding="utf-8")
    assert "5 samples of acc.parquet" in text and "SIMULATED engine output" in text
    assert record.test07 is not None and (record.test07.samples_scored, record.test07.dataset) == (3, "gpqa.parquet")
    assert record.test07.passed and "performance_sample_count_override = 3" in record.test07.audit_config
    assert record.test09 is not None and record.test09.samples == 12
    warned = [f.message for f in record.findings if f.rule == "RUN-COMPLIANCE-DATASET"]
    assert len(warned) == 2
    assert "TEST07 of gpt-oss-120b covers its own data set of 990" in warned[0] and f"3 samples of gpqa.parquet (--test-dataset TEST07={gpqa})" in warned[0]
    assert "TEST09" in warned[1] and f"12 samples of perf.parquet (--dataset {perf})" in warned[1]
    rep = check_tree(tmp_path / "tree", load_round("v6.1"), workers=1)
    (entry,) = rep.results
    audit = sorted(f.message for f in entry.findings if f.rule == "COMPL-AUDIT-RUN")
    assert any("QSL held 3 samples" in m and "TEST07" in m for m in audit), audit
    assert any("QSL held 12 samples" in m and "TEST09" in m for m in audit), audit
