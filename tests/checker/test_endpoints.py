"""Endpoints results (v6.1) and the TEST07 / TEST09 re-verification."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from checker.compliance.test07 import parse_verify_accuracy
from checker.compliance.test09 import reported_mean, verify_test09
from checker.engine import check_tree
from checker.parsers.accuracy_log import AccuracyEntry
from rules.registry import load_round

SHARED = Path("/work/shared/data/mlperf-inference-v6.1")
VR = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT"


@pytest.fixture(scope="module")
def rnd():  # type: ignore[no-untyped-def]
    return load_round("v6.1")


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared v6.1 data not present")


@needs_shared
def test_shared_endpoints_results_are_recognised(rnd) -> None:  # type: ignore[no-untyped-def]
    rep = check_tree(SHARED, rnd, workers=1)
    vr = [e for e in rep.results if e.path.startswith(VR)]
    assert len(vr) == 6
    for e in vr:
        rules = {f.rule for f in e.findings}
        assert not rules & {"PERF-RUN-DIR", "ACC-TXT", "COMPL-TEST-DIR", "PERF-LOG"}, (e.path, rules)
        assert e.summary is not None  # a result value was computed
    ds = next(e for e in vr if e.path.endswith("deepseek-r1/Server"))
    assert ds.summary is not None and ds.summary.values["Units"] == "Tokens/s"
    assert float(ds.summary.values["Result"]) > 1e6  # tokens/s, not the official checker's 310 queries/s


@needs_shared
def test_one_change_lowers_accuracy(rnd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "t"
    shutil.copytree(SHARED, root)
    p = root / VR / "deepseek-r1/Server/accuracy/accuracy_results.json"
    d = json.loads(p.read_text())
    d["accuracy_scores"][0]["score"] = 70.0
    p.write_text(json.dumps(d))
    rep = check_tree(root, rnd, workers=1)
    e = next(e for e in rep.results if e.path.endswith("VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1/Server"))
    acc = [f for f in e.findings if f.rule == "ACC-METRIC"]
    assert acc and acc[0].beyond_official  # the official checker enforces endpoints accuracy for qwen3-vl only


def _entry(i: int, ntok: int) -> AccuracyEntry:
    return AccuracyEntry(index=i, line=None, seq_id=i, qsl_idx=i, data_hex="01000000" * ntok)


def test_test09_mean_as_run_verification() -> None:
    res = verify_test09([_entry(0, 1000), _entry(1, 1400)], 1150.38, 1406.02)
    assert res.mean == 1200 and res.passed
    assert not verify_test09([_entry(0, 1000)], 1150.38, 1406.02).passed
    assert not verify_test09([], 0, 10).passed
    assert reported_mean("Mean output tokens: 1.00\nx\nMean output tokens: 1200.00\n") == 1200.0


def test_test07_summary_parse() -> None:
    text = (
        "{'exact_match': 61.5, 'n': 990}\n" + "=" * 80 + "\nTEST07 Verification Summary\n" + "=" * 80
        + "\nAccuracy score: 61.5\nAccuracy threshold: 60.698\nAccuracy check pass: True\nTEST PASS\n"
    )
    rep = parse_verify_accuracy(text)
    assert (rep.output_score, rep.score, rep.threshold, rep.says_pass) == (61.5, 61.5, 60.698, True)
