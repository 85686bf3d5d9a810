"""The ``check-submission --html`` page: a verdict per result, findings grouped by rule and by submitter, each
with its file and line (a relative link to the file when the page is written to a file).

:func:`check_page` renders a :class:`~checker.results.CheckReport` (as the command has it);
:func:`load_check_json` reads a ``--json`` report back into one, for ``inference-audit report REPORT.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from checker.findings import Finding, Severity, UnusableInput
from checker.report.html.markup import Markup, anchor_id, el, relative_href
from checker.report.html.page import (
    SEVERITY_WORD,
    Cell,
    badge,
    box,
    document,
    finding_item,
    fmt_num,
    kv_table,
    section,
    table,
)
from checker.report.html.plots import Bars, figure, render_bars
from checker.report.outcome import all_findings, counts, exit_code, per_rule
from checker.results import CheckReport, ResultEntry, SummaryRow
from checker.safe_io import read_input_json
from schemas import schema_refusal

MAX_LISTED = 300  # findings listed per rule / per submitter; the rest are counted (the --json report has all)
MAX_BARS = 25
DIVISIONS = ("closed", "open", "network")
_VERDICT = {0: "all results valid", 1: "submission has errors", 2: "input could not be checked"}


@dataclass(frozen=True)
class CheckContext:
    """What the page says besides the report: how the round was chosen and the rule filters."""

    round_detection: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def _submitter(f: Finding) -> str:
    for where in (f.result, f.path, f.scope):
        if where:
            parts = where.split("/")
            if len(parts) >= 2 and parts[0] in DIVISIONS:
                return f"{parts[0]}/{parts[1]}"
    return "(whole tree)"


def _base(report: CheckReport) -> Path:
    """The directory finding paths are relative to: the repository root above a division or submitter dir."""
    root = Path(report.root)
    first = next((f.path or f.result for f in all_findings(report) if f.path or f.result), None)
    if first is None and report.results:
        first = report.results[0].path
    division = first.split("/", 1)[0] if first else None
    if division and root.name == division:
        return root.parent
    if division and root.parent.name == division:
        return root.parent.parent
    return root


class _Links:
    def __init__(self, base: Path, link_dir: Path | None) -> None:
        self.base = base
        self.link_dir = link_dir

    def location(self, f: Finding) -> Markup:
        text = f.location()
        if f.path is None or self.link_dir is None:
            return el("code", text)
        return el("a", el("code", text), href=relative_href(self.base / f.path, self.link_dir))

    def directory(self, rel: str) -> Markup:
        if self.link_dir is None:
            return el("code", rel)
        return el("a", el("code", rel), href=relative_href(self.base / rel, self.link_dir))


def _result_value(value: str | None) -> str:
    """The summary's ``Result`` for people: a number as :func:`fmt_num` writes it, any other text as it is (a
    report read back may hold any string there: ``schemas/check-report.json``)."""
    if value in (None, "", "None"):
        return "—"
    try:
        return fmt_num(float(value))
    except ValueError:
        return value


def _result_row(r: ResultEntry, links: _Links) -> list[Markup | str | Cell]:
    n = Counter(f.severity for f in r.findings)
    row: SummaryRow | None = r.summary
    value = row.values.get("Result") if row else None
    units = row.values.get("Units") if row else None
    shown = _result_value(value)
    return [
        badge("VALID" if r.valid else "INVALID"),
        links.directory(r.path),
        r.mlperf_model or r.benchmark,
        r.scenario,
        Cell(f"{shown} {units or ''}".strip(), num=True),
        Cell(str(n[Severity.ERROR]), num=True),
        Cell(str(n[Severity.WARNING]), num=True),
    ]


def _finding_list(findings: Sequence[Finding], links: _Links, *, show_rule: bool, cited: str | None = None) -> Markup:
    items = [finding_item(f, links.location(f), show_rule=show_rule, show_source=f.source != cited)
             for f in findings[:MAX_LISTED]]
    more = len(findings) - MAX_LISTED
    tail = el("p", f"... and {more} more (the --json report lists every finding)") if more > 0 else None
    return el("div", el("ul", items, class_="findings"), tail)


def _by_rule(report: CheckReport, links: _Links) -> Markup:
    grouped: dict[str, list[Finding]] = {}
    for f in all_findings(report):
        grouped.setdefault(f.rule, []).append(f)
    parts: list[Markup] = []
    for rule, severity, n in per_rule(report):
        group = grouped[rule]
        source = next((f.source for f in group if f.source), None)
        parts.append(
            el(
                "div",
                el("h3", el("code", rule), " ", el("span", SEVERITY_WORD[severity], class_=f"sev-{severity.value}"),
                   f" — {n} finding{'s' if n != 1 else ''}"),
                el("p", "Rule text: ", el("span", source, class_="src")) if source else None,
                _finding_list(group, links, show_rule=False, cited=source),
                id=anchor_id("rule", rule),
                class_="rule-group",
                data_rule=rule,
            )
        )
    return section("Findings by rule", parts or el("p", "No findings."), id="by-rule")


def _by_submitter(report: CheckReport, links: _Links) -> Markup:
    results: dict[str, list[ResultEntry]] = {}
    for r in report.results:
        results.setdefault(f"{r.division}/{r.submitter}", []).append(r)
    findings: dict[str, list[Finding]] = {}
    for f in all_findings(report):
        findings.setdefault(_submitter(f), []).append(f)
    names = sorted(set(results) | set(findings))
    rows = []
    for name in names:
        rs = results.get(name, [])
        sev = Counter(f.severity for f in findings.get(name, []))
        rules = Counter(f.rule for f in findings.get(name, []))
        rows.append(
            [
                el("a", name, href="#" + anchor_id("submitter", name)),
                Cell(str(len(rs)), num=True),
                Cell(str(sum(1 for r in rs if r.valid)), num=True),
                Cell(str(sum(1 for r in rs if not r.valid)), num=True),
                Cell(str(sev[Severity.ERROR]), num=True),
                Cell(str(sev[Severity.WARNING]), num=True),
                [[el("a", el("code", rule), href="#" + anchor_id("rule", rule)), f" ×{k} "]
                 for rule, k in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))],
            ]
        )
    overview = table(["submitter", "results", "valid", "invalid", "errors", "warnings", "rules"], rows)
    details = [
        el(
            "div",
            el("h3", name),
            _finding_list(findings.get(name, []), links, show_rule=True) if findings.get(name) else el("p", "No findings."),
            id=anchor_id("submitter", name),
            data_submitter=name,
        )
        for name in names
    ]
    return section("Findings by submitter", overview, details, id="by-submitter")


def _plots(report: CheckReport) -> list[Markup]:
    out: list[Markup] = []
    rules = per_rule(report)[:MAX_BARS]
    if rules:
        by = {s: Counter() for s in Severity}  # type: dict[Severity, Counter[str]]
        for f in all_findings(report):
            by[f.severity][f.rule] += 1
        cats = tuple(rule for rule, _, _ in rules)
        bars = Bars(
            key="check-findings-per-rule",
            title="Findings per rule",
            x_label="findings",
            categories=cats,
            stacks=(
                ("errors", tuple(float(by[Severity.ERROR][c]) for c in cats), "#B3261E"),
                ("warnings", tuple(float(by[Severity.WARNING][c]) for c in cats), "#E69F00"),
                ("notes", tuple(float(by[Severity.INFO][c]) for c in cats), "#56B4E9"),
            ),
        )
        more = len(per_rule(report)) - len(rules)
        out.append(
            figure(
                bars.key,
                render_bars(bars),
                "Findings per rule id, most frequent first" + (f" (the {len(rules)} most frequent of {len(rules) + more})" if more else "")
                + ". A submitter-level finding that invalidates several results counts once per result.",
            )
        )
    subs: dict[str, list[int]] = {}
    for r in report.results:
        c = subs.setdefault(f"{r.division}/{r.submitter}", [0, 0])
        c[0 if r.valid else 1] += 1
    if subs:
        names = tuple(sorted(subs)[: MAX_BARS * 2])
        bars = Bars(
            key="check-results-per-submitter",
            title="Results per submitter",
            x_label="results",
            categories=names,
            stacks=(
                ("valid", tuple(float(subs[n][0]) for n in names), "#1B7F3B"),
                ("invalid", tuple(float(subs[n][1]) for n in names), "#B3261E"),
            ),
        )
        out.append(figure(bars.key, render_bars(bars), "Valid and invalid results of each submitter."))
    return out


def check_page(report: CheckReport, ctx: CheckContext = CheckContext(), *, link_dir: Path | None = None) -> bytes:
    """The page; ``link_dir`` is the directory the page is written to (file links are relative to it), None for
    standard output (locations are then plain text)."""
    links = _Links(_base(report), link_dir)
    code = exit_code(report)
    c = counts(report)
    verdict_kind = {0: "ok", 1: "bad", 2: "bad"}[code]
    summary = kv_table(
        [
            ("verdict", [badge(_VERDICT[code].upper(), verdict_kind), f" (exit code {code})"]),
            ("checked tree", el("code", report.root)),
            ("round", ctx.round_detection if (ctx.round_detection or "").startswith(report.round)
             else report.round + (f" — {ctx.round_detection}" if ctx.round_detection else "")),
            ("results", f"{c.results}: {c.valid} valid, {c.invalid} invalid"),
            ("findings", f"{c.errors} error(s), {c.warnings} warning(s), {c.infos} note(s)"),
            ("--select", ", ".join(ctx.select) if ctx.select else None),
            ("--ignore", ", ".join(ctx.ignore) if ctx.ignore else None),
            ("tool", f"inference-audit {report.tool_version}"),
        ],
        data_summary="check",
    )
    body: list[Markup | None] = [summary]
    if report.unusable:
        body.append(box("bad", el("p", "The input could not be checked; the findings below say why.")))
    tree_level = [f for f in report.findings]
    if tree_level:
        body.append(
            section(
                "Tree, submitter and system findings",
                _finding_list(tree_level, links, show_rule=True),
                id="tree-findings",
            )
        )
    body += _plots(report)
    rows = [_result_row(r, links) for r in report.results]
    body.append(
        section(
            "Verdict per result",
            table(["verdict", "result", "benchmark", "scenario", Cell("result value", num=True),
                   Cell("errors", num=True), Cell("warnings", num=True)], rows, data_table="results")
            if rows
            else el("p", "No result directories were found."),
            id="results",
        )
    )
    body.append(_by_rule(report, links))
    body.append(_by_submitter(report, links))
    title = f"check-submission: {Path(report.root).name or report.root}"
    subtitle = f"round {report.round}; {c.results} results, {c.valid} valid, {c.invalid} invalid"
    return document(title, subtitle, body, kind="check")


def load_check_json(path: Path, data: dict[str, Any]) -> tuple[CheckReport, CheckContext]:
    """A ``check-submission --json`` report (``schemas/check-report.json``) read back; UnusableInput naming the
    file when it is not one: parse, then render, so one that does not conform to its schema is refused here,
    never an exception while the page is drawn."""
    where = str(path)
    problems = schema_refusal(data, "check-report")
    if problems is not None:
        raise UnusableInput(f"not a check-submission --json report: {problems}", where)
    try:
        results = tuple(
            ResultEntry(
                path=r["path"],
                division=r["division"],
                submitter=r["submitter"],
                system=r["system"],
                benchmark=r["benchmark"],
                mlperf_model=r.get("mlperf_model"),
                scenario=r["scenario"],
                findings=tuple(Finding.model_validate(f) for f in r.get("findings", ())),
                summary=SummaryRow(values=r["summary"]) if r.get("summary") else None,
                power_summary=SummaryRow(values=r["power_summary"]) if r.get("power_summary") else None,
            )
            for r in data["results"]
        )
        report = CheckReport(
            root=str(data["root"]),
            round=str(data["round"]),
            tool_version=str(data.get("tool_version") or "?"),
            results=results,
            findings=tuple(Finding.model_validate(f) for f in data.get("findings", ())),
            unusable=bool(data.get("unusable", False)),
        )
        ctx = CheckContext(
            round_detection=data.get("round_detection"),
            select=tuple(data.get("select") or ()),
            ignore=tuple(data.get("ignore") or ()),
        )
    except (KeyError, TypeError, ValidationError) as exc:
        detail = str(exc).splitlines()[0][:200]
        raise UnusableInput(f"not a check-submission --json report ({type(exc).__name__}: {detail})", where) from None
    return report, ctx


def is_check_json(data: object) -> bool:
    return (
        isinstance(data, dict)
        and data.get("tool") == "inference-audit"
        and "kind" not in data
        and isinstance(data.get("results"), list)
        and "counts" in data
        and "root" in data
    )


def read_json_file(path: Path, what: str = "report") -> Any:
    """A JSON file named on the command line: a regular file (a FIFO or device is refused without blocking),
    at most 256 MiB, bounded depth (:func:`checker.safe_io.read_input_json`); UnusableInput naming it."""
    return read_input_json(path, what, max_bytes=256 * 1024 * 1024)


__all__ = ["CheckContext", "check_page", "is_check_json", "load_check_json", "read_json_file"]
