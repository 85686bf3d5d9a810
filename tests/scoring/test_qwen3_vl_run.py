"""qwen3-vl-235b-a22b through ``inference-audit run`` with the SIMULATED engine: the synthetic catalogue in the
official layout, Offline and Server trials, accuracy scored (the simulated engine answers each sample's JSON
object), a submission tree, and ``check-submission`` on it.

What the official HEAD checker says about the same tree (run by hand with ``/tmp/official/run_official.sh
v6.1``; see the report) is only: test duration less than 600 s (both), Offline samples per query 6 < 48289,
and "accurcy run does not cover all dataset" (both): the trial durations and the 6-sample data set. The
accuracy itself passes there (F1 1.0 read from accuracy.txt by its F1_HIERARCHICAL pattern). This test pins
our side: the same verdict, the same reasons, nothing else.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.findings import Severity
from rules import load_round

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "qwen3_vl" / "make_fixture.py"
BENCH = "qwen3-vl-235b-a22b"
CONF = {
    "Offline": "*.Offline.min_duration = 0\n*.Offline.min_query_count = 6\n",
    "Server": "*.Server.target_qps = 200\n*.Server.min_duration = 2500\n",
}


def _catalogue(root: Path) -> Path:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write_hf(root / "shopify")  # type: ignore[no-any-return]


def _run(root: Path, scenario: str, dataset: str, *extra: str, trial: bool = True) -> subprocess.CompletedProcess[str]:
    conf = root / f"{scenario}.conf"
    conf.write_text(CONF[scenario] if trial else "", encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "simulated", "--benchmark", BENCH]
    cmd += ["--scenario", scenario, "--round", "v6.1", "--user-conf", str(conf), "--dataset", dataset]
    cmd += ["--sim-ttft-ms", "uniform:2,6", "--sim-tpot-ms", "0.5", "--out", str(root / "work"), "--progress-interval", "0"]
    return subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("q3vl_run")
    data = f"shopify:{_catalogue(root)}"
    for scenario in ("Offline", "Server"):
        proc = _run(
            root, scenario, data, "--mode", "submission-trial", "--submitter", "InferenceAuditSim",
            "--division", "closed", "--tree", str(root / "tree"),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "verdict: NOT_SUBMITTABLE [SIMULATED ENGINE]" in proc.stdout
    return root


@pytest.mark.slow
def test_run_scores_and_packages(tree: Path) -> None:
    records = sorted((tree / "work" / "runs").glob("*/run-record.json"))
    assert len(records) == 2
    for path in records:
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert rec["simulated"] is True and rec["benchmark"] == BENCH
        acc = rec["accuracy"]
        # the simulated engine answers each sample's perfect JSON object: every response parses, F1 = 1
        assert acc["f1_hierarchical"] == 1.0 and acc["unparsable_responses"] == 0 and acc["gen_num"] == 6
    pattern = load_round("v6.1").acc_patterns["F1_HIERARCHICAL"]
    for scenario in ("Offline", "Server"):
        (acc_txt,) = (tree / "tree").glob(f"closed/*/results/*/{BENCH}/{scenario}/accuracy/accuracy.txt")
        found = [float(m.group(1)) for line in acc_txt.read_text().splitlines() if (m := re.match(pattern, line))]
        assert found == [1.0]
        assert re.search(r"^hash=[0-9a-f]{64}$", acc_txt.read_text(), re.M)
        # the accuracy log holds each answer's UTF-8 text, as the reference SUT logs it (evaluation.py line 216)
        log = json.loads((acc_txt.parent / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))
        answers = [json.loads(bytes.fromhex(e["data"]).decode("utf-8")) for e in log]
        assert len(answers) == 6 and all(set(a) == {"category", "brand", "is_secondhand"} for a in answers)


@pytest.mark.slow
def test_check_submission_gives_only_the_honest_reasons(tree: Path) -> None:
    report = check_tree(tree / "tree", load_round("v6.1"), workers=1)
    by_result = {r.path.rsplit("/", 1)[-1]: r for r in report.results}
    assert sorted(by_result) == ["Offline", "Server"]
    assert not any(r.valid for r in report.results)  # the official checker: NoResults for both
    errors = {s: {f.rule for f in r.findings if f.severity is Severity.ERROR} for s, r in by_result.items()}
    # the official reasons (duration, Offline samples per query, data-set size): no accuracy, hash, layout or seed
    # error. The short accuracy run is one finding (ACC-DATASET): LoadGen issued its whole 6-sample QSL and accuracy.txt
    # scored it all, so ACC-SAMPLES has nothing to add
    assert errors["Offline"] == {"PERF-MIN-DURATION", "PERF-OFFLINE-SPQ", "ACC-DATASET"}
    assert errors["Server"] == {"PERF-MIN-DURATION", "ACC-DATASET"}
    tree_rules = {f.rule for f in report.findings if f.severity is Severity.ERROR}
    assert tree_rules <= {"TREE-REQUIRED-SCENARIOS", "TREE-SERVER-OR-INTERACTIVE"}  # no scenario is valid


@pytest.mark.slow
def test_submission_mode_refuses_the_small_data_set(tree: Path) -> None:
    # compliant settings, but 6 samples where the Offline accuracy run covers 48289: refused before any test
    runs = tree / "work" / "runs"
    before = set(runs.iterdir())
    proc = _run(tree, "Offline", f"shopify:{tree / 'shopify'}", "--mode", "submission", "--submitter", "X", trial=False)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "the data set holds 6 samples, the qwen3-vl-235b-a22b Offline accuracy run covers 48289" in proc.stderr
    assert set(runs.iterdir()) == before


def test_text_only_engine_is_refused(tmp_path: Path) -> None:
    data = f"shopify:{_catalogue(tmp_path)}"
    conf = tmp_path / "Offline.conf"
    conf.write_text(CONF["Offline"], encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "openai", "--endpoint", "http://127.0.0.1:9"]
    cmd += ["--model", "m", "--benchmark", BENCH, "--scenario", "Offline", "--round", "v6.1", "--mode", "accuracy"]
    cmd += ["--user-conf", str(conf), "--dataset", data, "--out", str(tmp_path / "work")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert "chats with content parts (an image): only a chat API takes them; use --api chat" in proc.stderr
    assert not (tmp_path / "work" / "runs").exists() or not any((tmp_path / "work" / "runs").iterdir())


def test_interactive_submission_wants_the_8k_data_set(tmp_path: Path) -> None:
    """--mode submission's data-set check (runner._refuse_wrong_sized_datasets) on the accuracy run: Interactive's is
    the 8000-sample subset, Server's the 48289-sample catalogue."""
    from loadgen_sut.datasets import load_dataset
    from loadgen_sut.run.plan import _size_problem
    from rules.models import Scenario

    bench = load_round("v6.1").benchmark(BENCH)
    assert bench is not None
    n = len(load_dataset(f"shopify:{_catalogue(tmp_path)}").samples)
    assert "Interactive accuracy run covers 8000" in (_size_problem(bench, Scenario.INTERACTIVE, "accuracy", n) or "")
    assert "Server accuracy run covers 48289" in (_size_problem(bench, Scenario.SERVER, "accuracy", n) or "")
    as_8k = bench.model_copy(update={"accuracy_sample_count_by_scenario": {Scenario.INTERACTIVE: n}})
    assert _size_problem(as_8k, Scenario.INTERACTIVE, "accuracy", n) is None  # the whole (here: 6-sample) subset


@pytest.mark.slow
def test_accuracy_txt_of_the_official_script_is_accepted(tree: Path, tmp_path: Path) -> None:
    # The official evaluation.py's accuracy.txt (tests/fixtures/official/qwen3-vl/perfect: F1 1.0, as this tree's)
    # records hash= of its results line, not of the log (evaluation.py lines 403-411); truncate_accuracy_log.py
    # adds none for a log under its size limit. check-submission must not call that a hash mismatch.
    official = Path(__file__).resolve().parents[1] / "fixtures" / "official" / "qwen3-vl" / "perfect" / "official_accuracy.txt"
    copy = tmp_path / "tree"
    shutil.copytree(tree / "tree", copy)
    (acc_txt,) = copy.glob(f"closed/*/results/*/{BENCH}/Offline/accuracy/accuracy.txt")
    shutil.copyfile(official, acc_txt)
    report = check_tree(copy, load_round("v6.1"), workers=1)
    (offline,) = [r for r in report.results if r.path.endswith("/Offline")]
    rules = {f.rule for f in offline.findings}
    assert not rules & {"ACC-HASH-MISMATCH", "ACC-HASH", "ACC-HASH-FORMAT", "ACC-METRIC"}
    assert {f.rule for f in offline.findings if f.severity is Severity.ERROR} == {
        "PERF-MIN-DURATION", "PERF-OFFLINE-SPQ", "ACC-DATASET",
    }  # fmt: skip
    # ... while a hash that is neither the log's nor of a line of accuracy.txt still is one
    acc_txt.write_text(official.read_text(encoding="utf-8").replace("hash=8", "hash=9"), encoding="utf-8")
    report = check_tree(copy, load_round("v6.1"), workers=1)
    (offline,) = [r for r in report.results if r.path.endswith("/Offline")]
    assert "ACC-HASH-MISMATCH" in {f.rule for f in offline.findings}
