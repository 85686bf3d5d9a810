"""The table audit's reports: terminal text and the ``--json`` dict (``schemas/table-report.json``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from checker.audit.report_common import FindingLog, exit_code_of, finding_lines, severity_counts
from checker.audit.table_model import ResultTable, TableRow
from checker.audit.table_tree import RowComparison, RowStatus, TreeComparison
from checker.findings import Finding, Severity
from checker.version import tool_version

SCHEMA_VERSION = "1"


@dataclass(frozen=True)
class TreeSummary:
    """What the reports say about ``--tree``: row statuses counted (in the order they first occur), the tree's
    results without a row."""

    root: str
    status_counts: dict[str, int]
    missing_rows: tuple[str, ...]

    @classmethod
    def of(cls, tree: TreeComparison) -> TreeSummary:
        return cls(tree.root, dict(Counter(c.status.value for c in tree.rows)), tree.missing_rows)


# One row of the report's ``rows`` (the JSON report only): row, line, id, benchmark, scenario, location, result,
# units, tree status, values re-derived from the logs
RowRecord = tuple[
    int, int | None, str | None, str | None, str | None, str | None, float | None, str | None, str | None, Any
]


def row_record(row: TableRow, comparison: RowComparison | None) -> RowRecord:
    d = comparison.derived if comparison is not None else None
    derived = (
        None
        if d is None or d.value is None
        else {
            "value": d.value,
            "key": d.key,
            "effective_scenario": d.effective_scenario,
            "inferred": d.inferred,
            "result_validity": d.result_validity,
            "accuracy": d.accuracy,
        }
    )
    status = comparison.status.value if comparison is not None else None
    return (
        row.row, row.line, row.id, row.benchmark, row.scenario, row.location, row.result, row.units, status, derived
    )


@dataclass(frozen=True)
class TableAudit:
    """One audit. ``table`` is the table's header (its rows are streamed, not held: ``table.rows`` may be empty);
    ``rows`` holds what the JSON report lists of each row, when one is written."""

    table: ResultTable
    round: str
    round_detection: str
    findings: FindingLog | tuple[Finding, ...]
    tree: TreeSummary | None
    rel_tol: float
    row_count: int
    rows: tuple[RowRecord, ...] = ()

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.findings)


def report_dict(audit: TableAudit) -> dict[str, Any]:
    per_row: dict[int, int] = Counter()
    for f in audit.findings:
        if f.scope and f.scope.startswith("row ") and f.severity is Severity.ERROR:
            per_row[int(f.scope[4:])] += 1
    rows = [
        {
            "row": r[0],
            "line": r[1],
            "id": r[2],
            "benchmark": r[3],
            "scenario": r[4],
            "location": r[5],
            "result": r[6],
            "units": r[7],
            "errors": per_row.get(r[0], 0),
            "tree_status": r[8],
            "derived": r[9],
        }
        for r in audit.rows
    ]
    code = audit.exit_code
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "table-report",
        "tool": "inference-audit",
        "tool_version": tool_version(),
        "round": audit.round,
        "round_detection": audit.round_detection,
        "table": {
            "path": audit.table.path,
            "format": audit.table.format.value,
            "rows": audit.row_count,
            "columns": dict(audit.table.columns),
        },
        "tree": None if audit.tree is None else audit.tree.root,
        "rel_tol": audit.rel_tol,
        "valid": code == 0,
        "exit_code": code,
        "counts": severity_counts(audit.findings),
        "tree_counts": None if audit.tree is None else dict(audit.tree.status_counts),
        "missing_rows": [] if audit.tree is None else list(audit.tree.missing_rows),
        "rows": rows,
        "findings": [f.model_dump(mode="json") for f in audit.findings],
    }


def render_text(audit: TableAudit, *, verbose: bool = False) -> list[str]:
    t = audit.table
    lines = [
        f"inference-audit table: {t.path} ({t.format.value}, {audit.row_count} rows), round {audit.round} "
        f"({audit.round_detection})",
    ]
    lines += finding_lines(audit.findings, verbose=verbose)
    if audit.tree is not None:
        c = audit.tree.status_counts
        match, mismatch = c.get(RowStatus.MATCH.value, 0), c.get(RowStatus.MISMATCH.value, 0)
        lines.append(
            f"logs in {audit.tree.root}: {match + mismatch} rows re-derived — {match} match within rounding "
            f"(rel. tol. {audit.rel_tol:g}), {mismatch} differ; {c.get(RowStatus.LOGS_MISSING.value, 0)} rows "
            f"have no directory in the tree; {c.get(RowStatus.UNREADABLE.value, 0)} unreadable; "
            f"{len(audit.tree.missing_rows)} valid results in the tree have no row"
        )
    n = severity_counts(audit.findings)
    verdict = "VALID" if audit.exit_code == 0 else "INVALID"
    lines.append(f"{verdict}: {n['error']} errors, {n['warning']} warnings, {n['info']} notes")
    return lines
