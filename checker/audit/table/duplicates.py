"""TABLE-DUPLICATE: two rows of one result directory, or of one system, benchmark, model and scenario, however the
cells are written (Unicode forms, invisible characters, case, a path's ``./`` and ``../``). :class:`TableChecks`
holds a hash of each key between rows and calls these; :func:`duplicates` is the same over a table in memory.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from checker.audit.table.model import POWER_UNITS, TableRow
from checker.checks.rule_registry import RuleInfo, register
from checker.findings import Finding

if TYPE_CHECKING:  # the row checker calls this module: its type only
    from checker.audit.table.checks import RowChecker

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-DUPLICATE",
        "-",
        "table: two rows of one result directory, or of one system, model and scenario",
    ),
)


def duplicate_keys(row: TableRow) -> list[tuple[str, ...]]:
    """The keys two rows may not share: the result directory, and system + benchmark + model + scenario.

    The official checker's summary writes a result with MLPerf power twice, its performance and then its power
    metric in power units (v5.1.1 checker L2195-2226, HEAD results.py:133-137): the power row has keys of its own.
    """
    keys: list[tuple[str, ...]] = []
    kind = "power " if row.units in POWER_UNITS else ""
    if row.location:
        keys.append((kind + "location", same_path(row.location)))
    if row.benchmark and row.scenario and (row.id or row.platform):
        # Open entries may run several models for one benchmark: the model run is part of the key
        model = (row.used_model or row.benchmark).lower()
        keys.append(
            (
                kind + "entry",
                same_text(row.division or "")
                + "|"
                + same_text(row.id or row.submitter or "")
                + "|"
                + same_text(row.platform or row.system or ""),
                same_text(row.benchmark) + "|" + same_text(model),
                same_text(row.scenario),
            )
        )
    return keys


def duplicate(checker: RowChecker, row: TableRow, key: tuple[str, ...], first_label: str) -> Finding:
    what = "result directory" if key[0].endswith("location") else "system, benchmark, model and scenario"
    return checker.finding(
        row,
        "TABLE-DUPLICATE",
        "location" if key[0].endswith("location") else None,
        f"same {what} as {first_label}",
    )


def duplicates(checker: RowChecker) -> list[Finding]:
    """TABLE-DUPLICATE over the table's rows, every key held (the reference :class:`TableChecks` agrees with)."""
    out = []
    seen: dict[tuple[str, ...], TableRow] = {}
    for row in checker.table.rows:
        for key in duplicate_keys(row):
            first = seen.get(key)
            if first is not None:
                out.append(duplicate(checker, row, key, first.label()))
                break
            seen[key] = row
    return out


def exact_duplicates(checker: RowChecker, rows: Callable[[], Iterable[TableRow]]) -> list[Finding]:
    out = []
    seen: dict[tuple[str, ...], str] = {}
    for row in rows():
        for key in duplicate_keys(row):
            first = seen.get(key)
            if first is not None:
                out.append(duplicate(checker, row, key, first))
                break
            seen[key] = row.label()
    return out


def same_text(text: str) -> str:
    """The form two cells of one result share however they are written: NFKC (full-width letters, ligatures),
    format characters dropped (zero-width spaces and joiners, bidi controls, soft hyphens), runs of white space
    as one space, case folded."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.split()).casefold()


def same_path(location: str) -> str:
    """A result directory however it is written: :func:`same_text`, then ``/./``, repeated and surrounding
    slashes and ``a/../`` collapsed as a path."""
    text = same_text(location).replace("\\", "/").strip("/")
    return posixpath.normpath(text) if text else text
