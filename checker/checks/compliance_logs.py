"""Compliance tests re-verified from their own logs, beyond the official checker (which reads only the verification
files): TEST06 re-run on its accuracy log, TEST07's summary against its score, threshold and accuracy log, TEST09's
mean output length re-computed (one function for both result formats), and the TEST07/TEST09 performance run against
its audit.config. The verifications themselves are :mod:`checker.compliance` (one module a test).
"""

from __future__ import annotations

from checker.checks.context import ResultContext
from checker.checks.performance import DETAIL_LOG_CASES, load_detail
from checker.checks.rule_registry import WARN, Case, RuleInfo, register
from checker.compliance.audit_run import (
    AUDIT_RUN_SAMPLES,
    AUDIT_RUN_SOURCE,
    SHORT_QSL,
    audit_run_report,
    logged_entries,
)
from checker.compliance.test06 import (
    describe_failure,
    detect_token_dtype,
    fix_for,
    screen_bytes,
    screen_text,
    token_settings_of,
    verify_test06,
)
from checker.compliance.test07 import DEFAULT_SCORE_PATTERN, parse_verify_accuracy, summary_problems
from checker.compliance.test09 import reported_mean, verify_test09
from checker.findings import Finding, Severity, UnusableInput
from checker.parsers.accuracy_log import AccuracyLog, TokenDtype, parse_accuracy_log
from rules.models import Scenario

TEST07_SOURCE = (
    "compliance/TEST07/run_verification.py (score = first --score-pattern match; pass = score >= threshold)"
)
TEST09_SOURCE = (
    "compliance/TEST09/run_verification.py (4-byte ids per sample, mean over logged samples, bounds inclusive); "
    "HEAD compliance_endpoints_check (an Endpoints result: mean_output_tokens within TEST09_LOW/TEST09_HIGH)"
)
AS_LOADGEN_WROTE_IT = "submit the log as LoadGen wrote it"
TEST06_MAX_LOG_BYTES = 64 * 1024 * 1024

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "COMPL-RULES-DATA",
        "-",
        "compliance threshold not in the rules data; not re-verified",
        WARN,
        beyond=True,
        source="rules/data: the round's data must carry the compliance thresholds (the benchmark's audit.config)",
    ),
    RuleInfo(
        "COMPL-TEST07-REVERIFY",
        "-",
        "TEST07 verify_accuracy.txt inconsistent with its score, the round's threshold or its PASS line",
        beyond=True,
        source=TEST07_SOURCE,
    ),
    RuleInfo(
        "COMPL-TEST07-LOG",
        "-",
        "TEST07 accuracy log missing or with fewer samples than the test logs",
        beyond=True,
        source=TEST07_SOURCE,
        fix="run TEST07 with its audit.config (accuracy_log_sampling_target, min_query_count, performance_issue_unique) "
        "on its data set",
        cases={
            "missing": Case(
                source=TEST07_SOURCE,
                fix="copy TEST07's mlperf_log_accuracy.json (run_verification.py copies it to TEST07/accuracy/)",
            ),
            "unparseable": Case(source=TEST07_SOURCE, fix=AS_LOADGEN_WROTE_IT),
        },
    ),
    RuleInfo(
        "COMPL-AUDIT-RUN",
        "-",
        "TEST07/TEST09 performance log missing, or it does not show the test's audit.config applied (performance mode, "
        "every sample of the test's data set issued and logged, no concatenation)",
        beyond=True,
        source=AUDIT_RUN_SOURCE,
        cases=DETAIL_LOG_CASES,
    ),
    RuleInfo(
        "COMPL-TEST09-REVERIFY",
        "F12",
        "TEST09 mean output length (re-computed) outside the round's bounds",
        source=TEST09_SOURCE,
        fix="generate outputs of the reference length (do not truncate or pad) and rerun TEST09",
        cases={
            "verify-file": Case(
                source=TEST09_SOURCE, fix="rerun run_verification.py on the submitted accuracy log"
            )
        },
    ),
    RuleInfo(
        "COMPL-TEST09-LOG",
        "-",
        "TEST09 accuracy log missing, unparseable or with fewer samples than the test logs",
        beyond=True,
        source=TEST09_SOURCE,
        fix="run TEST09 with its audit.config and submit its whole accuracy log",
        cases={
            "missing": Case(
                source=TEST09_SOURCE,
                fix="copy TEST09's mlperf_log_accuracy.json (run_verification.py copies it to TEST09/accuracy/)",
            ),
            "too-large": Case(
                source="beyond the official checker, which only reads verify_output_len.txt",
                fix="nothing to fix in the submission if TEST09 passed; verify it with "
                "compliance/TEST09/run_verification.py",
            ),
            "unparseable": Case(source=TEST09_SOURCE, fix=AS_LOADGEN_WROTE_IT),
        },
    ),
    RuleInfo(
        "COMPL-TEST06-LOG",
        "-",
        "TEST06 accuracy log missing or unparseable",
        beyond=True,
        source="LoadGen mlperf_log_accuracy.json format",
        cases={
            "missing": Case(
                source="compliance/TEST06: the accuracy log is part of the TEST06 output",
                fix="copy TEST06's mlperf_log_accuracy.json",
            )
        },
    ),
    RuleInfo(
        "COMPL-TEST06-REVERIFY",
        "-",
        "TEST06 re-run on the accuracy log fails",
        beyond=True,
        source="compliance/TEST06/run_verification.py checks, re-run on the submitted accuracy log",
    ),
    RuleInfo(
        "COMPL-TEST06-TRUNCATED",
        "-",
        "TEST06 accuracy log truncated: re-verification covers only the visible entries",
        WARN,
        beyond=True,
        source="compliance/TEST06/run_verification.py copies the whole accuracy log into TEST06/accuracy/; only the "
        "accuracy run's log is truncated (truncate_accuracy_log.py)",
        fix="submit TEST06's mlperf_log_accuracy.json as run_verification.py copied it (untruncated)",
    ),
)


def test06_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official: recheck TEST06 from its accuracy log with :mod:`checker.compliance.test06`."""
    rel = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    tree = ctx.sctx.tree
    if not ctx.exists_file(rel):
        return [
            ctx.finding(
                "COMPL-TEST06-LOG",
                f"TEST06: {rel} is missing; the verification cannot be reproduced",
                path=rel,
                case="missing",
            )
        ]
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return []  # tree hygiene / size findings report these
    scen = ctx.scenario.loadgen_scenario if ctx.scenario else Scenario.SERVER
    eos_ids, dtype = token_settings_of(ctx.benchmark)
    if dtype is TokenDtype.INT32:  # the screens read 4-byte ids
        raw, _problem = tree.read_bytes(rel)
        if raw is not None and screen_bytes(raw, scen, eos_ids):
            return []  # LoadGen's exact layout, every sample passes: a narrower form of the screen below
        del raw
        tr = ctx.files.text(rel)
        if tr.text is not None and screen_text(tr.text, scen, eos_ids):
            return []  # every sample passes the screen, which is stricter than verify_test06
    try:
        log = parse_accuracy_log(tree.abspath(rel))
    except UnusableInput as exc:
        return [
            ctx.finding(
                "COMPL-TEST06-LOG",
                f"TEST06 accuracy log cannot be parsed: {exc}",
                path=rel,
                line=exc.line,
            )
        ]
    dtype, dtype_why = detect_token_dtype(log.entries, dtype)
    res = verify_test06(log.entries, scen, eos_token_ids=eos_ids, dtype=dtype, truncated=log.truncated)
    out: list[Finding] = []
    if log.truncated:
        out.append(
            ctx.finding(
                "COMPL-TEST06-TRUNCATED",
                f"TEST06: {rel} is the truncated form (head and tail windows): the re-verification covers only the "
                f"{len(log.entries)} entries visible in it, not every logged sample; run_verification.py cannot read "
                "a truncated log at all",
                path=rel,
            )
        )
    for outcome in res.outcomes:
        if outcome.passed is False:
            first = outcome.problems[0] if outcome.problems else None
            out.append(
                ctx.finding(
                    "COMPL-TEST06-REVERIFY",
                    describe_failure(outcome, dtype_why),
                    path=rel,
                    line=first.line if first else None,
                    fix=fix_for(outcome.check, outcome.samples_checked),
                )
            )
    return out


def _rules_data(ctx: ResultContext, what: str, fields: str) -> Finding:
    return ctx.finding(
        "COMPL-RULES-DATA",
        f"{what} is not in the rules data of round {ctx.round.name} ({fields}); not re-verified",
        fix=f"add {fields} to the round's rules data",
    )


def test07_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the PASS line): the summary of verify_accuracy.txt against its own
    script output, the round's threshold and its PASS line; the accuracy log is present with every sample."""
    bm = ctx.benchmark
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    threshold = getattr(bm, "test07_accuracy_threshold", None)
    pattern = getattr(bm, "test07_score_pattern", None) or DEFAULT_SCORE_PATTERN
    if threshold is None:
        out.append(
            _rules_data(
                ctx,
                f"the TEST07 accuracy threshold of {ctx.mlperf_model}",
                "Benchmark.test07_accuracy_threshold",
            )
        )
    if tr.text is not None:
        for problem, fix in summary_problems(parse_verify_accuracy(tr.text, pattern), threshold, va):
            out.append(ctx.finding("COMPL-TEST07-REVERIFY", f"TEST07: {problem}", path=va, fix=fix))
    log = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    if not ctx.exists_file(log):
        msg = f"TEST07: {log} is missing; the score cannot be reproduced"
        out.append(ctx.finding("COMPL-TEST07-LOG", msg, path=log, case="missing"))
        return out
    need = getattr(bm, "test07_sample_count", None)
    if need is not None:
        n = _entry_count(ctx, log)
        if isinstance(n, str):
            out.append(ctx.finding("COMPL-TEST07-LOG", f"TEST07: {n}", path=log, case="unparseable"))
        elif n is not None and n < need:
            msg = f"TEST07: {log} holds {n} distinct samples (qsl_idx); TEST07 logs each of its {need} once"
            trial = _partial_test_data_set(ctx, tdir, need)
            out.append(ctx.finding("COMPL-TEST07-LOG", msg, path=log, trial=trial))
    return out


def _partial_test_data_set(ctx: ResultContext, tdir: str, need: int) -> bool:
    """The test's performance run held fewer samples in its QSL than the test's data set (a trial's partial data set),
    which is why its accuracy log holds fewer."""
    log = ctx.files.detail(f"{tdir}/performance/run_1/mlperf_log_detail.txt")[0]
    qsl = None if log is None else log.int_value("qsl_reported_total_count")
    return qsl is not None and qsl < need


def _entry_count(ctx: ResultContext, rel: str) -> int | str | None:
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return None
    try:  # distinct samples: a sample issued twice (no performance_issue_unique) is one sample scored
        return len({e.qsl_idx for e in parse_accuracy_log(tree.abspath(rel)).entries})
    except UnusableInput as exc:
        return f"the accuracy log cannot be parsed: {exc}"


def test09_bounds(ctx: ResultContext) -> tuple[float, float] | Finding:
    """The round's TEST09 mean output length bounds of the benchmark, or the COMPL-RULES-DATA finding that says they
    are missing (both result formats)."""
    bm = ctx.benchmark
    low = getattr(bm, "test09_min_output_tokens", None)
    high = getattr(bm, "test09_max_output_tokens", None)
    if low is None or high is None:
        return _rules_data(
            ctx,
            f"the TEST09 mean output length bounds of {ctx.mlperf_model}",
            "Benchmark.test09_min_output_tokens / test09_max_output_tokens",
        )
    return low, high


def test09_mean_findings(
    ctx: ResultContext,
    mean: float | None,
    samples: int | None,
    path: str,
    bounds: tuple[float, float],
    *,
    measured_as: str = "",
    beyond_official: bool = True,
) -> list[Finding]:
    """F12 COMPL-TEST09-REVERIFY for either format: the mean output length of TEST09's samples (a LoadGen result: its
    accuracy log re-read as run_verification.py reads it; an Endpoints result: the performance run's
    output_sequence_lengths, as HEAD reads it, so not beyond the official checker there) within the bounds."""
    low, high = bounds
    if mean is not None and low <= mean <= high:
        return []
    shown = "missing" if mean is None else f"{mean:.2f}"
    return [
        ctx.finding(
            "COMPL-TEST09-REVERIFY",
            f"TEST09: mean output length {shown} tokens over {samples} samples{measured_as} is outside "
            f"[{low:g}, {high:g}]",
            path=path,
            beyond_official=beyond_official,
        )
    ]


def test09_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the PASS line): the mean output length recomputed from TEST09's accuracy
    log as run_verification.py computes it, against the round's bounds."""
    bm = ctx.benchmark
    bounds = test09_bounds(ctx)
    if isinstance(bounds, Finding):
        return [bounds]
    rel = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    if not ctx.exists_file(rel):
        msg = f"TEST09: {rel} is missing; the mean output length cannot be re-computed"
        return [ctx.finding("COMPL-TEST09-LOG", msg, path=rel, case="missing")]
    log, out = _test09_log(ctx, rel)
    if log is None:
        return out
    res = verify_test09(log.entries, *bounds)
    need = getattr(bm, "test09_sample_count", None)
    if log.truncated or (need is not None and res.samples < need):
        out.append(
            ctx.finding(
                "COMPL-TEST09-LOG",
                f"TEST09: {rel} holds {res.samples} samples"
                + (" (truncated)" if log.truncated else "")
                + (f"; TEST09 logs all {need}" if need else ""),
                path=rel,
                trial=not log.truncated and need is not None and _partial_test_data_set(ctx, tdir, need),
            )
        )
    if not res.passed:
        out += test09_mean_findings(ctx, res.mean, res.samples, rel, bounds)
    vt = ctx.files.text(f"{tdir}/verify_output_len.txt").text
    shown = reported_mean(vt) if vt else None
    if shown is not None and abs(shown - res.mean) > 0.006:
        out.append(
            ctx.finding(
                "COMPL-TEST09-REVERIFY",
                f"TEST09: verify_output_len.txt reports mean {shown:g}, the accuracy log "
                f"gives {res.mean:.2f}: the verification was not made on this log",
                path=rel,
                beyond_official=True,  # the official checker reads only the PASS line
                case="verify-file",
            )
        )
    return out


def _test09_log(ctx: ResultContext, rel: str) -> tuple[AccuracyLog | None, list[Finding]]:
    """TEST09's accuracy log parsed, or why not (none: outside the tree or unsized, which tree hygiene reports; too
    large to re-read, said as a warning, never skipped silently; unparseable)."""
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None:
        return None, []
    if size > TEST06_MAX_LOG_BYTES:
        return None, [
            ctx.finding(
                "COMPL-TEST09-LOG",
                f"{rel} is {size} bytes, more than this tool re-reads ({TEST06_MAX_LOG_BYTES}); the mean output "
                "length was not re-computed",
                severity=Severity.WARNING,  # this tool's limit, not the submission's fault
                path=rel,
                case="too-large",
            )
        ]
    try:
        return parse_accuracy_log(tree.abspath(rel)), []
    except UnusableInput as exc:
        return None, [
            ctx.finding(
                "COMPL-TEST09-LOG",
                f"TEST09: the accuracy log cannot be parsed: {exc}",
                path=rel,
                line=exc.line,
                case="unparseable",
            )
        ]


def audit_run_findings(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the verification file): the test's performance-mode detail log shows that
    LoadGen read the audit.config and ran the test as it asks (:mod:`checker.compliance.audit_run`), and the accuracy log holds
    every sample LoadGen issued."""
    rel = f"{tdir}/performance/run_1/mlperf_log_detail.txt"
    fix = f"run {test} with compliance/{test}/{ctx.mlperf_model}/audit.config in LoadGen's working directory and submit "
    fix += f"its performance/run_1 logs as compliance/{test}/run_verification.py copies them"

    if not ctx.exists_file(
        rel
    ):  # the official checker does not require it (nor this tool TEST06's): a warning
        msg = (
            f"{test}: {rel} is missing: nothing shows that the test ran with its audit.config (the official checker "
            "reads only the verification file)"
        )
        return [ctx.finding("COMPL-AUDIT-RUN", msg, severity=Severity.WARNING, path=rel, fix=fix)]
    log, out = load_detail(ctx, rel, "COMPL-AUDIT-RUN")
    if log is None:
        return out
    need = getattr(ctx.benchmark, AUDIT_RUN_SAMPLES[test], None)
    rep = audit_run_report(log)
    lines = {
        "LoadGen did not log": None,
        "effective_test_mode": log.line_of("effective_test_mode"),
        "effective_accuracy_log_sampling_target": log.line_of("effective_accuracy_log_sampling_target"),
        SHORT_QSL: log.line_of("qsl_reported_total_count"),
        "effective_sample_concatenate_permutation": log.line_of("effective_sample_concatenate_permutation"),
    }
    short = (
        rep.qsl_total is not None and need is not None and rep.qsl_total < need
    )  # a trial's partial data set
    for problem in rep.problems(need):
        line = next((ln for k, ln in lines.items() if problem.startswith(k)), None)
        trial = short and problem.startswith(SHORT_QSL)
        out.append(
            ctx.finding("COMPL-AUDIT-RUN", f"{test}: {problem}", path=rel, line=line, fix=fix, trial=trial)
        )
    queries = log.int_value("generated_query_count")
    per_query = log.int_value("generated_samples_per_query")
    acc = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    logged = _logged_entries(ctx, acc)
    if queries is not None and per_query is not None and logged is not None and logged < queries * per_query:
        msg = (
            f"{test}: LoadGen issued {queries * per_query} samples (generated_query_count x "
            f"generated_samples_per_query) but {acc} holds {logged}: not every sample was logged"
        )
        line = log.line_of("generated_samples_per_query")
        out.append(ctx.finding("COMPL-AUDIT-RUN", msg, path=rel, line=line, fix=fix))
    return out


def _logged_entries(ctx: ResultContext, rel: str) -> int | None:
    """Entries of a LoadGen accuracy log (None: absent, too large, outside the tree, or the truncated form; the
    TEST07/TEST09 log findings report those)."""
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return None
    raw, _problem = tree.read_bytes(rel)
    return None if raw is None else logged_entries(raw)
