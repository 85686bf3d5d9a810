"""The verdict of a run (``run-record.json`` ``verdict``, :class:`~loadgen_sut.record.Verdict`): the RUN-* rules that
judge each finished LoadGen test and the run as a whole. An ERROR makes the run INVALID (INCOMPLETE: a test did not
finish), a WARNING NOT_SUBMITTABLE.

The rules of the settings are registered in loadgen_sut/settings/, the checks before a run in
loadgen_sut/run/preflight.py, RUN-CLIENT-BOUND in loadgen_sut/client_diag.py, the steps after a test (scoring, the
compliance verifications) in loadgen_sut/run/steps.py and the accuracy scores' RUN-ACC-* in loadgen_sut/scoring/score.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from checker.checks.rule_registry import WARN, RuleInfo, register, registered_finding
from checker.findings import Finding
from loadgen_sut.client_diag import client_bound_finding
from loadgen_sut.record import TestRecord
from loadgen_sut.settings import PlannedSettings, RunMode
from loadgen_sut.settings.preflight import noncompliant_summary

RULES = register(
    __name__,
    # each LoadGen test
    RuleInfo("RUN-TEST-FAILED", "-", "a LoadGen test's process did not finish (the run is INCOMPLETE)"),
    RuleInfo("RUN-DEADLINE", "-", "a LoadGen test ran past its wall-clock deadline (the run is INCOMPLETE)"),
    RuleInfo("RUN-SAMPLES-FAILED", "-", "samples failed in the engine (their outputs are empty)"),
    RuleInfo(
        "RUN-SINGLE-TOKEN",
        "-",
        "single-token outputs, whose time per output token LoadGen cannot time",
        fix="--min-new-tokens 2",
    ),
    RuleInfo("RUN-COMPLETIONS", "-", "issued samples not completed exactly once"),
    RuleInfo("RUN-LOADGEN-LOG", "-", "LoadGen wrote no detail log"),
    RuleInfo(
        "RUN-LOADGEN-ERRORS", "-", "LoadGen logged errors during the test", source="mlperf_log_detail.txt error entries"
    ),
    RuleInfo(
        "RUN-LOADGEN-INVALID", "-", "LoadGen's performance result is INVALID (min duration, latency constraints, "
        "early stopping)",
        source="mlperf_log_detail.txt result_validity",
    ),
    # the run as a whole
    RuleInfo("RUN-INTERRUPTED", "-", "the run was interrupted (Ctrl-C or SIGTERM) before every test finished (INCOMPLETE)"),
    RuleInfo("RUN-TEST-NOT-RUN", "-", "a test the mode needs did not run (INCOMPLETE)"),
    RuleInfo("RUN-TRIAL", "-", "--mode submission-trial: a rehearsal of the submission flow, never a result", WARN),
    RuleInfo("RUN-SIMULATED", "-", "the simulated engine: no system was measured", WARN),
)

Printer = Callable[[str], None]


def say_findings(findings: Sequence[Finding], say: Printer) -> None:
    """One line per finding, as the run prints its preflight findings and its verdict."""
    for f in findings:
        where = f"{f.location()}: " if f.path else ""
        say(f"  {f.severity.value.upper():7} {f.rule}: {where}{f.message}")


def simulated_engine(before_run: bool) -> Finding:
    """RUN-SIMULATED: before a submission-flow run (the tree it produces is a demonstration), and in the verdict of
    every run on the simulated engine."""
    if before_run:
        return registered_finding(
            "RUN-SIMULATED",
            "SIMULATED engine: the submission tree produced is a demonstration, labelled simulated everywhere; it is "
            "not a measurement of any system",
        )
    return registered_finding("RUN-SIMULATED", "SIMULATED engine: no system was measured")


def judge_test(t: TestRecord) -> list[Finding]:
    """Verdict findings of one LoadGen test (empty = fine)."""
    if t.status != "finished":
        rule = "RUN-DEADLINE" if t.status == "deadline" else "RUN-TEST-FAILED"
        return [registered_finding(rule, f"{t.name}: {t.status}" + (f" ({t.error})" if t.error else ""))]
    out: list[Finding] = []
    if t.sut.failed:
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(t.sut.failures_by_kind.items()))
        out.append(
            registered_finding(
                "RUN-SAMPLES-FAILED", f"{t.name}: {t.sut.failed} of {t.sut.completed} samples FAILED in the engine ({kinds})"
            )
        )
    if t.sut.single_token_outputs:
        out.append(
            registered_finding(
                "RUN-SINGLE-TOKEN",
                f"{t.name}: {t.sut.single_token_outputs} single-token output(s): LoadGen cannot time their TPOT "
                "(error_runtime 'Number of tokens need to be greater than 1'); use --min-new-tokens 2",
            )
        )
    if t.sut.completed != t.sut.issued or t.sut.duplicate_completions:
        out.append(registered_finding("RUN-COMPLETIONS", f"{t.name}: {t.sut.issued} issued but {t.sut.completed} completed"))
    lgr = t.loadgen
    if lgr is None:
        out.append(registered_finding("RUN-LOADGEN-LOG", f"{t.name}: no LoadGen detail log"))
        return out
    if lgr.num_errors:
        out.append(
            registered_finding(
                "RUN-LOADGEN-ERRORS",
                f"{t.name}: LoadGen logged {lgr.num_errors} error(s): {', '.join(sorted(set(lgr.error_keys)))}",
            )
        )
    if t.name in ("performance", "find-peak"):  # the client limited the measurement (loadgen_sut/client_diag.py)
        bound = client_bound_finding(t.name, t.client, t.loadgen_settings)
        out += [bound] if bound is not None else []
    if t.name in ("performance", "find-peak") and lgr.result_validity != "VALID":
        why = [lgr.invalid_reason] if lgr.invalid_reason else []
        if lgr.min_duration_met is False:
            why.append("min duration not met")
        if lgr.perf_constraints_met is False:
            why.append("latency constraints not met")
        if lgr.early_stopping_met is False:
            why.append("early stopping not met (too few queries for the p99 bound)")
        out.append(
            registered_finding(
                "RUN-LOADGEN-INVALID",
                f"{t.name}: LoadGen result INVALID" + (f" ({'; '.join(why)})" if why else ""),
            )
        )
    return out


def run_findings(
    mode: RunMode,
    simulated: bool,
    planned: PlannedSettings,
    wanted: Sequence[str],
    tests: Sequence[TestRecord],
    interrupted: str | None,
) -> list[Finding]:
    """Verdict findings of the run as a whole (what the tests' own findings do not say): ``wanted`` names the tests
    the mode runs, ``tests`` those that ran."""
    out: list[Finding] = []
    if interrupted:
        out.append(registered_finding("RUN-INTERRUPTED", f"interrupted ({interrupted}) before every test finished"))
    ran = {t.name for t in tests}
    missing = [name for name in wanted if name not in ran]
    if missing:
        out.append(registered_finding("RUN-TEST-NOT-RUN", f"not run: {', '.join(missing)}"))
    if mode is RunMode.SUBMISSION_TRIAL:
        out.append(
            registered_finding(
                "RUN-TRIAL",
                "submission-trial mode: a rehearsal of the submission flow, never a result",
            )
        )
    if planned.non_compliant:
        out.append(noncompliant_summary(planned))
    if simulated:
        out.append(simulated_engine(before_run=False))
    return out
