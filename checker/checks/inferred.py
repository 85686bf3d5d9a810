"""The result metric (catalogue D8) and results inferred from another scenario's run (D17): the findings.

The value itself is computed by :mod:`checker.result_value` (shared with ``inference-audit table --tree``).

Sets ``ctx.computed.result`` (float, in the summary CSV's unit: ms for SingleStream/MultiStream) and
``ctx.computed.inferred`` (bool) for the summary row.
"""

from __future__ import annotations

from checker.checks.context import ResultContext
from checker.checks.rule_registry import OLD, RuleInfo, register
from checker.findings import Finding
from checker.parsers.mllog import DetailLog
from checker.result_value import ResultStatus, compute_result

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "PERF-RESULT",
        "D8",
        "the result key is missing",
        source=f"RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE; {OLD}: L1573-1582 (exception: result invalid)",
        fix="submit the complete LoadGen detail log",
    ),
    RuleInfo(
        "INFER-SCENARIO",
        "D17",
        "the directory holds a run of a scenario that cannot stand for it",
        source=f"{OLD}: check_performance_dir / get_inferred_result",
    ),
    RuleInfo(
        "INFER-INTERACTIVE",
        "D17",
        "Interactive result not from a Server run",
        source=f"{OLD}: get_inferred_result L1775",
        fix="run Interactive as LoadGen Server with the <model>-interactive settings",
    ),
    RuleInfo(
        "INFER-ZERO",
        "D17",
        "inferred result is 0",
        source=f"{OLD}: get_inferred_result L1775 (error if 0)",
        fix="submit a run that logs the keys the inference needs",
    ),
    RuleInfo(
        "INFER-DATACENTER",
        "D17",
        "inferred result on a datacenter system",
        official="v5.1.1 allows it; HEAD and the rules restrict inference to edge",
        beyond=True,
        source="inference_rules.adoc (edge scenarios: MultiStream/Offline may be inferred from SingleStream/MultiStream); "
        "HEAD checker inferred_check; the v5.1.1 checker does not restrict it",
        fix="run the scenario itself",
    ),
)


def result_checks(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    out: list[Finding] = []
    scen = ctx.scenario
    if scen is None:
        return out
    rv = compute_result(log, ctx.round, ctx.benchmark, scen)
    eff = rv.effective
    if eff is None:
        return out
    if rv.status in (ResultStatus.NO_RESULT_KEY, ResultStatus.MISSING_VALUE):
        msg = f"result key {rv.key!r} for {eff.value} is missing from the detail log"
        out.append(ctx.log_finding("PERF-RESULT", msg, log, rel, None))
        return out
    if rv.status is ResultStatus.INTERACTIVE_NOT_SERVER:
        msg = f"an Interactive result must come from a Server run; the log is {eff.value}"
        out.append(ctx.log_finding("INFER-INTERACTIVE", msg, log, rel, "effective_scenario"))
        return out
    if rv.status is ResultStatus.NOT_INFERABLE:
        msg = f"the {scen.value} directory holds a {eff.value} run, which cannot stand for {scen.value}"
        fix = f"put the {eff.value} logs in the {eff.value} directory"
        out.append(ctx.log_finding("INFER-SCENARIO", msg, log, rel, "effective_scenario", fix=fix))
        return out
    value = rv.value or 0.0
    if rv.inferred:
        if ctx.system_type_key == "datacenter":
            msg = (
                f"{scen.value} result inferred from a {eff.value} run on a datacenter system; the rules allow "
                "inferring only for edge systems"
            )
            out.append(ctx.log_finding("INFER-DATACENTER", msg, log, rel, "effective_scenario"))
        if not value:
            msg = f"the {scen.value} result inferred from the {eff.value} run is 0"
            out.append(ctx.log_finding("INFER-ZERO", msg, log, rel, "effective_scenario"))
    ctx.computed.result = value
    ctx.computed.inferred = rv.inferred
    return out


def check_result(ctx: ResultContext) -> list[Finding]:
    log = ctx.perf_detail()
    if log is None:
        return []
    return result_checks(ctx, log, ctx.perf_detail_path)
