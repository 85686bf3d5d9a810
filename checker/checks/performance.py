"""The performance run of a result (catalogue D1, D2 and, beyond the official checker, its summary log, the consistency
of its numbers and the runs besides run_1); reading a LoadGen detail log (:func:`load_detail`, D19/P). The rules that
judge the run log itself (D3-D18) are :mod:`checker.checks.performance_log`.

The same checks run on the compliance TEST01/TEST04 performance logs (F3) with rule ids prefixed ``COMPL-``.
"""

from __future__ import annotations

import math
import re

from checker.checks.context import ResultContext
from checker.checks.performance_log import detail_log_checks, is_true
from checker.checks.rule_registry import OLD, WARN, Case, RuleInfo, register
from checker.findings import Finding
from checker.parsers.mllog import DetailLog, SummaryLog

LOADGEN_RULES = "LoadGen sets result_validity VALID only when every constraint flag is true (loadgen.cc: PerformanceSummary)"
AS_LOADGEN_WROTE_IT = "submit the detail log exactly as LoadGen wrote it"
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

# the rules this module emits (the registry: checker/checks/rule_registry.py)
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
)


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
        if (sval.strip().lower() in ("yes", "true")) != is_true(draw):
            differ.append((skey, sval, draw, dkey))
    return [
        ctx.finding(
            prefix + "PERF-SUMMARY-MISMATCH",
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
    if not q or not n or q <= 0 or n <= 0:
        return None
    # LoadGen counts in uint64: a product beyond that is no count of issued samples (1e308 in a log: int(1e308))
    return q * n if q * n < 2**64 else None


def run_consistency(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    """Beyond official: a VALID result agrees with its own constraint flags, its tokens/s is one the run could
    produce, its tokens per sample is the accuracy run's, and the run was not made under an audit.config."""
    out: list[Finding] = []
    if log.result_validity == "VALID":
        false = [k for k in CONSTRAINT_FLAGS if log.has(k) and not is_true(log.value(k))]
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
