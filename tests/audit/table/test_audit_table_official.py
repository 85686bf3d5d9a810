"""The must-show on the official v5.1 results table and the shared subset of the results repository.

- every row whose directory is in the subset is re-derived from its LoadGen logs and matches;
- a row edited by hand (result, units, accuracy, scenario) is caught, with the row and the column named.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from schemas import schema_errors

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def official_rows(shared_dir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        (shared_dir / "data/mlperf-inference-v5.1/summary_results.json").read_text()
    )
    return rows


def subset_rows(rows: list[dict[str, Any]], tree: Path) -> list[int]:
    """1-based positions of the rows whose Location is a directory of the subset."""
    return [i for i, r in enumerate(rows, start=1) if os.path.isdir(tree / r["Location"])]


def test_every_subset_row_matches_its_logs(audit, v51_tree: Path, official_rows) -> None:
    table = v51_tree / "summary_results.json"
    run = audit("table", str(table), "--tree", str(v51_tree))
    assert run.code == 0, run.out
    report = run.report
    assert report is not None and not schema_errors(report, "table-report")
    expected = subset_rows(official_rows, v51_tree)
    assert len(expected) == 62
    matched = [r["row"] for r in report["rows"] if r["tree_status"] == "match"]
    assert matched == expected
    assert report["tree_counts"] == {"match": 62, "logs-missing": len(official_rows) - 62}
    assert run.findings("TABLE-REDERIVE") == []
    # every re-derived value is the logged LoadGen value the official checker uses (exact, not just close)
    for r in report["rows"]:
        if r["tree_status"] == "match":
            assert r["derived"]["value"] == pytest.approx(r["result"], rel=1e-9)
    assert "62 rows re-derived — 62 match" in run.out
    assert len(run.findings("TABLE-LOGS-MISSING")) == len(official_rows) - 62
    assert report["missing_rows"] == []


def test_server_rows_are_completed_rates(audit, v51_tree: Path) -> None:
    """D-16: the published Server figures equal LoadGen's completed (not scheduled) rates."""
    run = audit("table", str(v51_tree / "summary_results.json"), "--tree", str(v51_tree))
    keys = {
        r["derived"]["key"]
        for r in run.report["rows"]
        if r["derived"] and r["scenario"] in ("Server", "Interactive")
    }
    assert keys == {"result_completed_tokens_per_second", "result_completed_samples_per_sec"}


def test_checker_summary_csv_matches_logs(audit, shared_dir: Path, v51_tree: Path) -> None:
    csv_path = shared_dir / "data/official-verdicts/v5.1-subset-summary.csv"
    run = audit("table", str(csv_path), "--tree", str(v51_tree))
    assert run.code == 0, run.out
    assert run.report["table"]["format"] == "checker-csv"
    assert run.report["tree_counts"] == {"match": 58}


def _edit(
    rows: list[dict[str, Any]], location: str, column: str, value: Any, tmp_path: Path
) -> tuple[Path, int]:
    edited = json.loads(json.dumps(rows))
    index = next(i for i, r in enumerate(edited) if r["Location"] == location)
    edited[index][column] = value
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps(edited, indent=2))
    return path, index + 1


LOC = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99/Offline"


@pytest.mark.parametrize(
    ("column", "value", "rule"),
    [
        ("Performance_Result", 29500.0, "TABLE-REDERIVE"),
        ("Performance_Units", "Samples/s", "TABLE-UNITS"),
        # still above every threshold: only the logs can tell
        (
            "Accuracy",
            "ROUGE1: 44.6  ROUGE2: 22.0638  ROUGEL: 28.625  TOKENS_PER_SAMPLE: 301.1",
            "TABLE-REDERIVE",
        ),
        ("Scenario", "Server", "TABLE-REDERIVE"),
    ],
)
def test_hand_edited_row_is_caught(
    audit, official_rows, v51_tree: Path, tmp_path: Path, column: str, value: Any, rule: str
) -> None:
    original = next(r for r in official_rows if r["Location"] == LOC)
    assert original[column] != value
    path, row = _edit(official_rows, LOC, column, value, tmp_path)
    run = audit("table", str(path), "--tree", str(v51_tree))
    assert run.code == 1
    hits = [
        f
        for f in run.findings(rule, "error")
        if f["scope"] == f"row {row}" and f"column '{column}'" in f["message"]
    ]
    assert hits, run.out
    assert hits[0]["result"] == LOC
    assert hits[0]["line"] is not None and hits[0]["path"] == str(path)
    # nothing else is blamed, except that a row moved to another scenario now duplicates the row already there
    others = [f for f in run.findings(severity="error") if f["scope"] != f"row {row}"]
    assert all(f["rule"] == "TABLE-DUPLICATE" and f"as row {row} " in f["message"] for f in others), others
    # and the terminal line names row and column too
    assert f"row {row} (5.1-0001 llama2-70b-99" in run.out and f"column '{column}'" in run.out


def test_hand_edited_scenario_also_contradicts_location(audit, official_rows, tmp_path: Path) -> None:
    path, row = _edit(official_rows, LOC, "Scenario", "Server", tmp_path)
    run = audit("table", str(path))  # no logs needed for this one
    hits = run.findings("TABLE-SCENARIO", "error")
    assert [h["scope"] for h in hits] == [f"row {row}"]
    assert "column 'Scenario'" in hits[0]["message"] and "Offline" in hits[0]["message"]


def test_results_missing_from_the_table_are_listed(
    audit, official_rows, v51_tree: Path, tmp_path: Path
) -> None:
    kept = [r for r in official_rows if r["Location"] != LOC]
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps(kept, indent=1))
    run = audit("table", str(path), "--tree", str(v51_tree))
    assert run.report["missing_rows"] == [LOC]
    assert [f["result"] for f in run.findings("TABLE-MISSING-ROW")] == [LOC]


def test_official_table_without_tree_has_no_errors(audit, v51_tree: Path) -> None:
    run = audit("table", str(v51_tree / "summary_results.json"))
    assert run.code == 0
    assert run.report["round"] == "v5.1" and run.report["table"]["rows"] == 1448
    # the official checker labels llama3.1-8b Interactive 'Queries/s' and whisper 'Samples/s' although the value is
    # tokens/s: flagged as a warning beyond the official checker
    units = run.findings("TABLE-UNITS", "warning")
    assert units and all(f["beyond_official"] for f in units)
    assert {f["message"].split(" ")[3] for f in units} == {"llama3.1-8b", "whisper"}


def test_location_outside_the_tree_is_not_followed(
    audit, official_rows, v51_tree: Path, tmp_path: Path
) -> None:
    path, row = _edit(
        official_rows, LOC, "Location", "../../../../etc/results/x/llama2-70b-99/Offline", tmp_path
    )
    run = audit("table", str(path), "--tree", str(v51_tree))
    status = next(r for r in run.report["rows"] if r["row"] == row)
    assert status["tree_status"] == "logs-missing" and status["derived"] is None


def test_tree_may_be_one_submitter(audit, v51_tree: Path) -> None:
    run = audit("table", str(v51_tree / "summary_results.json"), "--tree", str(v51_tree / "closed" / "AMD"))
    assert run.code == 0
    matched = [r["location"] for r in run.report["rows"] if r["tree_status"] == "match"]
    assert len(matched) == 20 and all(loc.startswith("closed/AMD/") for loc in matched)
