"""``inference-audit table`` streams the rows (checker/cli/table.py): each row is checked and let go,
duplicates are found from 64-bit key hashes (the first row's label read back by a second pass), and without
``--json`` / ``--verbose`` only the findings the summary prints are kept (:class:`FindingLog`).

These tests hold the streamed audit to the one that held every row and finding: the same text (summary and
``--verbose``), the same JSON report, the same duplicates when every hash collides, and a bounded number of
bytes per row (``bench/table_memory.py`` measures the process peak on 10^5 / 10^6 rows).
"""

from __future__ import annotations

import csv
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from checker.audit.report_common import FindingLog, finding_lines, severity_counts
from checker.audit.table import checks as table_checks
from checker.audit.table.checks import RowChecker, TableChecks, check_table
from checker.audit.table.derived import derived_columns
from checker.audit.table.duplicates import duplicates
from checker.audit.table.parse import load_table, open_table
from checker.findings import Finding, Severity, filter_findings
from checker.results import SUMMARY_CSV_COLUMNS
from rules import load_round


def _table_csv(path: Path, rows: int, seed: int = 0, *, clean: bool = False) -> None:
    """Checker-CSV rows with every kind of finding: notes (Open accuracy), warnings (derived columns, units),
    errors (untyped cells, per-watt figures without power, duplicates by directory and by entry); ``clean``:
    Open rows below the accuracy target (one or two notes a row, as on the real v5.1 table) and nothing else."""
    rng = random.Random(seed)
    header = [*SUMMARY_CSV_COLUMNS, "Tokens per GPU", "Perf/W", "remark"]
    body: list[list[str]] = []
    for i in range(rows):
        v = {c: "" for c in header}
        plat = f"plat_{i % (rows // 3 or 1)}"
        v.update(
            Organization=rng.choice(["AMD", "NVIDIA", "Krai"]),
            Availability="available",
            Division=rng.choice(["closed", "open", "open"]),
            SystemType="datacenter",
            SystemName=f"System {i}",
            Platform=plat,
            Model="llama2-70b-99",
            MlperfModel="llama2-70b-99",
            Scenario=rng.choice(["Offline", "Server"]),
            Result=rng.choice([f"{rng.uniform(100, 9000):.2f}", "x"]) if i % 17 else "x",
            Accuracy=rng.choice(
                [
                    "ROUGE1: 44.4373  ROUGE2: 22.0867  ROUGEL: 28.657  TOKENS_PER_SAMPLE: 294.4",
                    "ROUGE1: 40.1  ROUGE2: 20.0  ROUGEL: 27.0  TOKENS_PER_SAMPLE: 350.0",
                ]
            ),
            number_of_nodes="1",
            accelerators_per_node="8",
            Location=f"closed/X/results/{plat}/llama2-70b-99/{rng.choice(['Offline', 'Server'])}",
            version="v5.1",
            inferred="0",
            has_power="False",
            Units=rng.choice(["Tokens/s", "Samples/s"]),
        )
        v["Tokens per GPU"] = rng.choice(["", "12.5", "1000"])
        v["Perf/W"] = rng.choice(["", "", "3.1"])
        v["remark"] = "x"
        if clean:
            v.update(
                Division="open",
                Platform=f"plat_{i}",
                Location=f"open/X/results/plat_{i}/llama2-70b-99/{v['Scenario']}",
                Result=f"{rng.uniform(100, 9000):.2f}",
                Accuracy="ROUGE1: 40.1  ROUGE2: 20.0  ROUGEL: 27.0  TOKENS_PER_SAMPLE: 294.4",
                Units="Tokens/s",
                **{"Tokens per GPU": "", "Perf/W": ""},
            )
        body.append([v[c] for c in header])
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(body)


def _held(path: Path, *argv: str) -> list[Finding]:
    """The reference: every row held, every finding kept, filtered after (what the audit did before)."""
    return check_table(load_table(path), load_round("v5.1"))


def test_streamed_checks_equal_the_held_ones(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    _table_csv(path, 900)
    table = load_table(path)
    rnd = load_round("v5.1")
    checker = RowChecker(table, rnd)
    reference: list[Finding] = []
    for row in table.rows:
        reference += checker.check_row(row)
    reference += duplicates(checker) + derived_columns(table)
    assert check_table(table, rnd) == reference
    rules = {f.rule for f in reference}
    assert {"TABLE-DUPLICATE", "TABLE-DERIVED", "TABLE-VALUE", "TABLE-ACCURACY", "TABLE-UNITS"} <= rules
    # streamed from the file, a summary log (errors and the first warnings / notes of each rule) prints the same
    source = open_table(path)
    for keep_all in (True, False):
        log = FindingLog(keep_all=keep_all)
        checks = TableChecks(source.header, rnd, new_log=log.new)
        for row in source.rows():
            log.extend(checks.add(row))
        checks.finish(source.rows, log)
        assert severity_counts(log) == severity_counts(reference)
        assert finding_lines(log, verbose=False) == finding_lines(reference, verbose=False)
        if keep_all:
            assert list(log) == reference
        else:
            errors = [f for f in reference if f.severity is Severity.ERROR]
            assert [f for f in log if f.severity is Severity.ERROR] == errors
            rules_seen = {(f.severity, f.rule) for f in reference}
            assert len(list(log)) - len(errors) <= 5 * len(rules_seen) < len(reference) - len(errors)


def test_hash_collisions_never_make_a_duplicate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.csv"
    _table_csv(path, 300, seed=3)
    table = load_table(path)
    rnd = load_round("v5.1")
    reference = duplicates(RowChecker(table, rnd))
    assert reference
    monkeypatch.setattr(table_checks, "hash", lambda key: 7, raising=False)  # every key collides
    found = [f for f in check_table(table, rnd) if f.rule == "TABLE-DUPLICATE"]
    assert found == reference


@pytest.mark.parametrize("argv", [(), ("-v",), ("--select", "TABLE-ACCURACY"), ("--ignore", "TABLE-DERIVED")])
def test_cli_text_and_json_equal_the_held_audit(tmp_path: Path, audit: Any, argv: tuple[str, ...]) -> None:
    path = tmp_path / "t.csv"
    _table_csv(path, 400, seed=1)
    select = [argv[1]] if argv[:1] == ("--select",) else []
    ignore = [argv[1]] if argv[:1] == ("--ignore",) else []
    reference = filter_findings(_held(path), select, ignore)
    text = audit("table", str(path), *argv, json_report=False)
    with_json = audit("table", str(path), *argv)
    assert text.code == with_json.code == 1
    assert text.out == with_json.out  # held (--json) or summarised, the terminal report is the same
    assert with_json.report is not None
    assert with_json.report["findings"] == [f.model_dump(mode="json") for f in reference]
    assert with_json.report["table"]["rows"] == 400 and len(with_json.report["rows"]) == 400
    n = severity_counts(reference)
    assert f"INVALID: {n['error']} errors, {n['warning']} warnings, {n['info']} notes" in text.out
    if "-v" in argv:
        assert text.out.count("\n") > len(reference)


def test_finding_log_summary_is_the_full_summary() -> None:
    rng = random.Random(5)
    findings = [
        Finding(rule=rng.choice(["A", "B", "C-D"]), severity=rng.choice(list(Severity)), message=str(i))
        for i in range(500)
    ]
    for select, ignore in (((), ()), (("A",), ()), ((), ("C",))):
        full = filter_findings(findings, select, ignore)
        log = FindingLog(keep_all=False, select=select, ignore=ignore, warn_examples=3, info_examples=1)
        parts = [log.new() for _ in range(4)]
        for i, f in enumerate(findings):
            parts[i * 4 // len(findings)].add(f)
        for part in parts:
            log.extend(part)
        assert len(log) == len(full) and severity_counts(log) == severity_counts(full)
        assert finding_lines(log, verbose=False, warn_examples=3, info_examples=1) == finding_lines(
            full, verbose=False, warn_examples=3, info_examples=1
        )
        assert [f for f in log if f.severity is Severity.ERROR] == [f for f in full if f.severity is Severity.ERROR]


def test_a_streamed_row_costs_a_bounded_number_of_bytes(tmp_path: Path, audit: Any) -> None:
    """What the streamed audit holds grows by about 100-200 bytes a row (duplicate-key hashes); it held ~2.9 KB
    a row before (every row, and ~0.5 findings a row at ~1.4 KB each)."""
    sizes = {}
    for rows in (5_000, 20_000):
        path = tmp_path / f"t{rows}.csv"
        _table_csv(path, rows, seed=2, clean=True)
        tracemalloc.start()
        try:
            run = audit("table", str(path), "--round", "v5.1", json_report=False)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert run.code == 0, run.out + run.err
        assert "errors, 0 warnings" in run.out and " notes" in run.out
        sizes[rows] = peak
    per_row = (sizes[20_000] - sizes[5_000]) / 15_000
    assert per_row < 600, per_row
