"""The official-compatible summary CSV (``--csv``): the official v5.1 checker's 28 columns, valid results only.

The official checker writes with Python's ``csv`` module defaults (fields quoted only when they
need it, CRLF line ends); so do we, so the files compare byte for byte.

One difference, for cells copied from the submission's own files (system names, notes, framework):
a cell a spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return, and is not a plain number such as ``-1.5``) gets a leading ``'`` (OWASP's advice on
CSV injection), so ``=HYPERLINK(...)`` in a system name is shown, not evaluated. Real submissions hold
no such cell (the v5.1 rows stay byte-identical to the official checker's).
"""

from __future__ import annotations

import csv
import io
import re

from checker.results import SUMMARY_CSV_COLUMNS, CheckReport, SummaryRow

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_safe(cell: str) -> str:
    """``cell``, with a leading ``'`` when a spreadsheet would read it as a formula (numbers stay as they are)."""
    if cell.startswith(_FORMULA_START) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def summary_rows(report: CheckReport) -> list[SummaryRow]:
    """Rows of valid results that have a summary (plus their power rows), in report order."""
    rows: list[SummaryRow] = []
    for r in report.results:
        if not r.valid or r.summary is None:
            continue
        rows.append(r.summary)
        if r.power_summary is not None:
            rows.append(r.power_summary)
    return rows


def render_summary_csv(report: CheckReport, columns: tuple[str, ...] = SUMMARY_CSV_COLUMNS) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for row in summary_rows(report):
        writer.writerow([csv_safe(row.values.get(c, "")) for c in columns])
    return out.getvalue().encode("utf-8")
