"""The official-compatible summary CSV (``--csv``): the official v5.1 checker's 28 columns, valid results only.

The official checker writes with Python's ``csv`` module defaults (fields quoted only when they
need it, CRLF line ends); so do we, so the files compare byte for byte.
"""

from __future__ import annotations

import csv
import io

from checker.results import SUMMARY_CSV_COLUMNS, CheckReport, SummaryRow


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
        writer.writerow([row.values.get(c, "") for c in columns])
    return out.getvalue().encode("utf-8")
