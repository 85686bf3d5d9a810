"""Conformance with the official v5.1.1 checker on the shared subset of the published v5.1 results.

Every result's verdict must equal ``official-verdicts/v5.1-subset-verdicts.csv`` and every official summary row must
equal ours, compared as parsed CSV values — except for the results in ``DELIBERATE``, where the official checker is
wrong and the rules text named there makes this tool right. ``DELIBERATE`` is the part of the whole round's committed
list (``tests/fixtures/rounds/v5.1/deliberate.yaml``, see test_whole_rounds.py) that lies in the shared subset.
Deliberate differences are each also tested as a rule case (``test_rule_cases.py``, cases marked ``beyond_official``).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.findings import Severity
from checker.results import SUMMARY_CSV_COLUMNS, CheckReport
from rules import load_round
from tests.conftest import find_shared

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import whole_round


def _deliberate_in_subset() -> dict[str, tuple[frozenset[str], str]]:
    """result -> (the errors this tool raises, why the official verdict is wrong, with the rules text), for the
    whole round's deliberate results that are in the shared subset."""
    shared = find_shared()
    if shared is None:
        return {}
    subset = shared / "data" / "mlperf-inference-v5.1"
    return {
        path: (d.rules, f"{d.why} {d.source}")
        for path, d in whole_round.load_deliberate(whole_round.deliberate_path("v5.1")).items()
        if (subset / path).is_dir()
    }


DELIBERATE = _deliberate_in_subset()


@pytest.fixture(scope="module")
def report(v51_tree: Path) -> CheckReport:
    return check_tree(v51_tree, load_round("v5.1"), workers=2)


@pytest.fixture(scope="module")
def verdicts(shared_dir: Path) -> dict[str, dict[str, str]]:
    with (shared_dir / "data" / "official-verdicts" / "v5.1-subset-verdicts.csv").open(newline="", encoding="utf-8") as fh:
        return {row["path"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def official_rows(shared_dir: Path) -> dict[str, dict[str, str]]:
    with (shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv").open(newline="", encoding="utf-8") as fh:
        return {row["Location"]: row for row in csv.DictReader(fh)}


def test_every_result_found(report: CheckReport, verdicts: dict[str, dict[str, str]]) -> None:
    assert sorted(e.path for e in report.results) == sorted(verdicts)


def test_verdicts_equal_official(report: CheckReport, verdicts: dict[str, dict[str, str]]) -> None:
    diffs = {}
    for e in report.results:
        mine = "valid" if e.valid else "invalid"
        if verdicts[e.path]["verdict"] != mine:
            diffs[e.path] = frozenset(f.rule for f in e.findings if f.severity is Severity.ERROR)
    assert diffs == {path: rules for path, (rules, _why) in DELIBERATE.items()}
    assert all(verdicts[p]["verdict"] == "valid" for p in DELIBERATE)  # the official checker lets them through
    assert sum(1 for e in report.results if not e.valid) == 4 + len(DELIBERATE)


def test_invalid_results_fail_for_the_official_reason(report: CheckReport, verdicts: dict[str, dict[str, str]]) -> None:
    """The four invalid SDXL results lack accuracy/images/ (the official errors name exactly that)."""
    for e in report.results:
        if not e.valid and e.path not in DELIBERATE:
            assert "expected to have the following extra files" in verdicts[e.path]["errors"]
            assert {f.rule for f in e.findings if f.severity is Severity.ERROR} == {"ACC-EXTRA-FILES"}


def test_summary_rows_equal_official(report: CheckReport, official_rows: dict[str, dict[str, str]]) -> None:
    by_path = {e.path: e for e in report.results}
    for loc, row in official_rows.items():
        if loc in DELIBERATE:
            continue
        entry = by_path[loc]
        assert entry.valid and entry.summary is not None, loc
        assert set(row) == set(SUMMARY_CSV_COLUMNS)
        diff = {k: (row[k], entry.summary.values[k]) for k in SUMMARY_CSV_COLUMNS if row[k] != entry.summary.values[k]}
        assert not diff, (loc, diff)
    assert len(official_rows) == 58


def test_every_valid_result_has_an_official_row(report: CheckReport, official_rows: dict[str, dict[str, str]]) -> None:
    valid = sorted(e.path for e in report.results if e.valid)
    assert valid == sorted(set(official_rows) - set(DELIBERATE))


def test_deliberate_differences_fire_only_where_listed(report: CheckReport) -> None:
    beyond = [(e.path, f.rule) for e in report.results for f in e.findings if f.beyond_official and f.severity is Severity.ERROR]
    assert all(path in DELIBERATE and rule in DELIBERATE[path][0] for path, rule in beyond), beyond


def test_single_submitter_and_division_roots(v51_tree: Path) -> None:
    """Pointing at a submitter or a division gives the same results, with repository-relative paths."""
    rnd = load_round("v5.1")
    whole = check_tree(v51_tree, rnd, submitter="RedHat", workers=1)
    sub = check_tree(v51_tree / "closed" / "RedHat", rnd, workers=1)
    div = check_tree(v51_tree / "closed", rnd, submitter="RedHat", workers=1)
    key = sorted((e.path, e.valid, e.summary.values["Result"] if e.summary else None) for e in whole.results)
    assert len(key) == 4
    assert key == sorted((e.path, e.valid, e.summary.values["Result"] if e.summary else None) for e in sub.results)
    assert key == sorted((e.path, e.valid, e.summary.values["Result"] if e.summary else None) for e in div.results)


def test_progress_and_workers_agree(v51_tree: Path) -> None:
    rnd = load_round("v5.1")
    seen: list[tuple[int, int]] = []
    serial = check_tree(v51_tree, rnd, workers=1, progress=lambda d, t: seen.append((d, t)))
    parallel = check_tree(v51_tree, rnd, workers=2)
    assert seen[0] == (0, 8) and seen[-1] == (8, 8)
    assert [e.model_dump() for e in serial.results] == [e.model_dump() for e in parallel.results]
