"""Pieces shared by the table and claim reports: severity counts, terminal lines, JSON writing."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from checker.findings import EXIT_INVALID, EXIT_OK, Finding, Severity, UnusableInput, rule_matches
from checker.report.atomic import write_atomic
from checker.report.terminal import finding_line

WARN_EXAMPLES = 5  # warnings printed per rule without --verbose
INFO_EXAMPLES = 2  # notes printed per rule without --verbose


class FindingLog:
    """Findings in the order they were added, after ``--select`` / ``--ignore``.

    With ``keep_all`` it holds every finding (what ``--json`` and ``--verbose`` report). Without, it holds what
    the terminal summary prints, every error and the first warnings and notes of each rule, and counts the rest
    (how a 10^6-row table is checked in bounded memory; the printed report and the exit code are the same).
    """

    def __init__(
        self,
        *,
        keep_all: bool = True,
        select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        warn_examples: int = WARN_EXAMPLES,
        info_examples: int = INFO_EXAMPLES,
    ) -> None:
        self.keep_all = keep_all
        self.select = tuple(select)
        self.ignore = tuple(ignore)
        self._keep = {Severity.ERROR: None, Severity.WARNING: warn_examples, Severity.INFO: info_examples}
        self.kept: list[Finding] = []
        self.totals: Counter[tuple[Severity, str]] = Counter()  # (severity, rule) -> findings added

    def new(self) -> FindingLog:
        """An empty log that keeps what this one keeps (to fill apart and :meth:`extend` this one with)."""
        keep = self._keep
        return FindingLog(
            keep_all=self.keep_all,
            select=self.select,
            ignore=self.ignore,
            warn_examples=keep[Severity.WARNING] or 0,
            info_examples=keep[Severity.INFO] or 0,
        )

    def add(self, f: Finding) -> None:
        if self.select and not rule_matches(f.rule, self.select):
            return
        if self.ignore and rule_matches(f.rule, self.ignore):
            return
        key = (f.severity, f.rule)
        self.totals[key] += 1
        keep = self._keep[f.severity]
        if self.keep_all or keep is None or self.totals[key] <= keep:
            self.kept.append(f)

    def extend(self, findings: Iterable[Finding] | FindingLog) -> None:
        """Add ``findings`` after those held; another log's uncounted remainder comes after its kept findings
        of the same rule, so the first ones of each rule stay the first ones."""
        if isinstance(findings, FindingLog):
            shown = Counter((f.severity, f.rule) for f in findings.kept)
            for f in findings.kept:
                self.add(f)
            for key, total in findings.totals.items():
                self.totals[key] += total - shown[key]
            return
        for f in findings:
            self.add(f)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.kept)

    def __len__(self) -> int:
        return sum(self.totals.values())

    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter()
        for (severity, _), n in self.totals.items():
            c[severity.value] += n
        return {s.value: c.get(s.value, 0) for s in Severity}


def severity_counts(findings: Sequence[Finding] | FindingLog) -> dict[str, int]:
    if isinstance(findings, FindingLog):
        return findings.counts()
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}


def exit_code_of(findings: Sequence[Finding] | FindingLog) -> int:
    return EXIT_INVALID if severity_counts(findings)["error"] else EXIT_OK


def finding_lines(
    findings: Sequence[Finding] | FindingLog,
    *,
    verbose: bool,
    info_examples: int = INFO_EXAMPLES,
    warn_examples: int = WARN_EXAMPLES,
) -> list[str]:
    """Errors in full; warnings in full up to ``warn_examples`` per rule; notes grouped by rule with a few
    examples. ``verbose`` prints everything (a :class:`FindingLog` then has to keep all)."""
    totals = findings.totals if isinstance(findings, FindingLog) else None
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
            total = totals[(severity, rule)] if totals is not None else len(group)
            if total > keep:
                lines.append(
                    f"  ... and {total - keep} more [{rule}] {word} (--verbose lists them, --json holds all)"
                )
    return lines


def write_json_report(out: Path, report: dict[str, Any]) -> None:
    """Write the report atomically (its schema, ``schemas/<kind>.json``, is checked by the tests: validating a
    1,448-row table report on every run would cost seconds)."""
    try:
        write_atomic(out, (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as exc:
        raise UnusableInput(f"cannot write the JSON report: {exc.strerror or exc}", str(out)) from exc
