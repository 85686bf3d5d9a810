"""Rules of the v6.x endpoints / TEST07 / TEST09 checks that no fixture case can break (see test_rule_cases.py).

- PERF-ENDPOINTS-RULES-DATA and COMPL-RULES-DATA fire only when the round's rules data lacks a field; every round's
  data carries them (``Round.endpoints_allowed_models`` defaults to ``()``, not ``None``), so these tests check a
  round copy with the field removed.
- COMPL-TEST07-REVERIFY, COMPL-TEST07-LOG, COMPL-TEST09-LOG (and the LoadGen-path COMPL-TEST09-REVERIFY): the only
  benchmarks with TEST07/TEST09 are gpt-oss-120b and e2e-rag-qna, and no real published LoadGen tree of them is in
  the shared data. A complete gpt-oss-120b TEST09 log (6396 samples of ~1150-1400 4-byte token ids, hex-encoded)
  is about 60 MB, above the 50 MB file limit of a tree, so no valid gpt-oss-120b base can hold one. These tests
  instead give the real llm base's llama3.1-8b (RedHat v5.1, real LoadGen logs) TEST07 and TEST09 with thresholds
  sized to its real TEST06 accuracy logs (100 samples of 128 / 129 tokens), as test_v6_pass_file_tests does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.engine import check_tree
from checker.findings import Severity
from checker.results import CheckReport, ResultEntry
from rules import load_round
from rules.models import Round
from tests.checker.fixture_cases import materialize

C = "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b"
R = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b"
EP = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT"
SCENARIOS = ("Offline", "Server")
# TEST07 / TEST09 for llama3.1-8b, sized to the real TEST06 logs of the llm base (100 samples, 128 / 129 tokens)
T0709 = {
    "compliance_tests": ("TEST06", "TEST07", "TEST09"),
    "test07_accuracy_threshold": 38.0,
    "test07_sample_count": 100,
    "test09_min_output_tokens": 120.0,
    "test09_max_output_tokens": 135.0,
    "test09_sample_count": 100,
}


def _with_benchmark(rnd: Round, model: str, **update: Any) -> Round:
    bench = rnd.benchmarks[model].model_copy(update=update)
    return rnd.model_copy(update={"benchmarks": {**rnd.benchmarks, model: bench}})


def _verify07(score: float, threshold: float = 38.0, verdict: str = "TEST PASS") -> str:
    return (
        f"{{'exact_match': {score}, 'n': 100}}\n" + "=" * 80 + "\nTEST07 Verification Summary\n" + "=" * 80
        + f"\nAccuracy score: {score}\nAccuracy threshold: {threshold}\nAccuracy check pass: {score >= threshold}\n"
        f"{verdict}\n"
    )


def _t0709_mutations() -> list[dict[str, Any]]:
    """TEST07 and TEST09 directories for both llm results, each with the scenario's real TEST06 accuracy log."""
    muts: list[dict[str, Any]] = []
    for scen, mean in (("Offline", "128.00"), ("Server", "129.00")):
        log = f"{C}/{scen}/TEST06/accuracy/mlperf_log_accuracy.json"
        muts += [
            {"op": "copyfile", "src": log, "dst": f"{C}/{scen}/TEST07/accuracy/mlperf_log_accuracy.json"},
            {"op": "write", "path": f"{C}/{scen}/TEST07/verify_accuracy.txt", "text": _verify07(40.5)},
            {"op": "copyfile", "src": log, "dst": f"{C}/{scen}/TEST09/accuracy/mlperf_log_accuracy.json"},
            {"op": "write", "path": f"{C}/{scen}/TEST09/verify_output_len.txt",
             "text": f"Mean output tokens: {mean}\nTEST PASS\n"},
        ]
    return muts


def _check(tmp_path: Path, base: str, muts: list[dict[str, Any]], rnd: Round) -> CheckReport:
    return check_tree(materialize({"base": base, "mutations": muts}, tmp_path / "t"), rnd, workers=1)


def _by_path(rep: CheckReport) -> dict[str, ResultEntry]:
    return {e.path: e for e in rep.results}


def _rules(entry: ResultEntry, severity: Severity | None = None) -> set[str]:
    return {f.rule for f in entry.findings if severity is None or f.severity is severity}


def _t0709(tmp_path: Path, extra: list[dict[str, Any]]) -> tuple[ResultEntry, ResultEntry]:
    rep = _check(tmp_path, "llm", _t0709_mutations() + extra, _with_benchmark(load_round("v5.1"), "llama3.1-8b", **T0709))
    by = _by_path(rep)
    return by[f"{R}/Offline"], by[f"{R}/Server"]


def test_v61_rules_data_carries_the_gpt_oss_thresholds() -> None:
    b = load_round("v6.1").benchmarks["gpt-oss-120b"]
    assert {"TEST07", "TEST09"} <= set(b.compliance_tests)
    assert (b.test07_accuracy_threshold, b.test07_sample_count) == (60.698, 990)
    assert (b.test09_min_output_tokens, b.test09_max_output_tokens, b.test09_sample_count) == (1150.38, 1406.02, 6396)
    assert "gpt-oss-120b" in load_round("v6.1").endpoints_allowed_models


def test_test07_test09_pass_on_real_logs(tmp_path: Path) -> None:
    """The baseline of the tests below: TEST07/TEST09 consistent with the real logs are not reported."""
    for e in _t0709(tmp_path, []):
        assert e.valid, (e.path, [(f.rule, f.message) for f in e.findings if f.severity is Severity.ERROR])
        assert not _rules(e) & {"COMPL-TEST07-REVERIFY", "COMPL-TEST07-LOG", "COMPL-TEST09-REVERIFY",
                                "COMPL-TEST09-LOG", "COMPL-RULES-DATA", "COMPL-VERIFY"}


def test_test07_reverify_score_below_threshold(tmp_path: Path) -> None:
    """COMPL-TEST07-REVERIFY: the summary says TEST PASS for a score below the threshold."""
    off, srv = _t0709(tmp_path, [{"op": "write", "path": f"{C}/Offline/TEST07/verify_accuracy.txt",
                                  "text": _verify07(30.0, threshold=20.0)}])
    assert not off.valid and "COMPL-TEST07-REVERIFY" in _rules(off, Severity.ERROR)
    f = next(f for f in off.findings if f.rule == "COMPL-TEST07-REVERIFY")
    assert f.beyond_official and f.message and f.source
    assert srv.valid


def test_test07_reverify_edited_summary(tmp_path: Path) -> None:
    """COMPL-TEST07-REVERIFY: the summary's score is not the accuracy script's output score."""
    text = _verify07(40.5).replace("Accuracy score: 40.5", "Accuracy score: 45.0")
    off, _ = _t0709(tmp_path, [{"op": "write", "path": f"{C}/Offline/TEST07/verify_accuracy.txt", "text": text}])
    assert not off.valid and "COMPL-TEST07-REVERIFY" in _rules(off, Severity.ERROR)


def test_test07_log_missing_or_short(tmp_path: Path) -> None:
    """COMPL-TEST07-LOG: the accuracy log is missing (Offline) or holds fewer samples than TEST07 logs (Server)."""
    short = json.dumps(json.loads((materialize({"base": "llm"}, tmp_path / "b") / C / "Server/TEST06/accuracy"
                                   / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))[:40])
    off, srv = _t0709(tmp_path, [
        {"op": "delete", "path": f"{C}/Offline/TEST07/accuracy"},
        {"op": "write", "path": f"{C}/Server/TEST07/accuracy/mlperf_log_accuracy.json", "text": short},
    ])
    for e in (off, srv):
        assert not e.valid and "COMPL-TEST07-LOG" in _rules(e, Severity.ERROR), (e.path, _rules(e))


def test_test09_log_missing_or_short(tmp_path: Path) -> None:
    """COMPL-TEST09-LOG: the accuracy log is missing (Offline) or truncated to 40 of the 100 samples (Server)."""
    short = json.dumps(json.loads((materialize({"base": "llm"}, tmp_path / "b") / C / "Server/TEST06/accuracy"
                                   / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))[:40])
    off, srv = _t0709(tmp_path, [
        {"op": "delete", "path": f"{C}/Offline/TEST09/accuracy"},
        {"op": "write", "path": f"{C}/Server/TEST09/accuracy/mlperf_log_accuracy.json", "text": short},
    ])
    for e in (off, srv):
        assert not e.valid and "COMPL-TEST09-LOG" in _rules(e, Severity.ERROR), (e.path, _rules(e))


def test_test09_reverify_loadgen_log(tmp_path: Path) -> None:
    """COMPL-TEST09-REVERIFY (LoadGen path): the mean recomputed from the log is outside the bounds although
    verify_output_len.txt says TEST PASS; and a reported mean that is not the log's."""
    rnd = _with_benchmark(load_round("v5.1"), "llama3.1-8b", **{**T0709, "test09_max_output_tokens": 128.5})
    rep = _check(tmp_path / "a", "llm", _t0709_mutations(), rnd)
    by = _by_path(rep)
    assert by[f"{R}/Offline"].valid  # mean 128
    assert "COMPL-TEST09-REVERIFY" in _rules(by[f"{R}/Server"], Severity.ERROR)  # mean 129
    off, _ = _t0709(tmp_path / "b", [{"op": "write", "path": f"{C}/Offline/TEST09/verify_output_len.txt",
                                      "text": "Mean output tokens: 131.00\nTEST PASS\n"}])
    assert not off.valid and "COMPL-TEST09-REVERIFY" in _rules(off, Severity.ERROR)


def test_compl_rules_data_missing(tmp_path: Path) -> None:
    """COMPL-RULES-DATA (warning): TEST07/TEST09 required but their thresholds are not in the rules data."""
    rnd = _with_benchmark(load_round("v5.1"), "llama3.1-8b", compliance_tests=("TEST06", "TEST07", "TEST09"))
    rep = _check(tmp_path, "llm", _t0709_mutations(), rnd)
    for e in rep.results:
        hits = [f for f in e.findings if f.rule == "COMPL-RULES-DATA"]
        assert len(hits) == 2 and all(f.severity is Severity.WARNING for f in hits), e.path
        assert e.valid
    # the endpoints TEST09 check: gpt-oss-120b without its bounds (the deepseek-r1 documents renamed)
    v61 = _with_benchmark(load_round("v6.1"), "gpt-oss-120b", test09_min_output_tokens=None)
    gpt = f"{EP}/gpt-oss-120b"
    muts = [{"op": "rename", "src": f"{EP}/deepseek-r1", "dst": gpt},
            {"op": "rename", "src": "closed/NVIDIA/src/deepseek-r1", "dst": "closed/NVIDIA/src/gpt-oss-120b"}]
    by = _by_path(_check(tmp_path / "ep", "endpoints", muts, v61))
    for scen in SCENARIOS:
        rules = {(f.rule, f.severity) for f in by[f"{gpt}/{scen}"].findings}
        assert ("COMPL-RULES-DATA", Severity.WARNING) in rules and not any(r == "COMPL-TEST09-REVERIFY" for r, _ in rules)


def test_perf_endpoints_rules_data_missing(tmp_path: Path) -> None:
    """PERF-ENDPOINTS-RULES-DATA (warning): a round whose data has no endpoints_allowed_models list."""
    rnd = load_round("v6.1").model_copy(update={"endpoints_allowed_models": None})
    rep = _check(tmp_path, "endpoints", [], rnd)
    assert rep.results
    for e in rep.results:
        hit = [f for f in e.findings if f.rule == "PERF-ENDPOINTS-RULES-DATA"]
        assert hit and hit[0].severity is Severity.WARNING and hit[0].beyond_official, e.path
        assert "PERF-ENDPOINTS-MODEL" not in _rules(e) and e.valid
