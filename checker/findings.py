"""Findings: the one record every check, validator and auditor produces.

A finding is immutable. The exit code and every report (terminal, JSON, CSV, JUnit) are
computed from one list of findings, never from separate flags.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum

from pydantic import BaseModel, ConfigDict, field_validator

from checker.printable import MAX_SHOWN_CHARS, printable


class Severity(str, Enum):
    """How a finding affects the verdict.

    - ERROR: the result (or the whole input, when ``result`` is None) is invalid.
    - WARNING: worth fixing, does not invalidate.
    - INFO: context (e.g. where this tool deliberately goes beyond the official checker).
    """

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Finding(BaseModel):
    """One thing a check found.

    ``rule`` is a stable id (e.g. ``PERF-SEEDS``) usable with ``--select`` / ``--ignore``.
    ``result`` is the result directory it concerns (``<division>/<submitter>/results/<system>/
    <benchmark>/<scenario>`` as on disk, relative to the checked root), or None for
    tree-, submitter- or system-level findings (``scope`` then says which).
    ``path`` is the file it is about, relative to the checked root; ``line`` is 1-based.
    ``source`` names the rule text or LoadGen key that makes it a rule.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    severity: Severity
    message: str
    result: str | None = None
    scope: str | None = None
    path: str | None = None
    line: int | None = None
    source: str | None = None
    fix: str | None = None
    beyond_official: bool = False
    # an error a full-length run with the round's official settings and data set does not have (a trial's short
    # duration, few queries or partial data set): the reports group these apart from the real problems
    trial: bool = False

    @field_validator("message", "fix")
    @classmethod
    def _bounded(cls, text: str | None) -> str | None:
        """A message quoting an input is cut at :data:`~checker.printable.MAX_SHOWN_CHARS` characters (a 15 MB
        string in a result file makes neither a 15 MB terminal line nor a 90 MB page)."""
        if text is None or len(text) <= MAX_SHOWN_CHARS:
            return text
        return printable(text, MAX_SHOWN_CHARS, lines=True)

    def location(self) -> str:
        if self.path is None:
            return self.scope or self.result or "."
        return f"{self.path}:{self.line}" if self.line is not None else self.path


def rule_matches(rule: str, patterns: Iterable[str]) -> bool:
    """True when ``rule`` equals one of ``patterns`` or starts with one (prefix select)."""
    for pattern in patterns:
        p = pattern.strip().upper()
        if not p:
            continue
        r = rule.upper()
        if r == p or r.startswith(p if p.endswith("-") else p + "-") or (p.endswith("*") and r.startswith(p[:-1])):
            return True
    return False


def filter_findings(
    findings: Sequence[Finding], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[Finding]:
    """Apply ``--select`` / ``--ignore`` by rule id or prefix (``PERF`` matches ``PERF-SEEDS``)."""
    out = []
    for f in findings:
        if select and not rule_matches(f.rule, select):
            continue
        if ignore and rule_matches(f.rule, ignore):
            continue
        out.append(f)
    return out


EXIT_OK = 0
EXIT_INVALID = 1
EXIT_UNUSABLE = 2
EXIT_INTERNAL = 3  # a bug of this tool (every command: one line, the traceback with --debug)


class UnusableInput(Exception):
    """Raised for input the tool cannot work on at all (exit code 2).

    The message must name the file (and line where known).
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        # printed as is by every command: printable, bounded (checker.printable), whatever the input held
        super().__init__(printable(f"{where}{message}", lines=True))
