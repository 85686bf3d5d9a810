"""The official summary CSV's rows (``log_result`` in the v5.1.1 checker): one per valid result, plus its power row.

:func:`result_rows` builds them from a checked result; :mod:`checker.report.summary_csv` writes them. The ``errors``
cell counts, as the official checker does, the error categories of the benchmark's results checked before this one
(:func:`error_categories`).
"""

from __future__ import annotations

import math
from typing import Any

from checker.checks.context import ResultContext
from checker.findings import Finding, Severity
from checker.result_value import result_units
from checker.results import SUMMARY_CSV_COLUMNS, SummaryRow
from rules.models import Scenario

# Finding families the official checker counts in its per-benchmark ``errors`` counter (summary CSV column)
ERROR_FAMILIES = (("TREE-SCENARIO",), ("MEAS-",), ("ACC-",), ("PERF-", "LAT-", "INFER-", "POWER-"))


def summary_values(
    ctx: ResultContext, result: float, *, power: float | None = None, errors: int = 0
) -> dict[str, str]:
    """One row of the official summary CSV (log_result in the v5.1.1 checker)."""
    d = ctx.system_desc
    assert d is not None  # a summary row is written only for a result whose system description parsed
    rd = ctx.rd
    r = ctx.round
    scen = ctx.scenario
    assert scen is not None
    bm = ctx.benchmark
    # the system fields as the official log_result writes them: str() of the JSON value (SystemDesc.shown)
    notes = d.shown("hw_notes", "") if d.filled("hw_notes") else ""
    if d.filled("sw_notes"):
        notes = (notes + ". " if notes else "") + d.shown("sw_notes")
    if power is None:
        units = result_units(r, bm, scen)
    else:
        units = r.power_units.get(
            scen,
            "Watts" if scen in (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE) else "millijoules",
        )
    wdt = ctx.computed.weight_data_types
    values = {
        "Organization": rd.submitter,
        "Availability": d.shown("status", "").lower(),
        "Division": rd.division,
        "SystemType": d.shown("system_type"),
        "SystemName": d.shown("system_name"),
        "Platform": rd.system,
        "Model": rd.benchmark,
        "MlperfModel": ctx.mlperf_model or "",
        "Scenario": scen.value,
        "Result": str(float(power if power is not None else result)),
        "Accuracy": ctx.computed.accuracy or "",
        "number_of_nodes": d.shown("number_of_nodes"),
        "host_processor_model_name": d.shown("host_processor_model_name"),
        "host_processors_per_node": d.shown("host_processors_per_node"),
        "host_processor_core_count": d.shown("host_processor_core_count"),
        "accelerator_model_name": d.shown("accelerator_model_name"),
        "accelerators_per_node": d.shown("accelerators_per_node"),
        "Location": rd.path,
        "framework": d.shown("framework", ""),
        "operating_system": d.shown("operating_system", ""),
        "notes": notes,
        "compliance": str(ctx.computed.compliance),
        "errors": str(errors),
        "version": r.name,
        "inferred": "1" if ctx.computed.inferred else "0",
        "has_power": str(ctx.computed.power_metric is not None and ctx.computed.power_metric > 0),
        "Units": units,
        "weight_data_types": "" if wdt is None else str(wdt),
    }
    assert tuple(values) == SUMMARY_CSV_COLUMNS
    return values


def error_categories(findings: list[Finding]) -> int:
    n = 0
    for prefixes in ERROR_FAMILIES:
        if any(f.severity is Severity.ERROR and f.rule.startswith(prefixes) for f in findings):
            n += 1
    return n


def result_rows(ctx: ResultContext, errors: int) -> tuple[SummaryRow | None, SummaryRow | None]:
    """The summary row and the power row of a checked result (None: the result has none; a result without a finite
    value, a scenario or a parsed system description has neither)."""
    value = ctx.computed.result
    if ctx.scenario is None or value is None or not _finite(value) or ctx.system_desc is None:
        return None, None
    summary: SummaryRow | None = SummaryRow(values=summary_values(ctx, value, errors=errors))
    pm = ctx.computed.power_metric
    if pm and ctx.system_desc.power_only:
        summary = None  # the official log_result writes only the power row then
    power_row = None
    if pm and _finite(pm):
        power_row = SummaryRow(values=summary_values(ctx, value, power=pm, errors=errors))
    return summary, power_row


def _finite(v: Any) -> bool:
    """A value a summary row may carry: a real number (NaN, infinities and non-numbers never reach the CSV; the
    checks report them as PERF-VALUE)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
