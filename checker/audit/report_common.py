"""Pieces shared by the table and claim reports: severity counts, terminal lines, JSON writing."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from checker.findings import EXIT_INVALID, EXIT_OK, Finding, Severity, rule_matches
from checker.report.output import json_item
from checker.report.terminal import finding_line

ERROR_EXAMPLES = 50  # errors printed per rule without --verbose (a 20,000-row table of bad rows printed 70,000 lines)
WARN_EXAMPLES = 5  # warnings printed per rule without --verbose
INFO_EXAMPLES = 2  # notes printed per rule without --verbose
CHUNK = 1 << 20  # bytes read back from a spool at a time
ITEM_LEVEL = 2  # the items of a top-level key's list (``findings``, ``rows``) in a report


class JsonSpool:
    """The items of one JSON list, rendered as the report writes them (:func:`~checker.report.output.json_item`,
    ``,`` and a line break between them) and appended to an anonymous temporary file: what ``--json`` reports
    of a large table is written as the rows are checked, not held (:meth:`chunks` reads it back)."""

    def __init__(self, level: int = ITEM_LEVEL) -> None:
        self.level = level
        self.count = 0
        self._file: IO[bytes] | None = None

    def _fh(self) -> IO[bytes]:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="inference-audit-", suffix=".json-items")  # noqa: SIM115 (closed by close(); unlinked already)
        return self._file

    def append(self, item: object) -> None:
        self.append_text(json_item(item, self.level))

    def append_text(self, text: str) -> None:
        """One item already rendered at this spool's level."""
        fh = self._fh()
        if self.count:
            fh.write(b",\n")
        fh.write(text.encode("utf-8"))
        self.count += 1

    def extend(self, other: JsonSpool) -> None:
        """Append ``other``'s items after these (its file is copied, not parsed)."""
        if not other.count:
            return
        fh = self._fh()
        if self.count:
            fh.write(b",\n")
        for chunk in other.items_chunks():
            fh.write(chunk)
        self.count += other.count

    def items_chunks(self) -> Iterator[bytes]:
        """The items, separated, without the list's brackets."""
        if self._file is None:
            return
        fh = self._file
        fh.flush()
        fh.seek(0)
        while chunk := fh.read(CHUNK):
            yield chunk
        fh.seek(0, 2)  # appending goes on at the end

    def chunks(self) -> Iterator[bytes]:
        """The list as :func:`json.dumps` (``indent=2``) writes it at this level: ``[]`` when empty."""
        if not self.count:
            yield b"[]"
            return
        yield b"[\n"
        yield from self.items_chunks()
        yield ("\n" + "  " * (self.level - 1) + "]").encode("utf-8")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class FindingLog:
    """Findings in the order they were added, after ``--select`` / ``--ignore``.

    With ``keep_all`` it holds every finding (what ``--verbose`` prints). Without, it holds what the terminal
    summary prints, every error and the first warnings and notes of each rule, and counts the rest (how a
    10^6-row table is checked in bounded memory; the printed report and the exit code are the same). With
    ``spool`` every finding is also written, in order and rendered as the JSON report lists it, to a temporary
    file (:attr:`spool`, what ``--json`` streams into its ``findings``), so the report need not hold them.
    """

    def __init__(
        self,
        *,
        keep_all: bool = True,
        select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        warn_examples: int = WARN_EXAMPLES,
        info_examples: int = INFO_EXAMPLES,
        spool: bool = False,
    ) -> None:
        self.keep_all = keep_all
        self.select = tuple(select)
        self.ignore = tuple(ignore)
        self._keep = {Severity.ERROR: None, Severity.WARNING: warn_examples, Severity.INFO: info_examples}
        self.kept: list[Finding] = []
        self.totals: Counter[tuple[Severity, str]] = Counter()  # (severity, rule) -> findings added
        # with spool, every finding is written (as the JSON report lists it) to a temporary file as it is added
        self.spool = JsonSpool() if spool else None

    def new(self) -> FindingLog:
        """An empty log that keeps what this one keeps (to fill apart and :meth:`extend` this one with)."""
        keep = self._keep
        return FindingLog(
            keep_all=self.keep_all,
            select=self.select,
            ignore=self.ignore,
            warn_examples=keep[Severity.WARNING] or 0,
            info_examples=keep[Severity.INFO] or 0,
            spool=self.spool is not None,
        )

    def add(self, f: Finding) -> None:
        self._add(f, spool=True)

    def _add(self, f: Finding, *, spool: bool) -> None:
        if self.select and not rule_matches(f.rule, self.select):
            return
        if self.ignore and rule_matches(f.rule, self.ignore):
            return
        key = (f.severity, f.rule)
        self.totals[key] += 1
        if spool and self.spool is not None:
            self.spool.append(f.model_dump(mode="json"))
        keep = self._keep[f.severity]
        if self.keep_all or keep is None or self.totals[key] <= keep:
            self.kept.append(f)

    def extend(self, findings: Iterable[Finding] | FindingLog) -> None:
        """Add ``findings`` after those held; another log's uncounted remainder comes after its kept findings
        of the same rule, so the first ones of each rule stay the first ones. Two spooled logs (one made by the
        other's :meth:`new`, with the same ``--select`` / ``--ignore``): the other's spool is copied after this
        one's."""
        if isinstance(findings, FindingLog) and findings.spool is not None and self.spool is not None:
            self.spool.extend(findings.spool)
            shown = Counter((f.severity, f.rule) for f in findings.kept)
            for f in findings.kept:
                self._add(f, spool=False)
            for key, total in findings.totals.items():
                self.totals[key] += total - shown[key]
            return
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
    error_examples: int = ERROR_EXAMPLES,
) -> list[str]:
    """Per rule, the first ``error_examples`` errors, ``warn_examples`` warnings and ``info_examples`` notes in full,
    and a count of the rest. ``verbose`` prints everything (a :class:`FindingLog` then has to keep all)."""
    totals = findings.totals if isinstance(findings, FindingLog) else None
    if verbose:
        return [finding_line(f) for f in findings]
    lines: list[str] = []
    for severity, keep, word in (
        (Severity.ERROR, error_examples, "errors"),
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


