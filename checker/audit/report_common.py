"""Pieces shared by the table and claim reports: severity counts, terminal lines, JSON writing."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checker.findings import EXIT_INVALID, EXIT_OK, Finding, Severity, UnusableInput
from checker.report.atomic import write_atomic
from checker.report.terminal import finding_line


def severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}


def exit_code_of(findings: Sequence[Finding]) -> int:
    return EXIT_INVALID if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK


def finding_lines(
    findings: Sequence[Finding], *, verbose: bool, info_examples: int = 2, warn_examples: int = 5
) -> list[str]:
    """Errors in full; warnings in full up to ``warn_examples`` per rule; notes grouped by rule with a few
    examples. ``verbose`` prints everything."""
    if verbose:
        return [finding_line(f) for f in findings]
    lines = [finding_line(f) for f in findings if f.severity is Severity.ERROR]
    for severity, keep, word in (
        (Severity.WARNING, warn_examples, "warnings"),
        (Severity.INFO, info_examples, "notes"),
    ):
        by_rule: dict[str, list[Finding]] = {}
        for f in findings:
            if f.severity is severity:
                by_rule.setdefault(f.rule, []).append(f)
        for rule, group in by_rule.items():
            for f in group[:keep]:
                lines.append(finding_line(f))
            if len(group) > keep:
                lines.append(
                    f"  ... and {len(group) - keep} more [{rule}] {word} (--verbose lists them, --json holds all)"
                )
    return lines


def write_json_report(out: Path, report: dict[str, Any]) -> None:
    """Write the report atomically (its schema, ``schemas/<kind>.json``, is checked by the tests: validating a
    1,448-row table report on every run would cost seconds)."""
    try:
        write_atomic(out, (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as exc:
        raise UnusableInput(f"cannot write the JSON report: {exc.strerror or exc}", str(out)) from exc
