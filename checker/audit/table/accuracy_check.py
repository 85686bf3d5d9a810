"""TABLE-ACCURACY: a row's accuracy as the official checker writes it, against the round's targets and upper limits
(a bare score as an MLPerf Endpoints result's summary writes it is held to the benchmark's first target).
:class:`checker.audit.table.checks.RowChecker` calls it for each row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.audit.table.accuracy_text import AccuracyValue, bare_accuracy, parse_accuracy_string, scale_to
from checker.audit.table.model import TableRow
from checker.checks.rule_registry import RuleInfo, register
from checker.findings import Finding, Severity
from rules.models import AccuracyTarget, Benchmark, Scenario

if TYPE_CHECKING:  # the row checker calls this module: its type only
    from checker.audit.table.checks import RowChecker

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-ACCURACY",
        "-",
        "table: accuracy missing, unreadable, below the round's target or out of bounds",
        source="catalogue E13",  # the targets' own citations where the round gives them
    ),
)

GENERATION_LENGTH_METRICS = ("GEN_LEN", "TOKENS_PER_SAMPLE")  # the checker's output-length bounds
# The endpoints results whose accuracy score the HEAD checker holds to the target (accuracy_check.py:108-136: for any
# other benchmark an endpoints result's accuracy_check returns True once a score is there)
OFFICIAL_ENDPOINTS_ACCURACY_CHECKED = ("qwen3-vl-235b-a22b",)


def accuracy_findings(
    checker: RowChecker, row: TableRow, bench: Benchmark, scenario: Scenario | None
) -> list[Finding]:
    """TABLE-ACCURACY of ``row`` (a ``bench`` result of ``scenario``): given, readable, within the round's bounds."""
    if "accuracy" not in checker.table.columns:
        return []
    cite = (
        bench.accuracy_cite
        or f"rules/data/{checker.round.name}.yaml benchmarks.{bench.name}.accuracy_targets_by_scenario"
    )
    if row.accuracy is None:
        return [checker.finding(row, "TABLE-ACCURACY", "accuracy", "no accuracy given", source=cite)]
    targets = bench.accuracy_targets_for(scenario)
    parsed = parse_accuracy_string(row.accuracy)
    bare = bare_accuracy(row.accuracy) if not parsed else None
    if not parsed and bare is None:
        return [
            checker.finding(
                row,
                "TABLE-ACCURACY",
                "accuracy",
                f"'{row.accuracy}' has no 'METRIC: value' pair and is not a single score",
            )
        ]
    if bare is not None:
        # endpoints rows publish the score alone: it is the benchmark's primary metric
        if not targets:
            return []
        primary = targets[0]
        scaled, how = scale_to(bare, primary.value)
        values = {primary.metric.lower(): AccuracyValue(primary.metric, scaled, how)}
        checked: tuple[AccuracyTarget, ...] = (primary,)
    else:
        values = {v.metric.lower(): v for v in parsed}
        checked = targets
    closed = checker.closed(row)
    sev = Severity.ERROR if closed else Severity.INFO
    suffix = "" if closed else " (Open: accuracy constraints do not apply, RULES_HEAD:361)"
    # an endpoints score the official checker does not hold to its target: the error is beyond it
    unchecked = closed and bare is not None and bench.name not in OFFICIAL_ENDPOINTS_ACCURACY_CHECKED
    if unchecked:
        suffix = (
            " (an MLPerf Endpoints result: the official HEAD checker does not check an endpoints result's accuracy "
            f"against its target, except {', '.join(OFFICIAL_ENDPOINTS_ACCURACY_CHECKED)}'s: CHK_HEAD_acc:108-136)"
        )
    scen = (
        f" {scenario.value}"
        if scenario is not None and scenario in bench.accuracy_targets_by_scenario
        else ""
    )
    out = []
    for target in checked:
        got = values.get(target.metric.lower())
        if got is None:
            if closed:
                out.append(
                    checker.finding(
                        row,
                        "TABLE-ACCURACY",
                        "accuracy",
                        f"no {target.metric} value (required: {target.metric} >= {target.value:g})",
                        source=cite,
                    )
                )
            continue
        if got.value < target.value:
            out.append(
                checker.finding(
                    row,
                    "TABLE-ACCURACY",
                    "accuracy",
                    f"{target.metric} {got.text} is below the {checker.round.name}{scen} threshold "
                    f"{target.value:g}{suffix}",
                    severity=sev,
                    source=target.cite or cite,
                    beyond_official=unchecked,
                )
            )
    for limit in bench.accuracy_upper_limits:
        got = values.get(limit.metric.lower())
        if got is not None and got.value > limit.value:
            gen_len = limit.metric.upper() in GENERATION_LENGTH_METRICS
            out.append(
                checker.finding(
                    row,
                    "TABLE-ACCURACY",
                    "accuracy",
                    f"{limit.metric} {got.text} is above the {checker.round.name} upper bound {limit.value:g}"
                    + (
                        " (Open: the accuracy target does not apply, but a generation length out of "
                        "bounds means the run did not use the benchmark's data set / output limits)"
                        if gen_len and not closed
                        else suffix
                    ),
                    severity=Severity.WARNING if gen_len and not closed else sev,
                    source=limit.cite or cite,
                    beyond_official=gen_len and not closed,
                )
            )
    for target in targets:
        # the lower bound of a generation length counts in Open too (the same data set / output limits)
        if closed or target.metric.upper() not in GENERATION_LENGTH_METRICS:
            continue
        got = values.get(target.metric.lower())
        if got is not None and got.value < target.value:
            out = [f for f in out if f"{target.metric} {got.text} is below" not in f.message]
            out.append(
                checker.finding(
                    row,
                    "TABLE-ACCURACY",
                    "accuracy",
                    f"{target.metric} {got.text} is below the {checker.round.name} lower bound "
                    f"{target.value:g} (Open: a generation length out of bounds means the run did not use "
                    "the benchmark's data set / output limits)",
                    severity=Severity.WARNING,
                    source=target.cite or cite,
                    beyond_official=True,
                )
            )
    return out
