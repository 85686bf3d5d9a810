"""The round a result table belongs to: its version column, else its result IDs, else the newest round."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from checker.audit.table.checks import RESULT_ID
from checker.audit.table.model import ResultTable, TableRow
from rules import latest_round, normalize_round


def detect_round(table: ResultTable, rows: Iterable[TableRow] | None = None) -> tuple[str, str]:
    """(round, how it was found): the table's version column, else its result IDs, else the newest round.

    ``rows`` are the table's rows when they are streamed (``table`` is then the header)."""
    versions: Counter[str] = Counter()
    ids: Counter[str] = Counter()
    for r in table.rows if rows is None else rows:
        if r.version:
            versions[r.version.lower().lstrip("v")] += 1
        if r.id and (m := RESULT_ID.match(r.id)):
            ids[m.group(1) + "." + m.group(2)] += 1
    if versions:
        v = versions.most_common(1)[0][0]
        return normalize_round(v), f"from the '{table.column('version')}' column"
    if ids:
        return normalize_round(ids.most_common(1)[0][0]), f"from the result IDs ('{table.column('id')}')"
    return latest_round(), "newest round with rules (the table names none; pass --round)"
