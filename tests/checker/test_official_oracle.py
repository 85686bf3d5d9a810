"""Our verdicts against the official checkers' on trees ``inference-audit run`` wrote (tests/fixtures/official).

For each round the fixture holds the tree and the official checker's unedited output (v5.1: the v5.1.1
``submission_checker.py``; v6.0/v6.1: the modular HEAD checker). The checks below:

- every ERROR line the official checker printed is an honest reason of a trial tree (``HONEST``) or a line that
  only restates one (``RESTATES``); anything else (a layout, seed or file error) fails the test;
- each honest reason is a finding of ours, with the same rule family, on the same result (or its benchmark);
- both tools give every result the same verdict;
- each of our errors is an official reason for that result, or a difference this tool makes on purpose
  (``BEYOND``, with the rules text that requires it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.findings import Finding, Severity
from rules import load_round

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "official"
ROUNDS = ["v5.1", "v6.0", "v6.1"]

LINE = re.compile(r"^\[[^\]]*? (?P<src>\S+):(?P<lineno>\d+) (?P<level>[A-Z]+)\] (?P<msg>.*)$")
RESULT = re.compile(r"(?:\./)?(?P<path>(?:closed|open|network)/[^/\s]+/results/[^/\s]+/[^/\s]+(?:/[^/\s,]+)?)")

# official message -> our rule (the honest reasons a short simulated trial is rejected for)
HONEST: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"Test duration less than 600s in user config"), "PERF-MIN-DURATION"),
    (re.compile(r"Required minimum samples per query not met by user config"), "PERF-OFFLINE-SPQ"),
    (re.compile(r"accurcy run does not cover all dataset"), "ACC-DATASET"),
    (re.compile(r"accuracy not met"), "ACC-METRIC"),
    (re.compile(r"missing \['\(one of\) Interactive or Server'\]"), "TREE-SERVER-OR-INTERACTIVE"),
    (re.compile(r"one of \[Server, Interactive\] is required"), "TREE-SERVER-OR-INTERACTIVE"),
    (re.compile(r"does not have all required scenarios, missing \{"), "TREE-REQUIRED-SCENARIOS"),
]
# lines that only restate a reason above (per-check or per-result summaries of the official checker)
RESTATES = [
    re.compile(r"Some \w+ checks Checks failed for"),
    re.compile(r", accuracy not valid$"),
    re.compile(r"/performance/run_1 has issues$"),
    re.compile(r" is OK but accuracy has issues$"),
    re.compile(r"^NoResults "),
    re.compile(r"^SUMMARY: submission has errors$"),
]
# our errors the official checker of the round does not raise, on purpose (rules text in the catalogue/source)
BEYOND = {
    # A18: a required scenario without a *valid* result fails the benchmark. The v5.1.1 checker says so
    # (check_results_dir L2853-2867); the HEAD checker only looks for the directory.
    "TREE-REQUIRED-SCENARIOS": "inference_rules.adoc: a submission must include a valid result of every required "
    "scenario of the benchmark (v5.1.1 check_results_dir L2853-2867)",
    # the official checkers name a short accuracy run once (ACC-DATASET); this tool also says how many samples the
    # run issued and accuracy.txt scored
    "ACC-SAMPLES": "inference_rules.adoc: the accuracy run uses every sample of the data set once (RULES_HEAD:474-475)",
}


def _official(round_name: str) -> tuple[dict[str, set[str]], dict[str, bool], list[str]]:
    """(reasons per result or benchmark path, verdict per result path, unexplained ERROR lines)."""
    reasons: dict[str, set[str]] = {}
    verdicts: dict[str, bool] = {}
    unexplained: list[str] = []
    for raw in (HERE / round_name / "official.log").read_text(encoding="utf-8").splitlines():
        m = LINE.match(raw)
        if m is None:
            continue
        level, msg = m.group("level"), m.group("msg")
        where = RESULT.search(msg)
        path = where.group("path") if where else None
        if path and path.endswith(("/performance", "/accuracy")):
            path = path.rsplit("/", 1)[0]
        if msg.startswith(("NoResults ", "Results ")) and path:
            verdicts[path] = msg.startswith("Results ")
        rule = next((r for p, r in HONEST if p.search(msg)), None)
        if rule is not None:
            reasons.setdefault(path or "", set()).add(rule)
        elif level == "ERROR" and not any(p.search(msg) for p in RESTATES):
            unexplained.append(msg)
    return reasons, verdicts, unexplained


def _ours(round_name: str) -> tuple[dict[str, list[Finding]], dict[str, bool]]:
    report = check_tree(HERE / round_name / "tree", load_round(round_name), workers=1)
    found: dict[str, list[Finding]] = {}
    for f in report.findings:
        found.setdefault(f.scope or f.path or "", []).append(f)
    verdicts = {}
    for r in report.results:
        found.setdefault(r.path, []).extend(r.findings)
        verdicts[r.path] = r.valid
    return found, verdicts


@pytest.mark.parametrize("round_name", ROUNDS)
def test_official_errors_are_only_honest_reasons(round_name: str) -> None:
    reasons, verdicts, unexplained = _official(round_name)
    assert not unexplained, f"{round_name}: the official checker reports more than the honest reasons: {unexplained}"
    assert verdicts and reasons
    assert "SUMMARY: submission has errors" in (HERE / round_name / "official.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("round_name", ROUNDS)
def test_same_verdicts_as_the_official_checker(round_name: str) -> None:
    _, official, _ = _official(round_name)
    _, ours = _ours(round_name)
    results = {p: v for p, v in official.items() if p.count("/") == 5}
    assert len(results) == 5
    assert {p: ours.get(p) for p in results} == results


@pytest.mark.parametrize("round_name", ROUNDS)
def test_each_official_reason_is_one_of_our_findings(round_name: str) -> None:
    reasons, _, _ = _official(round_name)
    found, _ = _ours(round_name)
    for path, rules in reasons.items():
        # a reason on a benchmark (required scenarios) is ours on the benchmark or on one of its results
        ours = {f.rule for key, fs in found.items() if key == path or key.startswith(path + "/") for f in fs}
        ours |= {f.rule for key, fs in found.items() if path.startswith(key + "/") and key.count("/") >= 4 for f in fs}
        missing = rules - ours
        assert not missing, f"{round_name} {path}: official reasons {sorted(missing)} not reported by check-submission"


@pytest.mark.parametrize("round_name", ROUNDS)
def test_each_of_our_errors_is_official_or_a_cited_difference(round_name: str) -> None:
    reasons, _, _ = _official(round_name)
    found, _ = _ours(round_name)
    official_rules = {r for rs in reasons.values() for r in rs}
    for key, fs in found.items():
        for f in fs:
            if f.severity is not Severity.ERROR:
                continue
            assert f.rule in official_rules or f.rule in BEYOND, f"{round_name} {key}: {f.rule} {f.message}"
            layout = f.rule.startswith(("MEAS-", "SYS-", "COMPL-", "PERF-SEEDS", "TREE-UNKNOWN", "TREE-OTHER"))
            assert not layout, f"{round_name}: a layout/settings error on our own tree: {f.rule} {f.message}"


@pytest.mark.parametrize("round_name", ROUNDS)
def test_round_is_detected_from_the_release_in_the_logs(round_name: str) -> None:
    """6.0.x logs fit v6.0 and v6.1 by series; the exact release (6.0.15 vs 6.0.17) says whose seeds they carry."""
    from checker.round_detection import detect_round

    d = detect_round(HERE / round_name / "tree")
    assert d.round.name == round_name and d.clear, d.note


def test_the_sample_tree_is_rejected_by_the_official_checker_only_for_its_data_set() -> None:
    """submissions/ (full-length official settings, 32-sample data set): HEAD's only reason is the data set."""
    log = (HERE / "submissions" / "official.log").read_text(encoding="utf-8")
    errors = [m.group("msg") for raw in log.splitlines() if (m := LINE.match(raw)) and m.group("level") == "ERROR"]
    reasons = [e for e in errors if not any(p.search(e) for p in RESTATES)]
    assert len(reasons) == 2 and all("accurcy run does not cover all dataset" in e for e in reasons), reasons
    report = check_tree(HERE.parents[2] / "submissions", load_round("v6.1"), workers=1)
    assert [r.valid for r in report.results] == [False, False]
    ours = {f.rule for r in report.results for f in r.findings if f.severity is Severity.ERROR}
    assert ours == {"ACC-DATASET", "ACC-METRIC", "ACC-SAMPLES"}
