"""A rule both result formats share is one function, judging a LoadGen detail log and an MLPerf Endpoints result
(through ``EndpointsDetailLog``, the run-log interface) alike (issue 22): for each shared rule, a LoadGen rule case and
an Endpoints rule case with the same fact give the same rule, severity and "beyond the official checker" flag, the
Endpoints finding names the document and field the value came from, and no other module emits the rule."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from checker.checks.rule_registry import registered
from checker.engine import check_tree
from checker.findings import Finding
from rules import load_round
from tests.checker.fixture_cases import FIXTURES, load_cases, materialize

REPO = Path(__file__).resolve().parents[2]
CASES = dict(load_cases("invalid"))
# shared rule -> (its LoadGen case, its Endpoints case, the document the Endpoints finding names, the field it names)
PAIRS = {
    "PERF-SEEDS": ("perf_seeds", "endpoints_perf_seeds", "config.yaml", "settings.runtime.dataloader_random_seed"),
    "PERF-MIN-DURATION": (
        "perf_min_duration", "endpoints_perf_min_duration", "config.yaml", "settings.runtime.min_duration_ms"
    ),
    "PERF-LOADGEN-ERRORS": (
        "perf_loadgen_errors", "endpoints_perf_loadgen_errors", "result_summary.json", "n_samples_failed"
    ),
    "LAT-TPOT": ("lat_tpot", "endpoints_lat_tpot", "result_summary.json", "tpot.early_stopping_percentiles.99.0"),
}


def _finding(case: str, rule: str, tmp_path: Path) -> Finding:
    spec: dict[str, Any] = CASES[case]
    root = materialize(spec, tmp_path / case)
    report = check_tree(root, load_round(spec.get("round", "v5.1")), workers=1)
    (expect,) = [e for e in spec["expect"] if e["rule"] == rule]
    hits = [f for r in report.results if r.path == expect["result"] for f in r.findings if f.rule == rule]
    assert hits, f"{case}: no {rule}"
    return hits[0]


@pytest.mark.parametrize("rule", sorted(PAIRS))
def test_both_formats_get_the_same_verdict_from_one_rule(rule: str, tmp_path: Path) -> None:
    loadgen_case, endpoints_case, document, field = PAIRS[rule]
    lg, ep = _finding(loadgen_case, rule, tmp_path), _finding(endpoints_case, rule, tmp_path)
    assert (lg.severity, lg.beyond_official) == (ep.severity, ep.beyond_official)
    # one rule, one citation: the round's own cite (it differs by round), then what the official checker of each
    # format does
    tail = "official checker v5.1.1"
    assert lg.source and ep.source and lg.source[lg.source.index(tail):] == ep.source[ep.source.index(tail):]
    assert ep.path is not None and ep.path.endswith(document) and field in ep.message
    assert lg.path is not None and lg.path.endswith("mlperf_log_detail.txt")


# every rule both formats share (PAIRS, and TEST09's, whose LoadGen case is tests/checker/test_endpoints_cases.py's)
SHARED = (*PAIRS, "PERF-LOADGEN-ERRORS", "LAT-TTFT", "LAT-TOKEN-LIMITS", "ACC-METRIC", "ACC-UPPER", "ACC-DATASET",
          "COMPL-TEST09-REVERIFY", "COMPL-RULES-DATA")


def test_a_shared_rule_is_emitted_by_its_module_only() -> None:
    """The Endpoints check calls the shared rules' functions; their ids appear in no other module's code."""
    # the registry module names an id in its docstring; every other module that names one emits it
    sources = {
        p: p.read_text(encoding="utf-8") for p in (REPO / "checker").rglob("*.py") if p.name != "rule_registry.py"
    }
    for rule in sorted(set(SHARED)):
        home = REPO / registered(rule).source_file
        others = [str(p.relative_to(REPO)) for p, text in sources.items() if p != home and re.search(f'"{rule}"', text)]
        assert not others, f"{rule} is registered in {home.relative_to(REPO)} but also named in {others}"


def test_the_cases_exist() -> None:
    for loadgen_case, endpoints_case, *_ in PAIRS.values():
        assert (FIXTURES / "invalid" / loadgen_case / "case.json").is_file()
        assert CASES[endpoints_case]["base"] == "endpoints"
