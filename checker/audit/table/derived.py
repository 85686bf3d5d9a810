"""TABLE-DERIVED: columns of a results table that are not official MLPerf metrics (per accelerator, per watt, cost,
composite; DRV-01/02, PWR-01, CMB-01) and their values (a per-watt figure without measured power, a per-accelerator
figure that is not the result divided by the accelerator count). :class:`checker.audit.table.checks.TableChecks`
calls them for the table's extra columns.
"""

from __future__ import annotations

import re

from checker.audit.table.model import ResultTable, TableRow
from checker.audit.table.parse import KNOWN_INFORMATIONAL
from checker.checks.rule_registry import WARN, Case, RuleInfo, register, registered_finding
from checker.findings import Finding, Severity

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-DERIVED",
        "-",
        "table: a column that is not an official metric (per accelerator, per watt, cost, "
        "composite); ERROR: per watt without measured power",
        WARN,
        beyond=True,
        fix="label it as derived and unverified, with the basis of the derivation in text and footnote",
        cases={
            "per-watt": Case(source="MSG:114-116 (PWR-01)"),
            "chip-count": Case(source="MSG:82 (CMP-06 chip count)"),
        },
    ),
)

DERIVED_RULES: dict[str, tuple[str, str]] = {
    "per-accelerator": ("DRV-02", "MSG:159, MSG:82 (DRV-01, DRV-02)"),
    "per-watt": ("PWR-01", "MSG:112-116 (PWR-01, DRV-01)"),
    "cost": ("DRV-01", "MSG:159 (DRV-01)"),
    "composite": ("CMB-01", "MSG:155 (CMB-01)"),
}

_DERIVED_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "per-watt",
        re.compile(r"per[ _-]?watt|/\s*w\b|perf[ _/-]?w\b|per[ _-]?joule|/\s*j\b|tokens?/j|efficien", re.I),
    ),
    (
        "per-accelerator",
        re.compile(
            r"per[ _-]?(gpu|accelerator|chip|device|card|node)|/\s*(gpu|accelerator|chip|device)", re.I
        ),
    ),
    ("cost", re.compile(r"cost|price|\$|usd|eur|€|tco|per[ _-]?dollar", re.I)),
    ("composite", re.compile(r"geo[ _-]?mean|average|composite|aggregate|overall", re.I)),
)


def derived_kind(column: str) -> str | None:
    for kind, pattern in _DERIVED_PATTERNS:
        if pattern.search(column):
            return kind
    return None


def derived_column(table: ResultTable, col: str) -> list[Finding]:
    """TABLE-DERIVED for a column that is not an official metric (DRV-01/02, PWR-01, CMB-01); [] for others."""
    kind = derived_kind(col)
    if kind is None:
        return []
    rule, source = DERIVED_RULES[kind]
    return [
        registered_finding(
            rule="TABLE-DERIVED",
            message=f"column '{col}' is a derived {kind} figure, not an official MLPerf metric ({rule}): "
            "it may not be presented as official or verified",
            scope="table",
            path=table.path,
            source=source,
        )
    ]


def derived_columns(table: ResultTable) -> list[Finding]:
    """Columns that are not official metrics, and their values, over the table's rows."""
    out = []
    extra_cols: list[str] = []
    for row in table.rows:
        for col in row.extra:
            if col not in extra_cols and col not in KNOWN_INFORMATIONAL:
                extra_cols.append(col)
    for col in extra_cols:
        kind = derived_kind(col)
        if kind is None:
            continue
        out += derived_column(table, col)
        for row in table.rows:
            out += derived_value(table, row, col, kind)
    return out


def derived_value(table: ResultTable, row: TableRow, col: str, kind: str) -> list[Finding]:
    text = row.extra.get(col)
    if text is None:
        return []
    out = []
    if kind == "per-watt" and not (row.has_power and row.power_result):
        out.append(
            registered_finding(
                rule="TABLE-DERIVED",
                severity=Severity.ERROR,
                message=f"{row.label()}, column '{col}': a per-watt figure ({text}) for a result without "
                "MLPerf-measured system power; no proxy power may be used",
                result=row.location,
                scope=f"row {row.row}",
                path=table.path,
                line=row.line,
                case="per-watt",
            )
        )
    if kind == "per-accelerator" and row.result is not None:
        count = (row.nodes or 1) * (row.accelerators_per_node or 0)
        try:
            value = float(text.replace(",", ""))
        except ValueError:
            return out
        if count > 0 and abs(value - row.result / count) > 0.01 * abs(row.result / count):
            out.append(
                registered_finding(
                    rule="TABLE-DERIVED",
                    message=f"{row.label()}, column '{col}': {text} is not the result divided by the "
                    f"accelerator count ({row.result_text} / {count} = {row.result / count:.6g})",
                    result=row.location,
                    scope=f"row {row.row}",
                    path=table.path,
                    line=row.line,
                    case="chip-count",
                )
            )
    return out
