"""The terminal report: a verdict line per result with its findings, then a summary.

Finding lines read ``path:line [RULE] severity: message — fix: ...`` so editors and CI logs can jump to the file;
``verbose`` adds each finding's citation (``(source)``, and whether the rule goes beyond the official checker), which
the JSON, JUnit and HTML reports always carry.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from checker.findings import Finding, Severity
from checker.printable import printable
from checker.report.outcome import counts, exit_code, per_division, per_rule
from checker.results import CheckReport, ResultEntry

_MARK = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def finding_line(f: Finding, *, verbose: bool = True) -> str:
    mark = _MARK[f.severity] + (" (trial setting)" if f.trial and f.severity is Severity.ERROR else "")
    parts = [f"{f.location()} [{f.rule}] {mark}: {f.message}"]
    if f.fix:
        parts.append(f" — fix: {f.fix}")
    if verbose and f.source:
        parts.append(f"  ({f.source})")
    if verbose and f.beyond_official:
        parts.append("  [beyond the official checker]")
    return printable("".join(parts), None)  # findings may quote file content: one printable line


def _verdict_line(r: ResultEntry) -> str:
    n_err = sum(1 for f in r.findings if f.severity is Severity.ERROR)
    n_trial = sum(1 for f in r.findings if f.severity is Severity.ERROR and f.trial)
    n_warn = sum(1 for f in r.findings if f.severity is Severity.WARNING)
    verdict = "VALID  " if r.valid else "INVALID"
    extra = []
    if n_err:
        extra.append(f"{n_err} error(s)" + (f", {n_trial} of them from trial settings" if n_trial else ""))
    if n_warn:
        extra.append(f"{n_warn} warning(s)")
    tail = f"  ({', '.join(extra)})" if extra else ""
    return printable(f"{verdict} {r.path}{tail}", None)


def render_terminal(
    report: CheckReport,
    *,
    quiet: bool = False,
    round_detection: str | None = None,
    verbose: bool = False,
) -> str:
    """The whole terminal report.

    ``quiet`` prints only invalid results (with their findings), tree-level errors and the summary; ``verbose``
    prints each finding's citation too.
    """
    lines: list[str] = []
    header = f"check-submission ({report.tool_version}): round {report.round}, {report.root}"
    if not quiet:
        lines.append(header)
        if round_detection:
            lines.append(f"  round: {round_detection}")
    tree = [f for f in report.findings if not quiet or f.severity is Severity.ERROR]
    if tree:
        lines.append("")
        lines.append("Tree, submitter and system findings:")
        lines.extend(f"  {finding_line(f, verbose=verbose)}" for f in tree)
    shown = [r for r in report.results if not quiet or not r.valid]
    if shown:
        lines.append("")
    for r in shown:
        lines.append(_verdict_line(r))
        for f in r.findings:
            if quiet and f.severity is not Severity.ERROR:
                continue
            lines.append(f"    {finding_line(f, verbose=verbose)}")
    if lines:
        lines.append("")
    lines.extend(render_summary(report, quiet=quiet))
    return "\n".join(lines) + "\n"


def render_summary(report: CheckReport, *, quiet: bool = False) -> list[str]:
    c = counts(report)
    code = exit_code(report)
    lines = ["Summary:"] if not quiet else []
    if not quiet:
        for division, (valid, invalid) in per_division(report).items():
            lines.append(f"  {division:<8} {valid:>5} valid  {invalid:>5} invalid")
        rules = per_rule(report)
        if rules:
            lines.append("  findings per rule:")
            for rule, severity, n in rules:
                lines.append(f"    {rule:<28} {_MARK[severity]:<8} {n:>5}")
        if c.trial_errors:
            real = c.errors - c.trial_errors
            lines.append(
                f"  trial settings: {c.trial_errors} of the {c.errors} errors are what a trial's short run, few "
                "queries or samples, or partial data set produce (marked 'trial setting'); a full-length run with the "
                "round's official settings and data set does not have them. "
                + (f"The other {real} are real problems." if real else "None of the errors is of another kind.")
            )
    verdict = {0: "all results valid", 1: "submission has errors", 2: "input could not be checked"}[code]
    trial = f" ({c.trial_errors} from trial settings)" if c.trial_errors else ""
    lines.append(
        f"{c.results} results: {c.valid} valid, {c.invalid} invalid; "
        f"{c.errors} error(s){trial}, {c.warnings} warning(s), {c.infos} note(s) — {verdict} (exit {code})"
    )
    return lines


class Progress:
    """A one-line progress display on stderr, redrawn at most ``hz`` times a second."""

    def __init__(self, stream: TextIO | None = None, hz: float = 5.0, unit: str = "submitters") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.unit = unit
        self.period = 1.0 / hz
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int, *_: object) -> None:
        now = time.monotonic()
        if done < total and now - self.last < self.period:
            return
        self.last = now
        width = len(str(total))
        pct = 100.0 * done / total if total else 100.0
        self.stream.write(f"\rchecking: {done:>{width}}/{total} {self.unit} ({pct:5.1f}%)")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
