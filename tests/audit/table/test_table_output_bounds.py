"""The table's terminal report is bounded per rule: a table of 20,000 bad rows printed 70,001 lines (16.9 MB); errors
are now listed as warnings and notes are, the first of each rule and a count of the rest (``--json`` has all)."""

from __future__ import annotations

from checker.audit.report_common import ERROR_EXAMPLES, FindingLog, finding_lines
from checker.findings import Finding, Severity


def _errors(rule: str, n: int) -> list[Finding]:
    return [Finding(rule=rule, severity=Severity.ERROR, message=f"row {i} is bad", scope=f"row {i}") for i in range(n)]


def test_errors_are_listed_up_to_a_bound_per_rule_and_counted_beyond() -> None:
    findings = _errors("TABLE-VALUE", ERROR_EXAMPLES + 70) + _errors("TABLE-UNITS", 3)
    for source in (findings, _log(findings)):
        lines = finding_lines(source, verbose=False)
        assert len(lines) == ERROR_EXAMPLES + 1 + 3
        assert lines[ERROR_EXAMPLES] == "  ... and 70 more [TABLE-VALUE] errors (--verbose lists them, --json holds all)"
        assert len(finding_lines(source, verbose=True)) == len(findings)


def _log(findings: list[Finding]) -> FindingLog:
    log = FindingLog(keep_all=True)
    for f in findings:
        log.add(f)
    return log
