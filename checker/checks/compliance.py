"""Compliance test checks (catalogue F1-F10): the TESTxx directories, their verification files and performance logs,
TEST01's accuracy. The tests re-verified from their own logs (beyond the official checker, which reads only the
verification files) are :mod:`checker.checks.compliance_logs`.

Only for closed/network (the official checker skips open). Sets ``ctx.computed.compliance``.
"""

from __future__ import annotations

from checker.checks.compliance_logs import (
    audit_run_findings,
    test06_reverify,
    test07_reverify,
    test09_reverify,
)
from checker.checks.context import ResultContext
from checker.checks.latency import latency_checks
from checker.checks.performance import DETAIL_LOG_CASES, load_detail
from checker.checks.performance_log import detail_log_checks
from checker.checks.rule_registry import OLD, WARN, Case, RuleInfo, register
from checker.compliance.audit_run import (
    AUDIT_RUN_SAMPLES,
)
from checker.compliance.test01 import ACCURACY_FILES, delta_pct, difference_pct, first_value
from checker.compliance.test06 import (
    FIRST_TOKEN_SKIPPED,
    PASS_LINES,
)
from checker.findings import Finding, Severity
from rules.models import Scenario

TEST06_SOURCE = f"{OLD}: check_compliance_dir TEST06 L3227-3247"

# the rules this module emits (the registry: checker/checks/rule_registry.py); COMPL-DIR and COMPL-TEST-DIR cite the
# benchmark's compliance tests (their source depends on the round)
RULES = register(
    __name__,
    RuleInfo(
        "COMPL-DIR",
        "F1",
        "compliance directory missing",
        fix="run the audit tests of the benchmark and copy their output",
    ),
    RuleInfo("COMPL-TEST-DIR", "F2", "required TESTxx directory missing"),
    RuleInfo(
        "COMPL-VERIFY-PERF",
        "F4",
        "verify_performance.txt without TEST PASS",
        source=f"{OLD}: check_compliance_perf_dir L3089",
    ),
    RuleInfo(
        "COMPL-PERF-FILES",
        "F5",
        "TESTxx/performance/run_1 file list mismatch",
        source=f"{OLD}: check_compliance_perf_dir L3109-3124",
        fix="keep exactly the LoadGen summary and detail logs (accuracy log optional)",
        cases={"no-run": Case(source=f"{OLD}: L3109-3124")},
    ),
    RuleInfo("COMPL-PERF-LOG", "F3", "TESTxx performance log missing or malformed", cases=DETAIL_LOG_CASES),
    RuleInfo(
        "COMPL-TEST01-ACC",
        "F6/F7",
        "TEST01 accuracy not passed",
        source=f"{OLD}: check_compliance_acc_dir L3129-3171",
        cases={
            "no-accuracy-dir": Case(
                source=f"{OLD}: check_compliance_acc_dir L3129-3171",
                fix="copy TEST01's accuracy output (mlperf_log_accuracy.json, accuracy.txt)",
            ),
            "no-accuracy-log": Case(
                source=f"{OLD}: check_compliance_acc_dir L3129-3171",
                fix="keep TEST01's (truncated) accuracy log",
            ),
            "no-delta-files": Case(
                source=f"{OLD}: check_compliance_acc_dir L3172-3226",
                fix="run TEST01's accuracy comparison (baseline and compliance accuracy.txt)",
            ),
            "delta-metric-missing": Case(source=f"{OLD}: L3172-3226"),
            "delta": Case(
                source=f"Config.get_delta_perc; {OLD}: L3172-3226",
                fix="make the SUT's results independent of the sampled performance-mode logging",
            ),
        },
    ),
    RuleInfo(
        "COMPL-TEST06",
        "F8",
        "TEST06 verify_accuracy.txt does not pass",
        source=TEST06_SOURCE,
        fix="fix the SUT (first token / EOS / token count) and rerun TEST06",
        cases={"missing": Case(source=TEST06_SOURCE, fix="run compliance/TEST06/run_verification.py")},
    ),
    RuleInfo(
        "COMPL-VERIFY",
        "F10",
        "TEST07/TEST08/TEST09 verification file without TEST PASS (v6.x)",
        source="HEAD checker compliance_check.py (TEST07/TEST08/TEST09), catalogue F10",
    ),
    RuleInfo(
        "COMPL-TEST06-SKIPPED",
        "-",
        "TEST06 first-token check 'Skipped' outside Offline",
        WARN,
        beyond=True,
        source=f"compliance/TEST06/run_verification.py: need_first_token_check = scenario != 'Offline'; {TEST06_SOURCE} "
        "accepts Skipped",
    ),
)


def check_compliance(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    bm = ctx.benchmark
    ctx.computed.compliance = 1
    if not ctx.closed_or_network or bm is None or not bm.compliance_tests:
        return out
    cdir = ctx.compliance_dir()
    src = f"{bm.compliance_cite or 'compliance tests of the round'}; {OLD}: check_compliance_dir L3256-3319"
    if not ctx.exists_dir(cdir):
        out.append(
            ctx.finding(
                "COMPL-DIR",
                f"no compliance directory {cdir} (required: {', '.join(bm.compliance_tests)})",
                path=cdir,
                source=src,
            )
        )
        ctx.computed.compliance = 0
        return out
    for test in bm.compliance_tests:
        tdir = f"{cdir}/{test}"
        if not ctx.exists_dir(tdir):
            out.append(
                ctx.finding(
                    "COMPL-TEST-DIR",
                    f"{test} is required for {ctx.mlperf_model} but {tdir} is missing",
                    path=tdir,
                    source=src,
                    fix=f"run compliance/{test} and copy its output",
                )
            )
            continue
        if test in ("TEST01", "TEST04", "TEST05"):
            out += _perf_test(ctx, test, tdir)
        if test == "TEST01":
            out += _test01_accuracy(ctx, tdir)
        if test == "TEST06":
            out += _test06(ctx, tdir)
        if test in PASS_FILE_TESTS:
            out += _pass_file_test(ctx, test, tdir)
        if test == "TEST07":
            out += test07_reverify(ctx, tdir)
        if test == "TEST09":
            out += test09_reverify(ctx, tdir)
        if test in AUDIT_RUN_SAMPLES:
            out += audit_run_findings(ctx, test, tdir)
    if any(f.severity is Severity.ERROR for f in out):
        ctx.computed.compliance = 0
    return out


def _perf_test(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    vp = f"{tdir}/verify_performance.txt"
    tr = ctx.files.text(vp)
    if tr.text is None or "TEST PASS" not in tr.text:
        why = (
            tr.problem.message
            if tr.problem is not None and tr.text is None
            else "does not contain 'TEST PASS'"
        )
        out.append(
            ctx.finding(
                "COMPL-VERIFY-PERF",
                f"{test}: {vp} {why}" if tr.text is not None else f"{test}: {why}",
                path=vp,
                fix=f"rerun {test} until run_verification.py reports TEST PASS",
            )
        )
    run = f"{tdir}/performance/run_1"
    if not ctx.exists_dir(run):
        out.append(ctx.finding("COMPL-PERF-FILES", f"{test}: {run} is missing", path=run, case="no-run"))
        return out
    present = set(ctx.list_files(run))
    required = {"mlperf_log_summary.txt", "mlperf_log_detail.txt"}
    extra = sorted(present - required - {"mlperf_log_accuracy.json"})
    missing = sorted(required - present)
    if missing or extra:
        out.append(
            ctx.finding(
                "COMPL-PERF-FILES",
                f"{test}: {run} file list mismatch: missing {missing}, unexpected {extra}",
                path=run,
            )
        )
    rel = f"{run}/mlperf_log_detail.txt"
    if "mlperf_log_detail.txt" in present:
        log, found = load_detail(ctx, rel, "COMPL-PERF-LOG")
        out += found
        if log is not None:
            out += detail_log_checks(ctx, log, rel, prefix="COMPL-", test=test)
            out += latency_checks(ctx, log, rel, prefix="COMPL-")
    return out


# v6.x tests judged by a verification file that must say TEST PASS (catalogue F10)
PASS_FILE_TESTS = {
    "TEST07": "verify_accuracy.txt",
    "TEST08": "verify_accuracy.txt",
    "TEST09": "verify_output_len.txt",
}


def _pass_file_test(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    rel = f"{tdir}/{PASS_FILE_TESTS[test]}"
    tr = ctx.files.text(rel)
    if tr.text is not None and any("TEST PASS" in line for line in tr.text.splitlines()):
        return []
    why = (
        tr.problem.message
        if tr.text is None and tr.problem is not None
        else f"{rel} does not contain 'TEST PASS'"
    )
    return [
        ctx.finding(
            "COMPL-VERIFY",
            f"{test}: {why}",
            path=rel,
            fix=f"run compliance/{test} and keep its verification output",
        )
    ]


def _test01_accuracy(ctx: ResultContext, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    if tr.text is None:
        msg = tr.problem.message if tr.problem else f"{va} is missing"
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01: {msg}",
                path=va,
            )
        )
        return out
    acc = f"{tdir}/accuracy"
    if not ctx.exists_dir(acc):
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01: {acc} is missing",
                path=acc,
                case="no-accuracy-dir",
            )
        )
        return out
    files = set(ctx.list_files(acc))
    if any("TEST PASS" in line for line in tr.text.splitlines()):
        if "mlperf_log_accuracy.json" not in files:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {acc}/mlperf_log_accuracy.json is missing",
                    path=acc,
                    case="no-accuracy-log",
                )
            )
        return out
    return _test01_delta(ctx, va, acc, files)


def _test01_delta(ctx: ResultContext, va: str, acc: str, files: set[str]) -> list[Finding]:
    """TEST01 without TEST PASS (a non-deterministic SUT): baseline and compliance accuracy within the delta."""
    out: list[Finding] = []
    bm = ctx.benchmark
    need = set(ACCURACY_FILES)
    if not need <= files or bm is None:
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01 did not pass ({va} has no 'TEST PASS') and {acc} lacks {sorted(need - files)} for the "
                "accuracy-delta fallback",
                path=va,
                case="no-delta-files",
            )
        )
        return out
    delta = delta_pct(ctx.round.compliance_delta_pct, ctx.mlperf_model)
    pats = ctx.round.acc_patterns
    base_t = ctx.files.text(f"{acc}/baseline_accuracy.txt").text or ""
    comp_t = ctx.files.text(f"{acc}/compliance_accuracy.txt").text or ""
    for t in bm.accuracy_targets_for(ctx.scenario):
        pat = pats.get(t.metric)
        if pat is None:
            continue
        b, c = first_value(pat, base_t), first_value(pat, comp_t)
        if not b or not c:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {t.metric} missing or zero in baseline ({b}) / compliance ({c}) accuracy",
                    path=acc,
                    case="delta-metric-missing",
                )
            )
            continue
        diff = difference_pct(b, c)
        if diff > delta:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {t.metric} baseline {b} vs compliance {c} differ by {diff:.3f}% > {delta}%",
                    path=acc,
                    case="delta",
                )
            )
    return out


def _test06(ctx: ResultContext, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    if tr.text is None:
        msg = tr.problem.message if tr.problem else f"{va} is missing"
        out.append(
            ctx.finding(
                "COMPL-TEST06",
                f"TEST06: {msg}",
                path=va,
                case="missing",
            )
        )
        return out
    lines = [ln.strip() for ln in tr.text.splitlines()]
    for name, ok in PASS_LINES.items():
        if not any(ln in ok for ln in lines):
            line_no = next((i for i, ln in enumerate(lines, 1) if ln.startswith(name)), None)
            out.append(
                ctx.finding(
                    "COMPL-TEST06",
                    f"TEST06: verify_accuracy.txt does not report '{ok[0]}'",
                    path=va,
                    line=line_no,
                )
            )
    skipped = next((i for i, ln in enumerate(lines, 1) if ln == FIRST_TOKEN_SKIPPED), None)
    if (
        skipped is not None
        and ctx.scenario is not None
        and ctx.scenario.loadgen_scenario is not Scenario.OFFLINE
    ):
        out.append(
            ctx.finding(
                "COMPL-TEST06-SKIPPED",
                f"TEST06: verify_accuracy.txt says 'First token check pass: Skipped' for a {ctx.scenario.value} "
                "result; run_verification.py skips the first-token check only for --scenario Offline, so it was run "
                "with the wrong scenario. The official checker accepts 'Skipped' in every scenario",
                path=va,
                line=skipped,
                fix=f"rerun run_verification.py with --scenario {ctx.scenario.value}",
            )
        )
    out += test06_reverify(ctx, tdir)
    return out
