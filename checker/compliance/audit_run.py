"""What a compliance test's performance-mode detail log shows about its ``audit.config`` (TEST07, TEST09).

TEST07 and TEST09 are performance-mode LoadGen runs with the benchmark's ``audit.config`` in LoadGen's working
directory (``compliance/TEST07/<benchmark>/audit.config``, ``compliance/TEST09/<benchmark>/audit.config``). LoadGen
says in ``mlperf_log_detail.txt`` that it read one (``Found Audit Config file (audit.config). Overriding TestSettings
from audit.config file.``, loadgen.cc ``StartTest``) and logs the settings it then ran with (``requested_*`` after the
audit.config, ``effective_*`` after its own adjustments). :func:`audit_run_report` reads those;
:func:`audit_run_problems` says, in words, how they fall short of what the test needs:

- the audit.config was applied (the message) and the run was a performance-mode run (``effective_test_mode``);
- every sample is logged: ``effective_accuracy_log_sampling_target`` at least the test's sample count (the
  audit.config files: "set to a value >= total dataset size");
- sample concatenation off (``sample_concatenate_permutation = 0`` in every TEST07/TEST09 audit.config; gpt-oss-120b's
  mlperf.conf turns it on);
- the QSL was the test's data set: ``qsl_reported_total_count`` is the test's sample count (TEST07 of gpt-oss-120b
  runs on the 990-sample GPQA compliance set, TEST09 on the 6396-sample performance set).

The sample counts come from the rules data (``Benchmark.test07_sample_count`` / ``test09_sample_count``).
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.parsers.accuracy_log import TRUNCATE_SEPARATOR, TRUNCATE_SEPARATOR_CRLF
from checker.parsers.mllog import DetailLog

# the start of the problem that says the QSL was not the test's data set (the compliance check marks a smaller one
# as a trial's partial data set)
SHORT_QSL = "the QSL held"
AUDIT_CONFIG_MESSAGE = "Found Audit Config file (audit.config)"  # loadgen.cc StartTest, logged as a warning
PERFORMANCE_MODE = "PerformanceOnly"


@dataclass(frozen=True, slots=True)
class AuditRunReport:
    """The settings a compliance test's detail log shows (None: not logged)."""

    applied: bool  # LoadGen logged that it read an audit.config
    applied_line: int | None
    test_mode: str | None  # effective_test_mode
    sampling_target: int | None  # effective_accuracy_log_sampling_target
    min_query_count: int | None  # requested_min_query_count (Offline's effective value is always 1)
    min_duration_ms: int | None  # effective_min_duration_ms
    issue_unique: bool | None  # effective_performance_issue_unique
    concatenate: bool | None  # effective_sample_concatenate_permutation
    qsl_total: int | None  # qsl_reported_total_count: the data set's size as the SUT reported it
    performance_sample_count: int | None  # effective_performance_sample_count

    def problems(self, sample_count: int | None) -> list[str]:
        return audit_run_problems(self, sample_count)


def audit_run_report(log: DetailLog) -> AuditRunReport:
    applied_line = None
    for rec in log.records("warning_generic_message") + log.records("generic_message"):
        if isinstance(rec.value, str) and AUDIT_CONFIG_MESSAGE in rec.value:
            applied_line = rec.line
            break
    return AuditRunReport(
        applied=applied_line is not None,
        applied_line=applied_line,
        test_mode=log.effective_test_mode,
        sampling_target=log.int_value("effective_accuracy_log_sampling_target"),
        min_query_count=log.int_value("requested_min_query_count"),
        min_duration_ms=log.int_value("effective_min_duration_ms"),
        issue_unique=log.bool_value("effective_performance_issue_unique"),
        concatenate=log.bool_value("effective_sample_concatenate_permutation"),
        qsl_total=log.int_value("qsl_reported_total_count"),
        performance_sample_count=log.int_value("effective_performance_sample_count"),
    )


# how the problems that make the run not the test at all begin (no audit.config read, not a performance run)
_NOT_THE_TEST = ("LoadGen did not log", "effective_test_mode is")


def makes_it_not_the_test(problem: str) -> bool:
    """Whether a problem of :func:`audit_run_problems` means the run is not the compliance test at all (rather than the
    test on another data set or with another sampling target)."""
    return problem.startswith(_NOT_THE_TEST)


def audit_run_problems(report: AuditRunReport, sample_count: int | None) -> list[str]:
    """What keeps the run from being the compliance test (empty: nothing). ``sample_count``: the test's data set size
    from the rules data (None: the sampling target and QSL size are not judged)."""
    out: list[str] = []
    if not report.applied:
        out.append(f"LoadGen did not log '{AUDIT_CONFIG_MESSAGE}': it ran without the test's audit.config")
    if report.test_mode != PERFORMANCE_MODE:
        out.append(f"effective_test_mode is {report.test_mode!r}, not {PERFORMANCE_MODE!r} (the audit.config's mode = 2)")
    if sample_count is not None:
        if report.sampling_target is None or report.sampling_target < sample_count:
            out.append(
                f"effective_accuracy_log_sampling_target is {report.sampling_target}: below the test's {sample_count} "
                "samples, not every sample is logged"
            )
        if report.qsl_total is not None and report.qsl_total != sample_count:
            out.append(
                f"{SHORT_QSL} {report.qsl_total} samples (qsl_reported_total_count); the test's data set has "
                f"{sample_count}"
            )
    if report.concatenate:
        out.append("effective_sample_concatenate_permutation is true; the audit.config sets it to 0")
    return out


# the rules-data field with each test's data set size (the audit.config's min_query_count)
AUDIT_RUN_SAMPLES = {"TEST07": "test07_sample_count", "TEST09": "test09_sample_count"}
AUDIT_RUN_SOURCE = (
    "compliance/TEST07/README.md, compliance/TEST09/README.md: 'Verify that audit.config was properly read by checking "
    "mlperf_log_detail.txt'; the audit.config files: mode = 2, accuracy_log_sampling_target >= the data set size "
    "('Log ALL samples'), sample_concatenate_permutation = 0; the verification copies performance/run_1 into the "
    "submission ('These files must be submitted as part of the compliance audit trail')"
)


def logged_entries(raw: bytes) -> int | None:
    """Entries of a LoadGen accuracy log's bytes, counted by their ``"qsl_idx"`` keys (None: the truncated form)."""
    if TRUNCATE_SEPARATOR.encode() in raw or TRUNCATE_SEPARATOR_CRLF.encode() in raw:
        return None
    return raw.count(b'"qsl_idx"')
