"""The result metric (catalogue D8) and results inferred from another scenario's run (D17).

Sets ``ctx.computed["result"]`` (float, in the summary CSV's unit: ms for SingleStream/MultiStream) and
``ctx.computed["inferred"]`` (bool) for the summary row.
"""

from __future__ import annotations

from checker.checks.context import ResultContext
from checker.findings import Finding
from checker.parsers.mllog import DetailLog
from rules.models import Scenario

OLD = "official checker v5.1.1"
NS_PER_MS = 1_000_000
LATENCY_SCENARIOS = (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)

# (directory scenario, effective scenario of the log) pairs the rules allow to infer
INFERABLE = {
    (Scenario.OFFLINE, Scenario.SINGLE_STREAM),
    (Scenario.OFFLINE, Scenario.MULTI_STREAM),
    (Scenario.MULTI_STREAM, Scenario.SINGLE_STREAM),
}


def result_key(ctx: ResultContext, eff: Scenario) -> str | None:
    bm = ctx.benchmark
    if bm is not None and eff in bm.result_field_overrides:
        return bm.result_field_overrides[eff]
    return ctx.round.result_fields.get(eff)


def result_checks(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    out: list[Finding] = []
    eff = Scenario.parse(log.effective_scenario or "")
    scen = ctx.scenario
    if eff is None or scen is None:
        return out

    def add(rule: str, msg: str, key: str | None, source: str, fix: str, *, beyond: bool = False) -> None:
        out.append(
            ctx.finding(
                rule,
                msg,
                path=rel,
                line=log.line_of(key) if key else None,
                source=source,
                fix=fix,
                beyond_official=beyond,
            )
        )

    key = result_key(ctx, eff)
    value = log.float_value(key) if key else None
    if value is None:
        add(
            "PERF-RESULT",
            f"result key {key!r} for {eff.value} is missing from the detail log",
            None,
            f"RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE; {OLD}: L1573-1582 (exception: result invalid)",
            "submit the complete LoadGen detail log",
        )
        return out
    if eff in LATENCY_SCENARIOS:
        value /= NS_PER_MS
    inferred = False
    if scen is not eff:
        if scen is Scenario.INTERACTIVE:
            if eff is not Scenario.SERVER:
                add(
                    "INFER-INTERACTIVE",
                    f"an Interactive result must come from a Server run; the log is {eff.value}",
                    "effective_scenario",
                    f"{OLD}: get_inferred_result L1775",
                    "run Interactive as LoadGen Server with the <model>-interactive settings",
                )
                return out
        elif (scen, eff) in INFERABLE:
            inferred = True
            if ctx.system_type_key == "datacenter":
                add(
                    "INFER-DATACENTER",
                    f"{scen.value} result inferred from a {eff.value} run on a datacenter system; the rules allow "
                    "inferring only for edge systems",
                    "effective_scenario",
                    "inference_rules.adoc (edge scenarios: MultiStream/Offline may be inferred from SingleStream/MultiStream); "
                    "HEAD checker inferred_check; the v5.1.1 checker does not restrict it",
                    "run the scenario itself",
                    beyond=True,
                )
            if scen is Scenario.OFFLINE and eff is Scenario.SINGLE_STREAM:
                v = log.float_value("result_qps_without_loadgen_overhead")
                value = v if v is not None else 0.0
            elif scen is Scenario.OFFLINE and eff is Scenario.MULTI_STREAM:
                spq = log.float_value("effective_samples_per_query")
                mean_ns = log.float_value("result_mean_query_latency_ns") or log.float_value(
                    "result_mean_latency_ns"
                )
                value = (spq * 1000.0 / (mean_ns / NS_PER_MS)) if spq and mean_ns else 0.0
            else:  # MultiStream from SingleStream: 8 x the early-stopping latency
                es = log.float_value("early_stopping_latency_ms")
                if es is None:
                    es = log.float_value("result_99.00_percentile_latency_ns")
                value = (es * 8 / NS_PER_MS) if es else 0.0
            if not value:
                add(
                    "INFER-ZERO",
                    f"the {scen.value} result inferred from the {eff.value} run is 0",
                    "effective_scenario",
                    f"{OLD}: get_inferred_result L1775 (error if 0)",
                    "submit a run that logs the keys the inference needs",
                )
        else:
            add(
                "INFER-SCENARIO",
                f"the {scen.value} directory holds a {eff.value} run, which cannot stand for {scen.value}",
                "effective_scenario",
                f"{OLD}: check_performance_dir / get_inferred_result",
                f"put the {eff.value} logs in the {eff.value} directory",
            )
            return out
    ctx.computed["result"] = value
    ctx.computed["inferred"] = inferred
    return out


def check_result(ctx: ResultContext) -> list[Finding]:
    log = ctx.perf_detail()
    if log is None:
        return []
    return result_checks(ctx, log, ctx.perf_detail_path)
