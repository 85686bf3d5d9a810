"""Performance run checks (catalogue D1-D8, D12-D14, D18 and the LoadGen-log checks beyond the official checker).

The same checks run on the compliance TEST01/TEST04 performance logs (F3) with rule ids prefixed ``COMPL-``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from checker.checks.catalog import INFO, OLD, WARN, Case, RuleInfo, register
from checker.checks.context import ResultContext
from checker.findings import Finding
from checker.parsers.loadgen_conf import loadgen_value
from checker.parsers.mllog import DetailLog, SummaryLog, as_float
from checker.run_conf import measured_conf_setting
from rules.models import Benchmark, Scenario

HEAD_CHECKER = "HEAD official checker"
LOADGEN_RULES = "LoadGen sets result_validity VALID only when every constraint flag is true (loadgen.cc: PerformanceSummary)"
AS_LOADGEN_WROTE_IT = "submit the detail log exactly as LoadGen wrote it"
_FIX_LOADGEN_ERROR = (
    "find and fix the cause of the LoadGen error (an Endpoints result: the failed requests), then rerun"
)
# the failure cases of a LoadGen detail log that cannot be read (load_detail): every rule judging such a log
# (PERF-LOG, ACC-LOG-DETAIL, POWER-RANGING, COMPL-PERF-LOG, COMPL-AUDIT-RUN) registers them
DETAIL_LOG_CASES = {
    "missing": Case(fix="copy LoadGen's mlperf_log_detail.txt"),
    "no-records": Case(fix="submit LoadGen's detail log"),
    "malformed": Case(
        source=f"{OLD}: log_parser.MLPerfLog raises on a malformed line (result invalid)",
        fix="submit the log exactly as LoadGen wrote it",
    ),
    "unreadable": Case(),  # the read problem says why
}

# the rules this module emits (the registry: checker/checks/catalog.py)
RULES = register(
    __name__,
    RuleInfo(
        "PERF-RUN-DIR",
        "D1",
        "performance/run_1 missing",
        source=f"{OLD}: check_results_dir L2674",
        fix="copy the performance run's LoadGen logs into performance/run_1",
    ),
    RuleInfo(
        "PERF-FILES",
        "D2",
        "run_1 file list mismatch",
        source=f"{OLD}: check_results_dir L2681-2697 (files_diff)",
    ),
    RuleInfo(
        "PERF-LOG",
        "D19/P",
        "detail log missing, unreadable or with malformed :::MLLOG lines",
        cases=DETAIL_LOG_CASES,
    ),
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
        "PERF-SUMMARY-MISMATCH",
        "-",
        "summary log disagrees with the detail log",
        beyond=True,
        source="LoadGen writes both logs from one run; a mismatch means they come from different runs or were edited",
        fix="submit both logs of the same run, unedited",
    ),
    RuleInfo(
        "PERF-SUMMARY-LOG",
        "-",
        "summary log unreadable or not a file",
        WARN,
        beyond=True,
        source="beyond the official checker, which never reads mlperf_log_summary.txt",
        fix="submit the mlperf_log_summary.txt LoadGen wrote in the same run",
    ),
    RuleInfo(
        "PERF-CONSTRAINT-FLAGS",
        "-",
        "result_validity VALID while a LoadGen constraint flag is false",
        beyond=True,
        source=LOADGEN_RULES,
        fix=AS_LOADGEN_WROTE_IT,
    ),
    RuleInfo(
        "PERF-TOKENS-RATE",
        "-",
        "tokens/s above samples/s x the benchmark's max_new_tokens",
        beyond=True,
        fix=AS_LOADGEN_WROTE_IT,
    ),
    RuleInfo(
        "PERF-TOKENS-PER-SAMPLE",
        "-",
        "performance tokens per sample differs from the accuracy run's (accuracy.txt tokens_per_sample) beyond "
        "sampling error",
        beyond=True,
        source="inference_rules.adoc: the performance and accuracy runs use the same SUT and generation settings over "
        "the same data set",
        fix="make the performance run generate as the accuracy run does (same max tokens, same stopping)",
    ),
    RuleInfo(
        "PERF-AUDIT-CONFIG",
        "-",
        "performance run made under an audit.config",
        WARN,
        beyond=True,
        source="compliance/TESTxx: audit.config is placed for the audit test only",
        fix="remove audit.config from the working directory and rerun the performance run",
    ),
    RuleInfo(
        "PERF-EXTRA-RUN",
        "-",
        "performance/ holds run_N besides run_1",
        WARN,
        beyond=True,
        source="v5.x submissions keep one performance run (run_1) per result (submission_checker.py reads run_1)",
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


def run_dir_checks(ctx: ResultContext) -> list[Finding]:
    """D1, D2: run_1 exists and holds exactly the expected files."""
    out: list[Finding] = []
    perf = ctx.rd.performance_dir
    if not ctx.exists_dir(perf):
        out.append(
            ctx.finding(
                "PERF-RUN-DIR",
                f"{perf} is missing",
                path=perf,
            )
        )
        return out
    st = ctx.round.structure
    required = set(st.performance_run_files)
    if ctx.has_power:
        required.add("spl.txt")
    present = set(ctx.list_files(perf))
    missing = sorted(required - present)
    extra = sorted(present - required - set(st.performance_optional_files))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {missing}")
        if extra:
            parts.append(f"unexpected {extra}")
        out.append(
            ctx.finding(
                "PERF-FILES",
                f"{perf} file list mismatch: {'; '.join(parts)}",
                path=perf,
                fix=f"run_1 must hold {sorted(required)} (optional: {sorted(st.performance_optional_files)})",
            )
        )
    return out


def load_detail(ctx: ResultContext, rel: str, rule: str) -> tuple[DetailLog | None, list[Finding]]:
    """The detail log at ``rel``, or the findings of ``rule`` (one registering :data:`DETAIL_LOG_CASES`) saying why
    there is none; malformed lines are findings too."""
    log, problem = ctx.files.detail(rel)
    if log is None:
        assert problem is not None
        if problem.kind == "missing":
            return None, [ctx.finding(rule, f"{rel} is missing", path=rel, case="missing")]
        return None, [ctx.problem(rule, problem, case="unreadable")]
    out = malformed_findings(ctx, log, rel, rule)
    if not log.keys():
        out.append(ctx.finding(rule, f"{rel} holds no :::MLLOG records", path=rel, case="no-records"))
        return None, out
    return log, out


def malformed_findings(
    ctx: ResultContext, log: DetailLog, rel: str, rule: str, skip: frozenset[int] = frozenset()
) -> list[Finding]:
    """One finding per malformed :::MLLOG line (lines in ``skip`` already reported)."""
    return [
        ctx.finding(
            rule,
            f"malformed :::MLLOG line: {p.message}",
            path=rel,
            line=p.line,
            case="malformed",
        )
        for p in log.problems
        if p.line not in skip
    ]


def _is_true(v: object) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


# ---- rules that judge a run log of either format (a LoadGen detail log, or an Endpoints result through
# checker.parsers.endpoints.EndpointsDetailLog): one function each, called by both checks


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
    if not bm.equal_issue_required or _is_true(logged) or from_conf:
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


def summary_vs_detail(
    ctx: ResultContext, log: DetailLog, summary: SummaryLog | None, summary_rel: str, *, prefix: str = ""
) -> list[Finding]:
    """Beyond official: the human-readable summary must agree with the detail log the checker reads."""
    if summary is None:
        return []
    differ: list[
        tuple[str, object, object, str | None]
    ] = []  # (summary line, its value, the detail log's, key)
    pairs = [
        ("Result is", log.result_validity),
        ("Scenario", log.effective_scenario),
    ]
    for name in (
        "qsl_rng_seed",
        "sample_index_rng_seed",
        "schedule_rng_seed",
        "min_duration (ms)",
        "min_query_count",
    ):
        key = name.replace(" (ms)", "_ms")
        pairs.append((name, log.str_value("effective_" + key)))
    for skey, dval in pairs:
        sval = summary.value(skey)
        if sval is None or dval is None:
            continue
        if str(sval).strip() != str(dval).strip():
            differ.append((skey, sval, dval, None))
    for skey, dkey in summary_number_keys(log.effective_scenario):
        sval = summary.value(skey)
        dnum = log.float_value(dkey)
        if sval is None or dnum is None:
            continue
        if not _same_number(sval, dnum):
            differ.append((skey, sval, log.value(dkey), dkey))
    for skey, dkey in SUMMARY_FLAGS:
        sval = summary.value(skey)
        draw = log.value(dkey)
        if sval is None or draw is None:
            continue
        if (sval.strip().lower() in ("yes", "true")) != _is_true(draw):
            differ.append((skey, sval, draw, dkey))
    return [
        ctx.finding(
            _rule(prefix, "PERF-SUMMARY-MISMATCH"),
            f"mlperf_log_summary.txt says {skey} = {sval!r} but the detail log says {dval!r}"
            + (f" ({dkey})" if dkey else ""),
            path=summary_rel,
            line=summary.line_of(skey),
        )
        for skey, sval, dval, dkey in differ
    ]


# summary lines that print a detail-log number (LoadGen rounds them in the summary)
SUMMARY_NUMBERS = (
    ("Samples per second", "result_samples_per_second"),
    ("Tokens per second", "result_tokens_per_second"),
    ("Completed samples per second", "result_completed_samples_per_sec"),
    ("Scheduled samples per second", "result_scheduled_samples_per_sec"),
    ("Completed tokens per second", "result_completed_tokens_per_second"),
    ("target_qps", "effective_target_qps"),
    ("99.00 percentile first token latency (ns)", "result_first_token_99.00_percentile_latency_ns"),
    ("99.00 percentile time to output token (ns)", "result_time_per_output_token_99.00_percentile_ns"),
)
# The "Additional Stats" latency lines. LoadGen prints them per sample, except in MultiStream, where the section is
# headed "Per-query latency:" and prints the query latencies, which the detail log keeps as
# result_<p>_percentile_per_query_latency_ns / result_{min,max,mean}_query_latency_ns (loadgen/results.cc v5.1.1
# PerformanceSummary::LogSummary L567-589 and LogDetail's reportPerQueryLatencies L717-726).
_LATENCY_LINES = ("Min", "Max", "Mean", "50.00", "90.00", "95.00", "97.00", "99.00", "99.90")


def summary_number_keys(scenario: str | None) -> tuple[tuple[str, str], ...]:
    """(summary line, detail-log key) of every number both logs print, for a run of ``scenario``."""
    per_query = scenario == "MultiStream"
    lines = []
    for name in _LATENCY_LINES:
        if name[0].isdigit():
            skey = f"{name} percentile latency (ns)"
            dkey = f"result_{name}_percentile_{'per_query_' if per_query else ''}latency_ns"
        else:
            skey = f"{name} latency (ns)"
            dkey = f"result_{name.lower()}_{'query_' if per_query else ''}latency_ns"
        lines.append((skey, dkey))
    return SUMMARY_NUMBERS + tuple(lines)


# the summary's "... satisfied" lines and the detail log's flags
SUMMARY_FLAGS = (
    ("Performance constraints satisfied", "result_perf_constraints_met"),
    ("Min duration satisfied", "result_min_duration_met"),
    ("Min queries satisfied", "result_min_queries_met"),
    ("Early stopping satisfied", "early_stopping_met"),
)


def _same_number(shown: str, value: float) -> bool:
    """``shown`` (the summary's rounded print) is ``value`` rounded: within half a unit of its last digit, or 1e-5
    relative (the detail log itself keeps about six significant digits)."""
    try:
        s = float(shown.strip())
    except ValueError:
        return False
    if not (math.isfinite(s) and math.isfinite(value)):
        return s == value or (math.isnan(s) and math.isnan(value))
    digits = shown.strip().partition(".")[2]
    decimals = len(digits) if digits.isdigit() else 0
    return abs(s - value) <= max(0.51 * 10.0**-decimals, 1e-5 * abs(value))


def check_performance(ctx: ResultContext) -> list[Finding]:
    out = run_dir_checks(ctx)
    if not ctx.exists_dir(ctx.rd.performance_dir):
        return out
    log, found = load_detail(ctx, ctx.perf_detail_path, "PERF-LOG")
    out += found
    if log is None:
        return out
    reported = frozenset(p.line for p in log.problems)
    out += detail_log_checks(ctx, log, ctx.perf_detail_path)
    # records decoded only now (the result and latency values) whose JSON is broken: malformed lines too
    out += malformed_findings(ctx, log, ctx.perf_detail_path, "PERF-LOG", reported)
    srel = f"{ctx.rd.performance_dir}/mlperf_log_summary.txt"
    summary, problem = ctx.files.summary(srel)
    if problem is not None and problem.kind != "missing":  # a missing file is PERF-FILES
        out.append(ctx.problem("PERF-SUMMARY-LOG", problem))
    out += summary_vs_detail(ctx, log, summary, srel)
    out += run_consistency(ctx, log, ctx.perf_detail_path)
    out += extra_run_findings(ctx)
    return out


CONSTRAINT_FLAGS = ("result_perf_constraints_met", "result_min_duration_met", "result_min_queries_met")
# Performance vs accuracy tokens per sample: both runs draw from the same data set with the same generation settings,
# so the performance run's mean output length is the accuracy run's up to sampling error and run-to-run variation.
# The bound is 4 standard errors of a mean of n samples whose lengths vary by up to 100% (coefficient of variation
# 1, above the reference data sets'), and never below 10%: over the 356 published v5.1 LLM results whose accuracy.txt
# prints tokens_per_sample, the ratio lies within 0.977-1.012.
TOKENS_PER_SAMPLE_MIN_TOLERANCE = 0.10
TOKENS_PER_SAMPLE_SIGMAS = 4.0
ACC_TOKENS_RE = re.compile(r"""['"]tokens_per_sample['"]\s*:\s*['"]?([0-9.]+)""")


def _tokens_rate(log: DetailLog) -> tuple[str, float, str, float] | None:
    """(tokens key, tokens/s, samples key, samples/s) of a run that logs both."""
    for tkey, skey in (
        ("result_completed_tokens_per_second", "result_completed_samples_per_sec"),
        ("result_tokens_per_second", "result_samples_per_second"),
    ):
        t, n = log.float_value(tkey), log.float_value(skey)
        if t is not None and n is not None and math.isfinite(t) and math.isfinite(n) and n > 0:
            return tkey, t, skey, n
    return None


def _issued_samples(log: DetailLog) -> int | None:
    """The samples a performance run measured: result_query_count x the samples per query LoadGen generated
    (LoadGen 4.x logs an Offline run's generated_query_count as the queries it generated, of which it issues one)."""
    q, n = log.int_value("result_query_count"), log.int_value("generated_samples_per_query")
    return q * n if q and n and q > 0 and n > 0 else None


def run_consistency(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    """Beyond official: a VALID result agrees with its own constraint flags, its tokens/s is one the run could
    produce, its tokens per sample is the accuracy run's, and the run was not made under an audit.config."""
    out: list[Finding] = []
    if log.result_validity == "VALID":
        false = [k for k in CONSTRAINT_FLAGS if log.has(k) and not _is_true(log.value(k))]
        if false:
            out.append(
                ctx.log_finding(
                    "PERF-CONSTRAINT-FLAGS",
                    f"result_validity is VALID but {', '.join(false)} "
                    f"{'is' if len(false) == 1 else 'are'} false: LoadGen never writes that, the log was edited",
                    log,
                    rel,
                    false[0],
                )
            )
    bm = ctx.benchmark
    rate = _tokens_rate(log)
    if bm is not None and rate is not None:
        tkey, tokens, skey, samples = rate
        cap = bm.max_new_tokens_performance or bm.max_new_tokens
        if cap and tokens > samples * cap * 1.01:
            out.append(
                ctx.log_finding(
                    "PERF-TOKENS-RATE",
                    f"{tkey} = {tokens:g} is more than {skey} {samples:g} x {cap} (the {ctx.mlperf_model} "
                    f"max_new_tokens): no run can produce {tokens / samples:.1f} tokens per sample",
                    log,
                    rel,
                    tkey,
                    source=f"rules: {ctx.mlperf_model} generates at most max_new_tokens = {cap} tokens per sample",
                )
            )
        acc = ctx.files.text(f"{ctx.rd.accuracy_dir}/accuracy.txt").text
        found = ACC_TOKENS_RE.findall(acc) if acc else []
        try:
            acc_tps = float(found[-1]) if found else None
        except ValueError:
            acc_tps = None
        perf_tps = tokens / samples
        n = _issued_samples(log)
        tol = max(TOKENS_PER_SAMPLE_MIN_TOLERANCE, TOKENS_PER_SAMPLE_SIGMAS / math.sqrt(n) if n else 1.0)
        if acc_tps and abs(perf_tps / acc_tps - 1.0) > tol:
            out.append(
                ctx.log_finding(
                    "PERF-TOKENS-PER-SAMPLE",
                    f"the performance run produced {perf_tps:.1f} tokens per sample ({tkey} / {skey}) but the "
                    f"accuracy run {acc_tps:g} (accuracy.txt tokens_per_sample): {perf_tps / acc_tps:.2f}x, beyond the "
                    f"{tol:.0%} that sampling {n or 'an unknown number of'} samples allows, so the two runs did not "
                    "generate the same outputs, or a rate was edited",
                    log,
                    rel,
                    tkey,
                )
            )
    for rec in log.records("warning_generic_message") + log.records("generic_message"):
        if isinstance(rec.value, str) and "Found Audit Config file" in rec.value:
            out.append(
                ctx.finding(
                    "PERF-AUDIT-CONFIG",
                    f"LoadGen found an audit.config in the performance run ({rec.value!r}): the result may be a "
                    "compliance run's, made with the audit test's settings",
                    path=rel,
                    line=rec.line,
                )
            )
            break
    return out


def extra_run_findings(ctx: ResultContext) -> list[Finding]:
    """Beyond official: performance/ holds more runs than run_1 (the official checker reads run_1 only)."""
    base = ctx.rd.performance_dir.rsplit("/", 1)[0]
    extra = sorted(d for d in ctx.sctx.sub.list_dirs(base) if d.startswith("run_") and d != "run_1")
    if not extra:
        return []
    return [
        ctx.finding(
            "PERF-EXTRA-RUN",
            f"{base} holds {', '.join(extra)} besides run_1: the checkers read run_1 only, so the other runs are "
            "not checked and a reader may take one of them for the result",
            path=base,
            fix=f"remove {', '.join(extra)} (keep only the run the result is taken from, as run_1)",
        )
    ]
