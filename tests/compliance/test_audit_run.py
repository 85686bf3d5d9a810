"""COMPL-AUDIT-RUN: check-submission re-verifies TEST07/TEST09 from their performance-mode logs (beyond the official
checker, which reads only verify_accuracy.txt / verify_output_len.txt).

No published tree has gpt-oss-120b TEST07/TEST09 logs (see tests/checker/test_endpoints_cases.py), so the real llm
base (RedHat v5.1 llama3.1-8b, real LoadGen logs) is given TEST07 and TEST09 as there, with data sets of 100 samples
(its real TEST06 accuracy logs), and performance/run_1 logs of genuine LoadGen runs of the tiny SUT with the
audit.config this tool writes for those sample counts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker.compliance.audit_run import audit_run_report
from checker.engine import check_tree
from checker.findings import Severity
from checker.parsers.mllog import parse_detail_file
from checker.results import ResultEntry
from loadgen_sut.compliance import compliance_audit_config
from rules import load_round
from rules.models import Round
from tests.checker.fixture_cases import materialize

TINY_SUT = Path(__file__).resolve().parents[1] / "data" / "loadgen_tiny_sut.py"
C = "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b"
R = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b"
N = 100  # the samples of the base's TEST06 accuracy logs
T0709 = {
    "compliance_tests": ("TEST06", "TEST07", "TEST09"),
    "test07_accuracy_threshold": 38.0,
    "test07_sample_count": N,
    "test09_min_output_tokens": 120.0,
    "test09_max_output_tokens": 135.0,
    "test09_sample_count": N,
}


def _round() -> Round:
    rnd = load_round("v5.1")
    bench = rnd.benchmarks["llama3.1-8b"].model_copy(update=T0709)
    return rnd.model_copy(update={"benchmarks": {**rnd.benchmarks, "llama3.1-8b": bench}})


def _audit(test: str, samples: int = N) -> str:
    """This tool's TEST07/TEST09 audit.config (gpt-oss-120b's files) for data sets of ``samples``."""
    v61 = load_round("v6.1")
    b = v61.benchmarks["gpt-oss-120b"].model_copy(update={"test07_sample_count": samples, "test09_sample_count": samples})
    return compliance_audit_config(v61, b, test)


def _tiny(out: Path, audit: str | None, samples: int = N) -> Path:
    cmd = [sys.executable, str(TINY_SUT), str(out), "--scenario", "Offline", "--mode", "performance"]
    cmd += ["--samples", str(samples)]
    if audit is not None:
        cfg = out.parent / f"{out.name}.audit.config"
        cfg.write_text(audit, encoding="utf-8")
        cmd += ["--audit-config", str(cfg)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("audit_runs")
    return {
        "TEST07": _tiny(base / "t07", _audit("TEST07")),
        "TEST09": _tiny(base / "t09", _audit("TEST09")),
        "plain": _tiny(base / "plain", None),
        "big_qsl": _tiny(base / "big", _audit("TEST07"), samples=120),
    }


def _tree(tmp_path: Path, perf: dict[str, Path | None], extra: list[dict[str, Any]] | None = None) -> ResultEntry:
    muts: list[dict[str, Any]] = []
    for scen in ("Offline", "Server"):
        log = f"{C}/{scen}/TEST06/accuracy/mlperf_log_accuracy.json"
        for test, verify, text in (
            ("TEST07", "verify_accuracy.txt",
             "{'exact_match': 40.5}\n\n" + "=" * 80 + "\nTEST07 Verification Summary\n" + "=" * 80
             + "\nAccuracy score: 40.5\nAccuracy threshold: 38.0\nAccuracy check pass: True\nTEST PASS\n"),
            ("TEST09", "verify_output_len.txt", f"Mean output tokens: {'128.00' if scen == 'Offline' else '129.00'}\nTEST PASS\n"),
        ):
            muts += [
                {"op": "copyfile", "src": log, "dst": f"{C}/{scen}/{test}/accuracy/mlperf_log_accuracy.json"},
                {"op": "write", "path": f"{C}/{scen}/{test}/{verify}", "text": text},
            ]
    root = materialize({"base": "llm", "mutations": muts}, tmp_path / "t")
    for test, src in perf.items():
        if src is None:
            continue
        dst = root / C / "Offline" / test / "performance" / "run_1"
        dst.mkdir(parents=True)
        for name in ("mlperf_log_summary.txt", "mlperf_log_detail.txt"):
            shutil.copy(src / name, dst / name)
    for m in extra or []:  # edits of the copied logs
        path = root / m["path"]
        if m["op"] == "head":
            entries = json.loads(path.read_text(encoding="utf-8"))[: m["n"]]
            path.write_text(json.dumps(entries), encoding="utf-8")
        elif m["op"] == "replace":
            text = path.read_text(encoding="utf-8")
            assert m["old"] in text
            path.write_text(text.replace(m["old"], m["new"]), encoding="utf-8")
    rep = check_tree(root, _round(), workers=1)
    return {e.path: e for e in rep.results}[f"{R}/Offline"]


def _audit_findings(e: ResultEntry) -> list[tuple[str, str]]:
    return [(f.severity.value, f.message) for f in e.findings if f.rule == "COMPL-AUDIT-RUN"]


def test_genuine_audit_runs_pass(runs: dict[str, Path], tmp_path: Path) -> None:
    for test in ("TEST07", "TEST09"):
        rep = audit_run_report(parse_detail_file(runs[test] / "mlperf_log_detail.txt"))
        assert rep.applied and rep.test_mode == "PerformanceOnly" and rep.issue_unique and rep.problems(N) == []
    e = _tree(tmp_path, {"TEST07": runs["TEST07"], "TEST09": runs["TEST09"]})
    assert e.valid, [(f.rule, f.message) for f in e.findings if f.severity is Severity.ERROR]
    assert _audit_findings(e) == []


def test_missing_performance_logs_warn(runs: dict[str, Path], tmp_path: Path) -> None:
    """The official checker does not require TEST07/TEST09 performance/run_1: a WARNING, the verdict unchanged."""
    e = _tree(tmp_path, {"TEST07": None, "TEST09": runs["TEST09"]})
    found = _audit_findings(e)
    assert e.valid and len(found) == 1 and found[0][0] == "warning" and "TEST07" in found[0][1]


def test_run_without_the_audit_config(runs: dict[str, Path], tmp_path: Path) -> None:
    e = _tree(tmp_path, {"TEST07": runs["plain"], "TEST09": runs["TEST09"]})
    assert not e.valid
    msgs = [m for sev, m in _audit_findings(e) if sev == "error"]
    assert any("did not log 'Found Audit Config file" in m for m in msgs)
    assert any("sampling_target" in m for m in msgs)  # a plain performance run logs no sample
    f = next(f for f in e.findings if f.rule == "COMPL-AUDIT-RUN")
    assert f.beyond_official and f.source and f.fix and f.path and f.path.endswith("TEST07/performance/run_1/mlperf_log_detail.txt")


def test_another_data_set(runs: dict[str, Path], tmp_path: Path) -> None:
    """TEST07 run on a QSL of 120 samples, not the test's 100: the run was not made on the test's data set."""
    e = _tree(tmp_path, {"TEST07": runs["big_qsl"], "TEST09": runs["TEST09"]})
    msgs = [m for sev, m in _audit_findings(e) if sev == "error"]
    assert not e.valid and any("QSL held 120 samples" in m for m in msgs)


def test_sampling_target_and_concatenation_edited(runs: dict[str, Path], tmp_path: Path) -> None:
    rel = f"{C}/Offline/TEST09/performance/run_1/mlperf_log_detail.txt"
    e = _tree(tmp_path, {"TEST07": runs["TEST07"], "TEST09": runs["TEST09"]}, [
        {"op": "replace", "path": rel, "old": '"effective_accuracy_log_sampling_target", "value": 10000',
         "new": '"effective_accuracy_log_sampling_target", "value": 10'},
        {"op": "replace", "path": rel, "old": '"effective_sample_concatenate_permutation", "value": false',
         "new": '"effective_sample_concatenate_permutation", "value": true'},
    ])
    msgs = [m for sev, m in _audit_findings(e) if sev == "error"]
    assert not e.valid
    assert any(m.startswith("TEST09: effective_accuracy_log_sampling_target is 10") for m in msgs)
    assert any("sample_concatenate_permutation is true" in m for m in msgs)


def test_fewer_logged_than_issued(runs: dict[str, Path], tmp_path: Path) -> None:
    e = _tree(tmp_path, {"TEST07": runs["TEST07"], "TEST09": runs["TEST09"]}, [
        {"op": "head", "path": f"{C}/Offline/TEST09/accuracy/mlperf_log_accuracy.json", "n": 40},
    ])
    msgs = [m for sev, m in _audit_findings(e) if sev == "error"]
    assert not e.valid and any("LoadGen issued 100 samples" in m and "holds 40" in m for m in msgs)
