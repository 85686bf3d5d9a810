"""What a run amounts to: the filtered report, its counts and its exit code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from checker.findings import EXIT_INVALID, EXIT_OK, EXIT_UNUSABLE, Finding, Severity, filter_findings
from checker.results import CheckReport


def filter_report(report: CheckReport, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> CheckReport:
    """The report with only the findings ``--select`` / ``--ignore`` keep; verdicts follow the kept findings."""
    if not select and not ignore:
        return report
    results = tuple(
        r.model_copy(update={"findings": tuple(filter_findings(r.findings, select, ignore))})
        for r in report.results
    )
    findings = tuple(filter_findings(report.findings, select, ignore))
    return report.model_copy(update={"results": results, "findings": findings})


def all_findings(report: CheckReport) -> Iterator[Finding]:
    """Each finding once: the tree-level findings, then every result's own. A submitter-, system- or benchmark-level
    error is copied into each result it invalidates (so that a result's findings give its verdict); the copies are
    that one finding, not one more per result: one thing to fix, counted and listed once."""
    yield from report.findings
    tree = set(report.findings)
    for r in report.results:
        for f in r.findings:
            if not tree or f.model_copy(update={"result": None}) not in tree:
                yield f


def tree_errors(report: CheckReport) -> list[Finding]:
    return [f for f in report.findings if f.severity is Severity.ERROR]


def exit_code(report: CheckReport) -> int:
    """0 every result valid, 1 some result (or the tree) invalid, 2 the input could not be checked."""
    if report.unusable:
        return EXIT_UNUSABLE
    if tree_errors(report) or any(not r.valid for r in report.results):
        return EXIT_INVALID
    return EXIT_OK


@dataclass(frozen=True)
class Counts:
    results: int
    valid: int
    invalid: int
    errors: int
    warnings: int
    infos: int
    trial_errors: int = 0  # errors a full-length run with the official settings and data set does not have

    def as_dict(self) -> dict[str, int]:
        return {
            "results": self.results,
            "valid": self.valid,
            "invalid": self.invalid,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "trial_errors": self.trial_errors,
        }


def counts(report: CheckReport) -> Counts:
    severities: Counter[Severity] = Counter()
    trial = 0
    for f in all_findings(report):
        severities[f.severity] += 1
        trial += f.trial and f.severity is Severity.ERROR
    valid = sum(1 for r in report.results if r.valid)
    return Counts(
        results=len(report.results),
        valid=valid,
        invalid=len(report.results) - valid,
        errors=severities[Severity.ERROR],
        warnings=severities[Severity.WARNING],
        infos=severities[Severity.INFO],
        trial_errors=trial,
    )


def per_division(report: CheckReport) -> dict[str, tuple[int, int]]:
    """division -> (valid results, invalid results), divisions sorted."""
    table: dict[str, list[int]] = {}
    for r in report.results:
        row = table.setdefault(r.division, [0, 0])
        row[0 if r.valid else 1] += 1
    return {d: (v[0], v[1]) for d, v in sorted(table.items())}


def per_rule(report: CheckReport) -> list[tuple[str, Severity, int]]:
    """(rule, worst severity, number of findings), most frequent first (each finding once: :func:`all_findings`)."""
    n: Counter[str] = Counter()
    worst: dict[str, Severity] = {}
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    for f in all_findings(report):
        n[f.rule] += 1
        if f.rule not in worst or rank[f.severity] < rank[worst[f.rule]]:
            worst[f.rule] = f.severity
    return [(rule, worst[rule], k) for rule, k in sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))]
