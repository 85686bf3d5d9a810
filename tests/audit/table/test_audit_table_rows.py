"""Row checks of ``inference-audit table`` on small tables (real rows, and rows edited to break one rule each)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from schemas import schema_errors


def _rows(rows_table: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(rows_table.read_text())
    return rows


def _write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "table.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows, indent=2))
    return path


def test_real_rows_are_valid(audit, rows_table: Path) -> None:
    run = audit("table", str(rows_table))
    assert run.code == 0, run.out
    assert run.report["round_detection"].startswith("from the 'version' column")
    assert run.findings(severity="error") == []
    assert not schema_errors(run.report, "table-report")


@pytest.mark.parametrize(
    ("column", "value", "rule", "words"),
    [
        ("ID", "5.1-1", "TABLE-ID", "not an official result ID"),
        ("ID", "5.0-0001", "TABLE-ID", "not of round v5.1"),
        ("Availability", "soon", "TABLE-AVAILABILITY", "not an availability category"),
        ("Category", "closedish", "TABLE-DIVISION", "not a division"),
        ("Suite", "cloud", "TABLE-SUITE", "not a suite"),
        ("Model", "llama9-999b", "TABLE-BENCHMARK", "not a benchmark of round v5.1"),
        ("Scenario", "Batch", "TABLE-SCENARIO", "not a scenario"),
        ("Scenario", "SingleStream", "TABLE-SCENARIO", "not a scenario of llama2-70b-99"),
        ("Performance_Units", "Queries/s", "TABLE-UNITS", "does not fit llama2-70b-99 Offline"),
        ("Performance_Result", -3.0, "TABLE-RESULT", "not a positive result"),
        ("Performance_Result", "fast", "TABLE-VALUE", "is not a number"),
        ("a#", "eight", "TABLE-VALUE", "is not an integer"),
        ("version", "v5.0", "TABLE-VERSION", "is not round v5.1"),
        (
            "Accuracy",
            "ROUGE1: 40.1  ROUGE2: 22.0419  ROUGEL: 28.6112  TOKENS_PER_SAMPLE: 301.1",
            "TABLE-ACCURACY",
            "ROUGE1 40.1 is below the v5.1 threshold",
        ),
        (
            "Accuracy",
            "ROUGE1: 44.4542  ROUGE2: 22.0419  ROUGEL: 28.6112  TOKENS_PER_SAMPLE: 350.0",
            "TABLE-ACCURACY",
            "TOKENS_PER_SAMPLE 350.0 is above the v5.1 upper bound",
        ),
        (
            "Accuracy",
            "ROUGE1: 44.4542  ROUGE2: 22.0419  ROUGEL: 28.6112",
            "TABLE-ACCURACY",
            "no TOKENS_PER_SAMPLE value",
        ),
        ("Accuracy", "looks fine", "TABLE-ACCURACY", "has no 'METRIC: value' pair"),
    ],
)
def test_each_broken_value_is_named(
    audit, rows_table: Path, tmp_path: Path, column: str, value: Any, rule: str, words: str
) -> None:
    rows = _rows(rows_table)
    target = 2  # 5.1-0001 llama2-70b-99 Offline (closed)
    rows[target - 1][column] = value
    run = audit("table", str(_write(tmp_path, rows)), "--round", "v5.1")
    assert run.code == 1
    hits = [f for f in run.findings(rule, "error") if f["scope"] == f"row {target}"]
    assert hits, run.out
    assert any(f"column '{column}'" in h["message"] and words in h["message"] for h in hits), hits


def test_open_rows_keep_their_own_accuracy(audit, rows_table: Path, tmp_path: Path) -> None:
    """RULES_HEAD:361: Open results report their accuracy; a value below the Closed target is a note, not an error."""
    rows = _rows(rows_table)
    row = next(i for i, r in enumerate(rows, start=1) if r["Category"] == "open")
    rows[row - 1]["Accuracy"] = "ROUGE1: 30.0  ROUGE2: 12.0  ROUGEL: 20.0  TOKENS_PER_SAMPLE: 290.0"
    run = audit("table", str(_write(tmp_path, rows)))
    assert run.code == 0
    notes = [f for f in run.findings("TABLE-ACCURACY", "info") if f["scope"] == f"row {row}"]
    assert len(notes) == 3


def test_duplicates(audit, rows_table: Path, tmp_path: Path) -> None:
    rows = _rows(rows_table)
    rows.append(dict(rows[1]))
    run = audit("table", str(_write(tmp_path, rows)))
    dup = run.findings("TABLE-DUPLICATE", "error")
    assert [d["scope"] for d in dup] == [f"row {len(rows)}"]
    assert "same result directory as row 2" in dup[0]["message"]


def test_power_values(audit, rows_table: Path, tmp_path: Path) -> None:
    rows = _rows(rows_table)
    rows[1]["Power_Result"] = 9000.0  # 5.1-0001 has no power measurement
    rows[1]["Power_Units"] = "Watts"
    run = audit("table", str(_write(tmp_path, rows)))
    assert [f["scope"] for f in run.findings("TABLE-POWER", "error")] == ["row 2"]


def _csv(tmp_path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    path = tmp_path / "vendor.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


HEADER = [
    "Result ID",
    "Benchmark",
    "Scen",
    "Throughput",
    "Unit",
    "Division",
    "Availability",
    "GPUs",
    "Tokens/s per GPU",
    "Tokens/s per Watt",
    "Cost per 1M tokens ($)",
]
ROWS = [
    [
        "5.1-0001",
        "llama2-70b-99",
        "Offline",
        "27803.9",
        "Tokens/s",
        "closed",
        "available",
        "8",
        "3475.5",
        "",
        "0.91",
    ],
    [
        "5.1-0008",
        "llama2-70b-99",
        "Offline",
        "52061.6",
        "Tokens/s",
        "closed",
        "available",
        "4",
        "16000",
        "5.2",
        "0.55",
    ],
]


def test_mapped_csv_with_derived_columns(audit, tmp_path: Path) -> None:
    path = _csv(tmp_path, HEADER, ROWS)
    run = audit(
        "table",
        str(path),
        "--round",
        "v5.1",
        "--map",
        "id=Result ID,scenario=Scen,result=Throughput,units=Unit,accelerators_per_node=GPUs",
    )
    assert run.report["table"]["format"] == "mapped"
    derived = run.findings("TABLE-DERIVED")
    by_col = {f["message"].split("'")[1] for f in derived if f["scope"] == "table"}
    assert by_col == {"Tokens/s per GPU", "Tokens/s per Watt", "Cost per 1M tokens ($)"}
    # the per-watt value of a result without MLPerf-measured power is an error (PWR-01)
    pwr = run.findings("TABLE-DERIVED", "error")
    assert [f["scope"] for f in pwr] == ["row 2"] and "PWR-01" in pwr[0]["source"]
    # 16000 is not 52061.6 / 4: flagged; 3475.5 is 27803.9 / 8: not flagged
    wrong = [f for f in derived if f["severity"] == "warning" and f["scope"] == "row 2"]
    assert wrong and "not the result divided by the accelerator count" in wrong[0]["message"]
    assert run.code == 1


def test_map_names_the_missing_columns(audit, tmp_path: Path) -> None:
    path = _csv(tmp_path, HEADER, ROWS)
    run = audit("table", str(path), "--round", "v5.1", json_report=False)
    assert run.code == 2
    assert str(path) in run.err and "no column for scenario, result" in run.err and "--map" in run.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the table is empty"),
        ('[\n  {"ID": "5.1-0001",\n  oops\n]', "invalid JSON"),
        ("[]", "non-empty JSON list"),
        ("[1, 2]", "row 1 is not a JSON object"),
        ("benchmark,scenario,result\nllama2-70b-99,Offline\n", ":2: 2 cells, header has 3"),
        ("a,b\n1,2\n", "no column for benchmark, scenario, result"),
        ("just text\n", "not a CSV table"),
    ],
)
def test_unusable_tables_exit_2_naming_the_file(audit, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "broken.json"
    path.write_text(content)
    run = audit("table", str(path), "--round", "v5.1", json_report=False)
    assert run.code == 2
    assert str(path) in run.err and message in run.err


def test_invalid_json_names_the_line(audit, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"ID": "5.1-0001",\n  oops\n]')
    run = audit("table", str(path), json_report=False)
    assert f"{path}:3:" in run.err


def test_unknown_round_and_bad_map(audit, rows_table: Path) -> None:
    assert audit("table", str(rows_table), "--round", "v9.9", json_report=False).code == 2
    run = audit("table", str(rows_table), "--map", "speed=Performance_Result", json_report=False)
    assert run.code == 2 and "unknown field 'speed'" in run.err


def test_missing_file_and_tree(audit, rows_table: Path, tmp_path: Path) -> None:
    run = audit("table", str(tmp_path / "nope.json"), json_report=False)
    assert run.code == 2 and "nope.json" in run.err
    run = audit("table", str(rows_table), "--tree", str(tmp_path / "no-tree"), json_report=False)
    assert run.code == 2 and "no-tree" in run.err


def test_select_and_ignore(audit, rows_table: Path, tmp_path: Path) -> None:
    rows = _rows(rows_table)
    rows[1]["Availability"] = "soon"
    path = _write(tmp_path, rows)
    assert audit("table", str(path), "--ignore", "TABLE-AVAILABILITY").code == 0
    assert audit("table", str(path), "--select", "TABLE-ID").code == 0
    assert audit("table", str(path), "--select", "TABLE").code == 1
    # a pattern that matches no auditor rule (a typo) would select nothing and pass: refused before any work
    typo = audit("table", str(path), "--select", "TABEL-ID")
    assert typo.code == 2 and "--select TABEL-ID: no rule id matches" in typo.err and typo.report is None
    assert audit("table", str(path), "--select", "TABLE-ID,TABLE-VALUE").code == 0  # comma-separated, as check
