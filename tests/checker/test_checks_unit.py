"""Rules a fixture tree alone cannot trigger: an input with no division, an unreadable effective_scenario, and a
round without limits for a scenario (the official checker's KeyError path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.compliance.test06 import screen_text, verify_test06
from checker.engine import check_tree
from checker.findings import Severity, UnusableInput
from checker.parsers.accuracy_log import parse_accuracy_log
from rules import load_round
from rules.models import Scenario
from tests.checker.fixture_cases import materialize

ROUND = load_round("v5.1")
B = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b"


def test_no_division_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "something").mkdir()
    (tmp_path / "something" / "a.txt").write_text("x\n", encoding="utf-8")
    rep = check_tree(tmp_path, ROUND, workers=1)
    assert rep.unusable and not rep.results
    assert any(f.rule == "TREE-NO-DIVISION" and f.severity is Severity.ERROR for f in rep.findings)


def test_missing_root_raises_unusable_input(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="not a directory"):
        check_tree(tmp_path / "nope", ROUND, workers=1)


def test_unreadable_effective_scenario(tmp_path: Path) -> None:
    root = materialize(
        {
            "base": "llm",
            "mutations": [
                {"op": "mllog_set", "path": f"{B}/Offline/performance/run_1/mlperf_log_detail.txt", "key": "effective_scenario", "value": "Batch"}
            ],
        },
        tmp_path / "t",
    )
    rep = check_tree(root, ROUND, workers=1)
    off = next(e for e in rep.results if e.path == f"{B}/Offline")
    assert not off.valid and any(f.rule == "PERF-SCENARIO" for f in off.findings)


def test_round_without_limits_for_the_scenario(tmp_path: Path) -> None:
    bench = ROUND.benchmarks["llama3.1-8b"]
    limits = {k: v for k, v in bench.token_latency_limits.items() if k is not Scenario.INTERACTIVE}
    rnd = ROUND.model_copy(
        update={"benchmarks": {**ROUND.benchmarks, "llama3.1-8b": bench.model_copy(update={"token_latency_limits": limits})}}
    )
    m = "closed/RedHat/measurements/XE8640_4xH100_vLLM/llama3.1-8b"
    c = "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b"
    root = materialize(
        {
            "base": "llm",
            "mutations": [
                {"op": "rename", "src": f"{B}/Server", "dst": f"{B}/Interactive"},
                {"op": "rename", "src": f"{m}/Server", "dst": f"{m}/Interactive"},
                {"op": "rename", "src": f"{c}/Server", "dst": f"{c}/Interactive"},
            ],
        },
        tmp_path / "t",
    )
    rep = check_tree(root, rnd, workers=1)
    inter = next(e for e in rep.results if e.path == f"{B}/Interactive")
    assert not inter.valid and any(f.rule == "LAT-TOKEN-LIMITS" for f in inter.findings)


def test_v6_pass_file_tests(tmp_path: Path) -> None:
    """TEST07/TEST08/TEST09 (v6.x rounds) pass only with TEST PASS in their verification file (catalogue F10)."""
    bench = ROUND.benchmarks["llama3.1-8b"]
    rnd = ROUND.model_copy(
        update={"benchmarks": {**ROUND.benchmarks, "llama3.1-8b": bench.model_copy(update={"compliance_tests": ("TEST06", "TEST09")})}}
    )
    c = "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b"
    muts = [
        {"op": "write", "path": f"{c}/Offline/TEST09/verify_output_len.txt", "text": "mean output length 1200\nTEST FAIL\n"},
        {"op": "write", "path": f"{c}/Server/TEST09/verify_output_len.txt", "text": "mean output length 1200\nTEST PASS\n"},
    ]
    rep = check_tree(materialize({"base": "llm", "mutations": muts}, tmp_path / "t"), rnd, workers=1)
    by = {e.scenario: e for e in rep.results}
    assert not by["Offline"].valid and [f.rule for f in by["Offline"].findings if f.severity is Severity.ERROR] == ["COMPL-VERIFY"]
    assert by["Server"].valid


def test_test06_screen_never_passes_what_the_verifier_fails(v51_tree: Path) -> None:
    """The string-level TEST06 screen only lets through logs that checker.compliance.test06 also passes."""
    logs = sorted(v51_tree.rglob("TEST06/accuracy/mlperf_log_accuracy.json"))
    assert logs
    screened = 0
    for p in logs:
        scen = Scenario.parse(p.parent.parent.parent.name)
        assert scen is not None
        text = p.read_text(encoding="utf-8")
        full = verify_test06(parse_accuracy_log(p).entries, scen.loadgen_scenario)
        if screen_text(text, scen.loadgen_scenario):
            screened += 1
            assert full.passed, p
        # one changed token_count must be caught by the screen
        broken = text.replace('"token_count" : ', '"token_count" : 9', 1)
        assert not screen_text(broken, scen.loadgen_scenario)
    assert screened > 0


def test_parallel_workers_use_the_given_round(tmp_path: Path) -> None:
    """A customised Round reaches the worker processes (it is passed, not reloaded by name)."""
    root = materialize({"base": "llm", "mutations": [{"op": "copytree", "src": "closed/RedHat", "dst": "closed/RedHat2"}]}, tmp_path / "t")
    bench = ROUND.benchmarks["llama3.1-8b"]
    strict = ROUND.model_copy(
        update={"benchmarks": {**ROUND.benchmarks, "llama3.1-8b": bench.model_copy(update={"performance_sample_count": 10**9})}}
    )
    rep = check_tree(root, strict, workers=2)
    assert len(rep.results) == 4
    assert all(any(f.rule == "PERF-SAMPLE-COUNT" for f in e.findings) for e in rep.results)
