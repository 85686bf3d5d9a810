"""The rules that judge one performance run log (catalogue D3-D7, D12-D14, D18 and, beyond the official checker, the
LoadGen version, overridden settings and values no real run logs): one function a check, each taking a run log of
either format (a LoadGen detail log, or an Endpoints result through
:class:`checker.parsers.endpoints.EndpointsDetailLog`), so the LoadGen and the Endpoints checks call the same rule.

``prefix``: ``COMPL-`` for a compliance test's performance log (F3), whose findings resolve to these registrations.
"""

from __future__ import annotations

import math
from functools import lru_cache

from checker.checks.context import ResultContext
from checker.checks.rule_registry import INFO, OLD, WARN, Case, RuleInfo, register
from checker.findings import Finding
from checker.parsers.loadgen_conf import loadgen_value
from checker.parsers.mllog import DetailLog
from checker.parsers.mllog_values import as_float
from checker.run_conf import measured_conf_setting
from rules.models import Benchmark, Scenario

HEAD_CHECKER = "HEAD official checker"
_FIX_LOADGEN_ERROR = (
    "find and fix the cause of the LoadGen error (an Endpoints result: the failed requests), then rerun"
)

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "PERF-VALIDITY",
        "D3",
        "result_validity is not VALID",
        source=f"LoadGen key result_validity; {OLD}: check_performance_dir L1562-1566",
        fix="fix the run until LoadGen reports VALID (min duration, min queries, latency constraints, early stopping)",
    ),
    RuleInfo(
        "PERF-LOADGEN-ERRORS",
        "D4",
        "LoadGen logged errors",
        official="trusts num_errors only; is_error records with num_errors 0 are missed (beyond)",
        source=f"LoadGen num_errors / metadata.is_error; {OLD}: find_error_in_detail_log L1338; {HEAD_CHECKER}: "
        "loadgen_errors_check (an Endpoints result's n_samples_failed)",
        fix=_FIX_LOADGEN_ERROR,
        cases={
            "is-error": Case(
                source="LoadGen metadata.is_error (catalogue P, mutation M03)", fix=_FIX_LOADGEN_ERROR
            )
        },
    ),
    RuleInfo(
        "PERF-EQUAL-ISSUE",
        "D5",
        "equal-issue mode off where required",
        source=f"{OLD}: check_performance_dir L1597-1605 (Config.requires_equal_issue)",
        fix="use the round's mlperf.conf (sample_concatenate_permutation = 1)",
    ),
    RuleInfo(
        "PERF-SAMPLE-COUNT",
        "D6",
        "performance sample count below the benchmark's",
        trial=True,
        fix="do not override performance_sample_count below the benchmark's value",
    ),
    RuleInfo(
        "PERF-SEEDS",
        "D7",
        "RNG seeds differ from the round's",
        fix="run with the round's mlperf.conf (do not override seeds)",
    ),
    RuleInfo(
        "PERF-SCENARIO",
        "D8",
        "effective_scenario unreadable",
        source=f"{OLD}: check_performance_dir reads effective_scenario",
    ),
    RuleInfo(
        "PERF-MIN-QUERIES",
        "D12",
        "min query count below the benchmark's (non early-stopping scenarios)",
        trial=True,
        fix="do not lower min_query_count",
    ),
    RuleInfo(
        "PERF-OFFLINE-SPQ",
        "D13",
        "Offline samples per query below the minimum",
        trial=True,
        source=f"rules: Offline query of at least 24,576 samples or the data set size; {OLD}: L1730-1738",
        fix="raise offline_expected_qps so the single query holds enough samples",
        cases={
            "no-minimum": Case(
                source=f"{OLD}: OFFLINE_MIN_SPQ_SINCE_V4 KeyError (L1730-1738) fails the result"
            )
        },
    ),
    RuleInfo(
        "PERF-MIN-DURATION", "D14", "min duration below 600 s", trial=True, fix="do not lower min_duration"
    ),
    RuleInfo(
        "PERF-NETWORK-SUT",
        "D18",
        "network division SUT name lacks 'Network SUT'",
        source=f"{OLD}: L1759-1772",
        fix="run with the network-mode LoadGen SUT",
    ),
    RuleInfo("PERF-LOADGEN-VERSION", "-", "LoadGen version not accepted for the round", WARN, beyond=True),
    RuleInfo(
        "PERF-SETTINGS-OVERRIDDEN",
        "-",
        "requested setting differs from the effective one",
        INFO,
        beyond=True,
        source="LoadGen requested_* vs effective_* keys",
        fix="check user.conf / audit.config: the run did not use the settings you asked for",
    ),
    RuleInfo(
        "PERF-VALUE",
        "-",
        "result, latency or num_errors that no real run can log (NaN, infinite, negative, implausibly large)",
        beyond=True,
        source="LoadGen logs results and latencies as finite non-negative numbers (latencies: int64 nanoseconds, "
        "loadgen/query_sample.h); the official checker compares such values without checking them",
        fix="submit the logs exactly as LoadGen wrote them",
    ),
)

# Bounds of PERF-VALUE (values no real LoadGen run can log):
# - LoadGen measures every latency as an int64 count of nanoseconds (loadgen/query_sample.h: QuerySampleLatency
#   is int64_t), so no latency exceeds 2**63 - 1 ns (292 years);
# - 10**12 samples, queries or tokens per second is over a million times the largest published v5.1 result
#   (713,817 samples/s, dlrm-v2 Offline, summary_results.json); LoadGen spends far more than a nanosecond of CPU
#   per completed sample, so it could not record such a rate.
MAX_LATENCY_NS = float(2**63 - 1)
MAX_RATE_PER_S = 1e12
_RATE_MARKS = ("per_sec", "per_second", "qps", "throughput")


@lru_cache(maxsize=4096)  # the same few hundred keys in every log
def _bound(key: str) -> tuple[float, str] | None:
    """The upper bound of a numeric ``result_*`` / ``early_stopping_*`` key, with its unit; None: no bound."""
    if any(m in key for m in _RATE_MARKS):
        return MAX_RATE_PER_S, "per second"
    if key.endswith("_ns") or "latency" in key or "time_to_output_token" in key:
        scale = 1e6 if key.endswith("_ms") else 1.0
        return MAX_LATENCY_NS / scale, "ms" if scale != 1.0 else "ns"
    return None


_VALUE_PREFIXES = ("result_", "early_stopping_")  # the keys value_findings judges


def _numeric(v: object) -> float | None:
    """A logged value as a number (strings such as "NaN" included); None for booleans and non-numeric text."""
    return None if isinstance(v, bool) else as_float(v)


def value_findings(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    """Beyond official: every logged result and latency is a finite, non-negative, plausible number and
    ``num_errors`` a non-negative integer (NaN, infinities and negative values otherwise pass every comparison)."""
    found: list[tuple[str, str]] = []  # (key, what is wrong with its value)
    value, keys = log.value, log.keys()
    for key in keys:
        if not key.startswith(_VALUE_PREFIXES):
            continue
        raw = value(key)
        v = _numeric(raw)
        if v is None:
            continue
        if not math.isfinite(v):
            found.append((key, f"{key} is {repr(raw)[:60]}: not a finite number; no real run logs it"))
        elif v < 0:
            found.append(
                (key, f"{key} is {repr(raw)[:60]}: negative; no real run logs a negative result or latency")
            )
        else:
            bound = _bound(key)
            if bound is not None and v > bound[0]:
                msg = (
                    f"{key} is {repr(raw)[:60]}: above {bound[0]:.3g} {bound[1]}, which no real run can reach"
                )
                found.append((key, msg))
    if log.has("num_errors"):
        raw = log.value("num_errors")
        n = _numeric(raw)
        if n is None or not math.isfinite(n) or n < 0 or n != int(n):
            found.append(
                ("num_errors", f"num_errors is {repr(raw)[:60]}: not an error count (a non-negative integer)")
            )
    return [ctx.log_finding(_rule(prefix, "PERF-VALUE"), msg, log, rel, key) for key, msg in found]


def _rule(prefix: str, rule: str) -> str:
    return f"{prefix}{rule}"


def is_true(v: object) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def loadgen_errors(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    """D4: the run logged no error (official: logged num_errors, else is_error records; an Endpoints result's
    n_samples_failed is its num_errors, HEAD loadgen_errors_check)."""
    n_err = log.num_errors()
    err_records = log.errors
    rule = _rule(prefix, "PERF-LOADGEN-ERRORS")
    if n_err:
        first = err_records[0] if err_records else None
        detail = f": {first.key} = {first.value!r}" if first else ""
        key = first.key if first else "num_errors"
        return [
            ctx.log_finding(
                rule,
                f"the run logged {n_err} error(s) ({log.label('num_errors')}){detail}",
                log,
                rel,
                key,
            )
        ]
    if err_records:
        first = err_records[0]
        return [
            ctx.log_finding(
                rule,
                f"{len(err_records)} LoadGen error record(s) although num_errors is 0: {first.key} = {first.value!r}. "
                "The official checker trusts num_errors and misses these",
                log,
                rel,
                first.key,
                beyond_official=True,  # what the official checker misses
                case="is-error",
            )
        ]
    return []


def seed_findings(
    ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "", test: str | None = None
) -> list[Finding]:
    """D7: the run used the round's RNG seeds (F12: the TEST05 seeds for a TEST05 run, where the round defines them).
    A format without a seed is exempt from it, as the official checker exempts it (an Endpoints result has no QSL
    seed: HEAD seeds_check)."""
    r = ctx.round
    seeds = log.seeds()
    want_seeds = r.test05_seeds if test == "TEST05" and r.test05_seeds is not None else r.seeds
    out = []
    for name in ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed"):
        key = f"effective_{name}"
        want = getattr(want_seeds, name)
        got = getattr(seeds, name)
        if got != want and log.carries(key):
            out.append(
                ctx.log_finding(
                    _rule(prefix, "PERF-SEEDS"),
                    f"{log.label(key)} is {got}, the round's value is {want}",
                    log,
                    rel,
                    key,
                    source=f"round seeds ({r.seeds.cite or r.name}); {OLD}: L1633-1657; {HEAD_CHECKER}: seeds_check",
                )
            )
    return out


def min_duration_findings(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    """D14: the run was configured for at least the round's minimum duration."""
    r, bm = ctx.round, ctx.benchmark
    key = "effective_min_duration_ms"
    dur = log.int_value(key)
    if bm is None or bm.min_duration_exempt or (dur is not None and dur >= r.min_duration_ms):
        return []
    return [
        ctx.log_finding(
            _rule(prefix, "PERF-MIN-DURATION"),
            f"{log.label(key)} {dur} < {r.min_duration_ms}",
            log,
            rel,
            key,
            source=f"{r.min_duration_cite or 'rules: 600 s minimum run'}; {OLD}: L1740-1750; {HEAD_CHECKER}: "
            "min_duration_check",
        )
    ]


def detail_log_checks(
    ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "", test: str | None = None
) -> list[Finding]:
    """D3-D7, D12-D14, D18 and beyond-official LoadGen checks on one performance detail log, one function each
    (``prefix``: ``COMPL-`` for a compliance test's performance log)."""
    out: list[Finding] = value_findings(ctx, log, rel, prefix=prefix)
    out += validity_findings(ctx, log, rel, prefix=prefix)
    out += loadgen_errors(ctx, log, rel, prefix=prefix)
    bm = ctx.benchmark
    if bm is None:
        return out
    out += equal_issue_findings(ctx, bm, log, rel, prefix=prefix)
    out += sample_count_findings(ctx, bm, log, rel, prefix=prefix)
    out += seed_findings(ctx, log, rel, prefix=prefix, test=test)
    eff_scen_s = log.effective_scenario
    eff_scen = Scenario.parse(eff_scen_s) if eff_scen_s else None
    if eff_scen is None:
        msg = f"effective_scenario {eff_scen_s!r} is not a LoadGen scenario"
        out.append(ctx.log_finding(_rule(prefix, "PERF-SCENARIO"), msg, log, rel, "effective_scenario"))
        return out
    out += min_query_findings(ctx, bm, eff_scen, log, rel, prefix=prefix)
    out += offline_spq_findings(ctx, bm, eff_scen, log, rel, prefix=prefix)
    out += min_duration_findings(ctx, log, rel, prefix=prefix)
    out += network_sut_findings(ctx, log, rel, prefix=prefix)
    out += loadgen_version_findings(ctx, log, rel, prefix=prefix)
    out += overridden_settings_findings(ctx, log, rel, prefix=prefix)
    return out


def validity_findings(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    """D3: LoadGen judged the run VALID."""
    validity = log.result_validity
    if validity == "VALID":
        return []
    msg = f"result_validity is {validity!r}, not 'VALID'"
    return [ctx.log_finding(_rule(prefix, "PERF-VALIDITY"), msg, log, rel, "result_validity")]


def equal_issue_findings(
    ctx: ResultContext, bm: Benchmark, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """D5: equal-issue mode where the benchmark requires it. LoadGen before 5.0 does not log the setting: the run used
    what the measurement directory's mlperf.conf and user.conf set, where the v4.1 checker reads it
    (check_measurement_dir CHK_v4.1:2444-2488)."""
    logged = log.value("effective_sample_concatenate_permutation")
    conf = measured_conf_setting(ctx, "sample_concatenate_permutation") if logged is None else None
    from_conf = conf is not None and loadgen_value(conf.entry.key, conf.entry.value, Scenario.OFFLINE).flag_on
    if not bm.equal_issue_required or is_true(logged) or from_conf:
        return []
    where = (
        ""
        if logged is not None
        else (
            f" (not logged; the measurement conf files set {conf.where})"
            if conf
            else " (not logged, and the measurement conf files do not set it)"
        )
    )
    msg = (
        f"{ctx.mlperf_model} requires equal-issue mode but effective_sample_concatenate_permutation is "
        f"{logged!r}{where}"
    )
    key = "effective_sample_concatenate_permutation"
    return [ctx.log_finding(_rule(prefix, "PERF-EQUAL-ISSUE"), msg, log, rel, key)]


def sample_count_findings(
    ctx: ResultContext, bm: Benchmark, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """D6: the performance sample count is at least the benchmark's."""
    psc = log.int_value("effective_performance_sample_count")
    if bm.performance_sample_count is None or (psc is not None and psc >= bm.performance_sample_count):
        return []
    msg = f"effective_performance_sample_count {psc} < required {bm.performance_sample_count}"
    source = f"round rules performance-sample-count[{ctx.mlperf_model}]; {OLD}: L1621-1631"
    key = "effective_performance_sample_count"
    return [ctx.log_finding(_rule(prefix, "PERF-SAMPLE-COUNT"), msg, log, rel, key, source=source)]


def min_query_findings(
    ctx: ResultContext, bm: Benchmark, eff_scen: Scenario, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """D12: the min query count of a scenario without early stopping is at least the benchmark's."""
    if eff_scen in ctx.round.early_stopping_scenarios:
        return []
    need = bm.min_query_count.get(eff_scen)
    got_q = log.int_value("effective_min_query_count")
    if need is None or (got_q is not None and got_q >= need):
        return []
    msg = f"effective_min_query_count {got_q} < required {need} for {eff_scen.value}"
    source = f"min-queries[{ctx.mlperf_model}][{eff_scen.value}]; {OLD}: L1718-1728"
    return [
        ctx.log_finding(
            _rule(prefix, "PERF-MIN-QUERIES"), msg, log, rel, "effective_min_query_count", source=source
        )
    ]


def offline_spq_findings(
    ctx: ResultContext, bm: Benchmark, eff_scen: Scenario, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """D13: an Offline query holds at least the round's minimum of samples."""
    if eff_scen is not Scenario.OFFLINE:
        return []
    rule, key = _rule(prefix, "PERF-OFFLINE-SPQ"), "effective_samples_per_query"
    need_spq = bm.offline_min_samples_per_query
    spq = log.int_value(key)
    if need_spq is None:
        msg = f"the round defines no Offline minimum samples per query for {ctx.mlperf_model}"
        return [ctx.log_finding(rule, msg, log, rel, key, case="no-minimum")]
    if spq is None or spq < need_spq:
        return [
            ctx.log_finding(rule, f"effective_samples_per_query {spq} < required {need_spq}", log, rel, key)
        ]
    return []


def network_sut_findings(ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = "") -> list[Finding]:
    """D18: a network-division run names the network SUT."""
    if ctx.rd.division != "network":
        return []
    sut = log.sut_name or ""
    if (ctx.round.structure.network_sut_name_substring or "Network SUT") in sut:
        return []
    msg = f"network division: sut_name {sut!r} does not contain 'Network SUT'"
    return [ctx.log_finding(_rule(prefix, "PERF-NETWORK-SUT"), msg, log, rel, "sut_name")]


def loadgen_version_findings(
    ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """Beyond official: the LoadGen release belongs to the round."""
    r = ctx.round
    ver = log.loadgen_version_number
    if ver is None or not r.loadgen_versions or r.accepts_loadgen(ver):
        return []
    versions = ", ".join(r.loadgen_versions)
    return [
        ctx.log_finding(
            _rule(prefix, "PERF-LOADGEN-VERSION"),
            f"LoadGen {ver} is not a release accepted for round {r.name} ({versions})",
            log,
            rel,
            "loadgen_version",
            source=r.loadgen_versions_cite or f"round {r.name} LoadGen versions",
            fix=f"rerun with the round's LoadGen ({versions})",
        )
    ]


def overridden_settings_findings(
    ctx: ResultContext, log: DetailLog, rel: str, *, prefix: str = ""
) -> list[Finding]:
    """Beyond official: the requested settings the run was meant to use are the effective ones."""
    out: list[Finding] = []
    for name in ("min_duration_ms", "min_query_count", "performance_sample_count_override"):
        req = log.value("requested_" + name)
        eff_key = "effective_" + ("performance_sample_count" if name.endswith("_override") else name)
        eff = log.value(eff_key)
        if name.endswith("_override") and (req in (None, 0, "0")):
            continue
        if name == "min_query_count" and log.effective_scenario == "Offline":
            continue  # LoadGen runs Offline as one query by design
        if req is not None and eff is not None and str(req) != str(eff):
            msg = f"requested_{name} = {req} but {eff_key} = {eff}: LoadGen replaced the requested setting"
            out.append(ctx.log_finding(_rule(prefix, "PERF-SETTINGS-OVERRIDDEN"), msg, log, rel, eff_key))
    return out
