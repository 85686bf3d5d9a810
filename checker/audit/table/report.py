"""The table audit's reports: terminal text and the ``--json`` dict (``schemas/table-report.json``)."""

from __future__ import annotations

import json
import struct
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from checker.audit.report_common import (
    ITEM_LEVEL,
    FindingLog,
    exit_code_of,
    finding_lines,
    severity_counts,
)
from checker.audit.table.model import ResultTable, TableRow
from checker.audit.table.tree import RowComparison, RowStatus, TreeComparison
from checker.findings import Finding, Severity
from checker.report.output import json_item
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
# units, tree status, values re-derived from the logs, the row's label (how a claim cites it: TableRow.identity) and
# its result as written (the last two and derived's "file" / "line": what the HTML page shows, so that
# 'inference-audit report' makes the same page from the report; absent from reports of earlier versions)
RowRecord = tuple[
    int, int | None, str | None, str | None, str | None, str | None, float | None, str | None, str | None, Any,
    str, str | None,
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
            "file": d.detail_path,
            "line": d.line,
        }
    )
    status = comparison.status.value if comparison is not None else None
    return (
        row.row, row.line, row.id, row.benchmark, row.scenario, row.location, row.result, row.units, status, derived,
        row.identity(), row.result_text,
    )


_ROW_HEAD = ("row", "line", "id", "benchmark", "scenario", "location", "result", "units")  # then "errors"
_ROW_TAIL = ("tree_status", "derived", "label", "result_text")
_PAD = "  " * ITEM_LEVEL


def row_item_parts(r: RowRecord) -> tuple[str, str]:
    """A row of the report's ``rows`` rendered as :func:`~checker.report.output.json_document` writes it, in two
    parts: the text before its ``errors`` count (known only once every row is checked) and the text after."""
    head = json.dumps(dict(zip(_ROW_HEAD, r[:8], strict=True)), indent=2, ensure_ascii=False)
    tail = json.dumps(dict(zip(_ROW_TAIL, r[8:], strict=True)), indent=2, ensure_ascii=False)
    # '{\n  "row": 1,\n ... "units": null\n}' and '{\n  "tree_status": ...\n}' joined around "errors"
    before = _PAD + (head[:-2] + ',\n  "errors": ').replace("\n", "\n" + _PAD)
    after = (",\n" + tail[2:]).replace("\n", "\n" + _PAD)
    return before, after


_RECORD = struct.Struct("<qII")  # row number, bytes before the errors count, bytes after


class RowSpool:
    """The report's ``rows``, rendered as each row is checked (:func:`row_item_parts`) and appended to an
    anonymous temporary file; :meth:`chunks` writes the list with each row's error count filled in."""

    def __init__(self) -> None:
        self.count = 0
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="inference-audit-", suffix=".rows")  # noqa: SIM115 (closed by close())

    def add(self, record: RowRecord) -> None:
        before, after = (part.encode("utf-8") for part in row_item_parts(record))
        self._file.write(_RECORD.pack(record[0], len(before), len(after)))
        self._file.write(before)
        self._file.write(after)
        self.count += 1

    def chunks(self, errors: dict[int, int]) -> Iterator[bytes]:
        if not self.count:
            yield b"[]"
            return
        fh = self._file
        fh.flush()
        fh.seek(0)
        out: list[bytes] = [b"[\n"]
        size = 0
        for i in range(self.count):
            row, n_before, n_after = _RECORD.unpack(fh.read(_RECORD.size))
            if i:
                out.append(b",\n")
            out += (fh.read(n_before), str(errors.get(row, 0)).encode("ascii"), fh.read(n_after))
            size += n_before + n_after
            if size >= 1 << 20:
                yield b"".join(out)
                out, size = [], 0
        out.append(("\n" + "  " * (ITEM_LEVEL - 1) + "]").encode("utf-8"))
        yield b"".join(out)
        fh.seek(0, 2)

    def close(self) -> None:
        self._file.close()


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
    row_spool: RowSpool | None = None  # the rows, when the JSON report streams them (instead of ``rows``)

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.findings)


def errors_per_row(audit: TableAudit) -> dict[int, int]:
    """Row number -> its errors (a :class:`FindingLog` keeps every error, spooled or not)."""
    per_row: dict[int, int] = Counter()
    for f in audit.findings:
        if f.scope and f.scope.startswith("row ") and f.severity is Severity.ERROR:
            per_row[int(f.scope[4:])] += 1
    return per_row


def report_dict(audit: TableAudit) -> dict[str, Any]:
    """The whole report as one dict (the audit's rows and findings held; :func:`report_chunks` streams it)."""
    per_row = errors_per_row(audit)
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
            "label": r[10],
            "result_text": r[11],
        }
        for r in audit.rows
    ]
    return {
        **report_head(audit),
        "rows": rows,
        "findings": [f.model_dump(mode="json") for f in audit.findings],
    }


def report_head(audit: TableAudit) -> dict[str, Any]:
    """The report's keys before its ``rows`` and ``findings`` (its last two)."""
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
    }


def report_chunks(audit: TableAudit) -> Iterator[bytes]:
    """The JSON report, byte for byte ``json_document(report_dict(audit))``, as chunks of bytes: the rows
    and findings are read back from their spools (:class:`RowSpool`, ``FindingLog.spool``) when the audit has
    them, so the report is never held whole (:func:`~checker.report.output.write_output_stream`)."""
    head = json.dumps(report_head(audit), indent=2, ensure_ascii=False)
    yield (head[:-2] + ',\n  "rows": ').encode("utf-8")  # head ends '\n}'
    per_row = errors_per_row(audit)
    if audit.row_spool is not None:
        yield from audit.row_spool.chunks(per_row)
    else:
        yield from _held_rows(audit.rows, per_row)
    yield b',\n  "findings": '
    spool = audit.findings.spool if isinstance(audit.findings, FindingLog) else None
    if spool is not None:
        yield from spool.chunks()
    else:
        yield from _held_list([json_item(f.model_dump(mode="json"), ITEM_LEVEL) for f in audit.findings])
    yield b"\n}\n"


def _held_rows(rows: tuple[RowRecord, ...], per_row: dict[int, int]) -> Iterator[bytes]:
    texts = []
    for r in rows:
        before, after = row_item_parts(r)
        texts.append(f"{before}{per_row.get(r[0], 0)}{after}")
    yield from _held_list(texts)


def _held_list(items: list[str]) -> Iterator[bytes]:
    if not items:
        yield b"[]"
        return
    yield ("[\n" + ",\n".join(items) + "\n" + "  " * (ITEM_LEVEL - 1) + "]").encode("utf-8")


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
