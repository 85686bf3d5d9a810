"""The table audit's reports: terminal text and the ``--json`` dict (``schemas/table-report.json``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from checker.audit.report_common import exit_code_of, finding_lines, severity_counts
from checker.audit.table_model import ResultTable
from checker.audit.table_tree import RowStatus, TreeComparison
from checker.findings import Finding, Severity
from checker.version import tool_version

SCHEMA_VERSION = "1"


@dataclass(frozen=True)
class TableAudit:
    table: ResultTable
    round: str
    round_detection: str
    findings: tuple[Finding, ...]
    tree: TreeComparison | None
    rel_tol: float

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.findings)


def report_dict(audit: TableAudit) -> dict[str, Any]:
    per_row: dict[int, int] = Counter()
    for f in audit.findings:
        if f.scope and f.scope.startswith("row ") and f.severity is Severity.ERROR:
            per_row[int(f.scope[4:])] += 1
    status: dict[int, Any] = {}
    if audit.tree is not None:
        for c in audit.tree.rows:
            d = c.derived
            status[c.row.row] = {
                "status": c.status.value,
                "derived": None
                if d is None or d.value is None
                else {
                    "value": d.value,
                    "key": d.key,
                    "effective_scenario": d.effective_scenario,
                    "inferred": d.inferred,
                    "result_validity": d.result_validity,
                    "accuracy": d.accuracy,
                },
            }
    rows = []
    for r in audit.table.rows:
        tree_info = status.get(r.row, {"status": None, "derived": None})
        rows.append(
            {
                "row": r.row,
                "line": r.line,
                "id": r.id,
                "benchmark": r.benchmark,
                "scenario": r.scenario,
                "location": r.location,
                "result": r.result,
                "units": r.units,
                "errors": per_row.get(r.row, 0),
                "tree_status": tree_info["status"],
                "derived": tree_info["derived"],
            }
        )
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
            "rows": len(audit.table.rows),
            "columns": dict(audit.table.columns),
        },
        "tree": None if audit.tree is None else audit.tree.root,
        "rel_tol": audit.rel_tol,
        "valid": code == 0,
        "exit_code": code,
        "counts": severity_counts(audit.findings),
        "tree_counts": None if audit.tree is None else dict(Counter(c.status.value for c in audit.tree.rows)),
        "missing_rows": [] if audit.tree is None else list(audit.tree.missing_rows),
        "rows": rows,
        "findings": [f.model_dump(mode="json") for f in audit.findings],
    }


def render_text(audit: TableAudit, *, verbose: bool = False) -> list[str]:
    t = audit.table
    lines = [
        f"inference-audit table: {t.path} ({t.format.value}, {len(t.rows)} rows), round {audit.round} "
        f"({audit.round_detection})",
    ]
    lines += finding_lines(audit.findings, verbose=verbose)
    if audit.tree is not None:
        c = Counter(x.status for x in audit.tree.rows)
        checked = c[RowStatus.MATCH] + c[RowStatus.MISMATCH]
        lines.append(
            f"logs in {audit.tree.root}: {checked} rows re-derived — {c[RowStatus.MATCH]} match within rounding "
            f"(rel. tol. {audit.rel_tol:g}), {c[RowStatus.MISMATCH]} differ; {c[RowStatus.LOGS_MISSING]} rows have "
            f"no directory in the tree; {c[RowStatus.UNREADABLE]} unreadable; "
            f"{len(audit.tree.missing_rows)} valid results in the tree have no row"
        )
    n = severity_counts(audit.findings)
    verdict = "VALID" if audit.exit_code == 0 else "INVALID"
    lines.append(f"{verdict}: {n['error']} errors, {n['warning']} warnings, {n['info']} notes")
    return lines
