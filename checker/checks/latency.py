"""Latency gates (catalogue D9-D11, D15, D16): early stopping, Server target latency, LLM TTFT/TPOT."""

from __future__ import annotations

import math

from checker.checks.context import ResultContext
from checker.checks.rule_registry import OLD, RuleInfo, official_behaviour, register
from checker.findings import Finding
from checker.parsers.mllog import DetailLog
from rules.models import Scenario

_LOWER_THE_LOAD = "lower the load (target_qps) until p99 TTFT and TPOT are below the limits"

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "LAT-EARLY-STOPPING",
        "D9",
        "early stopping not met",
        official="v4.1 and v5.1.1 only log it (HEAD fails)",
        beyond=True,
        fix="run longer (more queries) or at a lower load until LoadGen reports early stopping satisfied",
    ),
    RuleInfo(
        "LAT-SERVER-TARGET",
        "D10",
        "Server target latency above the benchmark's bound (Interactive's own where the round has one)",
        fix="do not raise target_latency above the benchmark's bound",
    ),
    RuleInfo(
        "LAT-TOKEN-LATENCIES",
        "D15",
        "use_token_latencies off for an LLM",
        source=f"{OLD}: extra_check_llm L1489",
        fix="set use_token_latencies = 1 (the round's mlperf.conf does) and report FirstTokenComplete",
    ),
    RuleInfo(
        "LAT-TOKEN-LIMITS",
        "D16",
        "no TTFT/TPOT limits for this scenario",
        source=f"{OLD}: LLM_LATENCY_LIMITS KeyError in extra_check_llm fails the result; HEAD: llm_check",
        fix="submit this benchmark only in scenarios the round defines",
    ),
    RuleInfo("LAT-TTFT", "D16", "p99 TTFT not below the limit", fix=_LOWER_THE_LOAD),
    RuleInfo("LAT-TPOT", "D16", "p99 TPOT not below the limit", fix=_LOWER_THE_LOAD),
    RuleInfo(
        "LAT-TOKEN-TARGETS",
        "-",
        "configured TTFT/TPOT target looser than the scenario's limit (LoadGen judged against the wrong bound)",
        beyond=True,
    ),
)
NS_PER_MS = 1_000_000


def _is_true(v: object) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


# what each official checker does when early stopping was not met (v4.1 L1179-1184 and v5.1.1 L1667-1672 log an ERROR
# line and go on; HEAD fails the result)
_EARLY_STOPPING_OFFICIAL = {"HEAD": "fails it as well", "v5.1.1": "only logs this", "v4.1": "only logs this"}


def latency_checks(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    out: list[Finding] = []
    bm = ctx.benchmark
    r = ctx.round
    eff = Scenario.parse(log.effective_scenario or "")
    if bm is None or eff is None:
        return out

    # D9 early stopping: the official v5.1.1 checker only logs it; the metric of these scenarios IS the
    # early-stopping estimate, so a run where it was not met has no valid metric.
    if (
        eff in r.early_stopping_scenarios
        and log.has("early_stopping_met")
        and not _is_true(log.value("early_stopping_met"))
    ):
        cite = r.early_stopping_cite or (
            "inference_rules.adoc scenario table (RULES_HEAD:140-143): 90%*/99%* early-stopping latency estimate"
        )
        source = f"{cite}; {OLD}: L1665-1672 logs only; HEAD checker fails it"
        msg = (
            f"early_stopping_met is {log.value('early_stopping_met')!r}: the {eff.value} metric (an early-stopping "
            "estimate) is not established. "
            + official_behaviour(
                r.official_checker,
                _EARLY_STOPPING_OFFICIAL,
                "the rules define the metric as the early-stopping estimate, so this tool rejects the result",
            )
        )
        out.append(
            ctx.log_finding(prefix + "LAT-EARLY-STOPPING", msg, log, rel, "early_stopping_met", source=source)
        )
    # D10 Server target latency
    # the bound of the result's scenario: an Interactive directory (LoadGen Server) has its own where the round
    # gives one (v6.1 qwen3-vl 1.5 s; HEAD performance_check.py reads latency-constraint[model][scenario])
    bound_scen = ctx.scenario if ctx.scenario is Scenario.INTERACTIVE else Scenario.SERVER
    bound = bm.target_latency_ns_for(bound_scen)
    if eff is Scenario.SERVER and bound is not None:
        tl = log.int_value("effective_target_latency_ns")
        if tl is None or tl < 0 or tl > bound:
            msg = f"effective_target_latency_ns {tl} exceeds the {ctx.mlperf_model} {bound_scen.value} bound {bound} ns"
            source = f"latency-constraint[{ctx.mlperf_model}][{bound_scen.value}]; {OLD}: L1677-1694"
            key = "effective_target_latency_ns"
            out.append(ctx.log_finding(prefix + "LAT-SERVER-TARGET", msg, log, rel, key, source=source))
    # D15 token latencies must be on
    if bm.use_token_latencies_required and not _is_true(log.value("requested_use_token_latencies")):
        key = "requested_use_token_latencies"
        msg = f"{ctx.mlperf_model} requires use_token_latencies but requested_use_token_latencies is {log.value(key)!r}"
        out.append(ctx.log_finding(prefix + "LAT-TOKEN-LATENCIES", msg, log, rel, key))
    # D16 TTFT / TPOT, keyed by the directory scenario (Interactive has stricter limits than Server)
    scen = ctx.scenario
    if bm.use_token_latencies_required and scen in (Scenario.SERVER, Scenario.INTERACTIVE) and not prefix:
        lim = bm.token_latency_limits.get(scen)
        if lim is not None:
            for kind, tkey, limit_ms in (
                ("TTFT", "requested_server_ttft_latency", lim.ttft_ms),
                ("TPOT", "requested_server_tpot_latency", lim.tpot_ms),
            ):
                target = log.float_value(tkey)
                if target is not None and target > limit_ms * NS_PER_MS:
                    msg = (
                        f"the run's {kind} target {tkey} = {target / NS_PER_MS:g} ms is looser than the "
                        f"{ctx.mlperf_model} {scen.value} limit {limit_ms:g} ms: LoadGen judged VALID against the "
                        f"wrong bound (e.g. an {scen.value} result run with another scenario's targets)"
                    )
                    source = (
                        f"{lim.cite or 'rules LLM latency table'}; mlperf.conf sets {scen.value}'s ttft/tpot_latency; "
                        "the official checkers do not compare the configured targets"
                    )
                    fix = f"run {scen.value} with the round's mlperf.conf targets for it (ttft_latency / tpot_latency)"
                    out.append(
                        ctx.log_finding("LAT-TOKEN-TARGETS", msg, log, rel, tkey, source=source, fix=fix)
                    )
    if not prefix:
        out += token_latency_findings(ctx, log, rel)
    return out


def token_latency_findings(
    ctx: ResultContext, log: DetailLog, rel: str, *, official_server_limits: bool = False
) -> list[Finding]:
    """D16 for a run log of either format: an LLM's Server or Interactive result has p99 TTFT and TPOT below the
    directory scenario's limits (Interactive's are stricter), the round defines limits for it, and the values are
    latencies at all. ``official_server_limits``: the official checker judges this format's Interactive results
    against the Server limits (HEAD, Endpoints results), so a value between the two is a difference made on purpose."""
    bm, scen = ctx.benchmark, ctx.scenario
    if (
        bm is None
        or not bm.use_token_latencies_required
        or scen not in (Scenario.SERVER, Scenario.INTERACTIVE)
    ):
        return []
    lim = bm.token_latency_limits.get(scen)
    if lim is None:
        return [
            ctx.log_finding(
                "LAT-TOKEN-LIMITS",
                f"the round defines no TTFT/TPOT limits for {ctx.mlperf_model} {scen.value}",
                log,
                rel,
                None,
            )
        ]
    server = bm.token_latency_limits.get(Scenario.SERVER)
    lenient = official_server_limits and scen is Scenario.INTERACTIVE and server is not None
    out = []
    for kind, key, limit_ms, server_ms, rule in (
        (
            "TTFT",
            "result_first_token_99.00_percentile_latency_ns",
            lim.ttft_ms,
            server.ttft_ms if server else None,
            "LAT-TTFT",
        ),
        (
            "TPOT",
            "result_time_per_output_token_99.00_percentile_ns",
            lim.tpot_ms,
            server.tpot_ms if server else None,
            "LAT-TPOT",
        ),
    ):
        v = log.float_value(key)
        # NaN fails ``v < limit``; a negative or infinite value is no latency either (PERF-VALUE says why)
        if v is None or not math.isfinite(v) or v < 0 or not v < limit_ms * NS_PER_MS:
            passes_official = (
                lenient and v is not None and server_ms is not None and v < server_ms * NS_PER_MS
            )
            shown = v if v is None or not math.isfinite(v) else f"{v / NS_PER_MS:.3f} ms"
            out.append(
                ctx.log_finding(
                    rule,
                    f"p99 {kind} {shown} ({log.label(key)}) is not a latency below the {ctx.mlperf_model} "
                    f"{scen.value} limit {limit_ms:g} ms"
                    + (
                        ". The official checker compares Interactive endpoints results with the Server limits"
                        if passes_official
                        else ""
                    ),
                    log,
                    rel,
                    key,
                    source=f"{lim.cite or 'rules LLM latency table'}; {OLD}: extra_check_llm (strict <); HEAD: llm_check",
                    beyond_official=passes_official,
                )
            )
    return out


def check_latency(ctx: ResultContext) -> list[Finding]:
    log = ctx.perf_detail()
    if log is None:
        return []
    return latency_checks(ctx, log, ctx.perf_detail_path)
