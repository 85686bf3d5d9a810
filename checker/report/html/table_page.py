"""The ``inference-audit table --html`` page: each row's published value beside the value re-derived from its logs
(with ``--tree``), the findings of each rule with its citation, the tree's results without a row.

The table is streamed (a row is checked and let go), so the page keeps what it shows as the rows go by
(:class:`PageRows`): every row whose logs disagree or could not be read, and the first :data:`MAX_ROWS` others.

:func:`load_table_json` reads a ``table --json`` report back (its rows through the same :class:`PageRows`, its
findings through the same :class:`~checker.audit.report_common.FindingLog`), for ``inference-audit report
REPORT.json``: the same page from the same input.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from checker.audit.report_common import FindingLog, severity_counts
from checker.audit.table.model import ResultTable, TableFormat, TableRow
from checker.audit.table.report import TableAudit, TreeSummary, errors_per_row
from checker.audit.table.tree import RowComparison, RowStatus
from checker.findings import Finding, Severity, UnusableInput
from checker.report.html.markup import Child, Markup, anchor_id, el, relative_href
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
from checker.report.html.plots import LIMIT_COLOR, Plot, RefLine, Series, figure, render_plot
from schemas import schema_refusal

MAX_ROWS = 2000  # rows listed besides every mismatched / unreadable one
MAX_MISSING = 200
_KEEP_ALWAYS_VALUES = frozenset(s.value for s in (RowStatus.MISMATCH, RowStatus.UNREADABLE))


@dataclass(frozen=True)
class PageRow:
    """What the page lists of one row."""

    row: int
    line: int | None
    label: str
    benchmark: str | None
    scenario: str | None
    location: str | None
    result: float | None
    result_text: str | None
    units: str | None
    status: str | None  # tree status (None without --tree)
    derived: float | None  # the value from the logs
    derived_key: str | None
    derived_file: str | None  # the detail log it was read from, relative to the tree
    derived_line: int | None

    @property
    def difference_pct(self) -> float | None:
        if self.result is None or self.derived is None or self.derived == 0:
            return None
        return 100.0 * (self.result - self.derived) / self.derived


class PageRows:
    """Collects :class:`PageRow` as the table streams by (bounded: see the module docstring)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_ROWS if limit is None else limit
        self.rows: list[PageRow] = []
        self.total = 0
        self.others = 0

    def add(self, row: TableRow, comparison: RowComparison | None) -> None:
        d = comparison.derived if comparison is not None else None
        self.add_page_row(
            PageRow(
                row=row.row,
                line=row.line,
                label=row.identity(),
                benchmark=row.benchmark,
                scenario=row.scenario,
                location=row.location,
                result=row.result,
                result_text=row.result_text,
                units=row.units,
                status=comparison.status.value if comparison is not None else None,
                derived=d.value if d is not None else None,
                derived_key=d.key if d is not None else None,
                derived_file=d.detail_path if d is not None and d.value is not None else None,
                derived_line=d.line if d is not None else None,
            )
        )

    def add_page_row(self, r: PageRow) -> None:
        self.total += 1
        if r.status not in _KEEP_ALWAYS_VALUES:
            if self.others >= self.limit:
                return
            self.others += 1
        self.rows.append(r)

    @property
    def shown(self) -> int:
        return len(self.rows)


class _Files:
    """Links to the files findings name: the table (a path as given) or a log in the tree."""

    def __init__(self, link_dir: Path | None, tree_dir: Path | None) -> None:
        self.link_dir = link_dir
        self.tree_dir = tree_dir

    def resolve(self, rel: str) -> Path | None:
        for candidate in (Path(rel), self.tree_dir / rel if self.tree_dir else None):
            if candidate is not None and os.path.lexists(candidate):
                return candidate
        return None

    def link(self, rel: str, text: str) -> Markup:
        target = self.resolve(rel) if self.link_dir is not None else None
        if target is None or self.link_dir is None:
            return el("code", text)
        return el("a", el("code", text), href=relative_href(target, self.link_dir))

    def location(self, f: Finding) -> Markup | None:
        if f.path is None:
            return el("code", f.scope) if f.scope else None
        text = f"{f.path}:{f.line}" if f.line is not None else f.path
        return self.link(f.path, text)


_STATUS_KIND = {"match": "ok", "mismatch": "bad", "logs-missing": "info", "logs-unreadable": "warn", "not-checked": "info"}


def _rows_section(audit: TableAudit, rows: PageRows, files: _Files) -> Markup:
    per_row = errors_per_row(audit)
    has_tree = audit.tree is not None
    head: list[str | Cell] = ["row", "result", "benchmark", "scenario", Cell("table's value", num=True)]
    if has_tree:
        head += [Cell("from the logs", num=True), Cell("difference", num=True), "logs", "status"]
    head.append(Cell("errors", num=True))
    body = []
    for r in rows.rows:
        value = r.result_text or (fmt_num(r.result) if r.result is not None else "—")
        cells: list[Child | Cell] = [
            files.link(audit.table.path, f"{r.row}" + (f" (line {r.line})" if r.line else "")),
            r.label,
            r.benchmark,
            r.scenario,
            Cell(f"{value} {r.units or ''}".strip(), num=True),
        ]
        if has_tree:
            diff = r.difference_pct
            cells += [
                Cell(fmt_num(r.derived, 7) if r.derived is not None else "—", num=True),
                Cell(f"{diff:+.3f} %" if diff is not None else "—", num=True),
                files.link(r.derived_file, f"{r.derived_file}:{r.derived_line}" if r.derived_line else r.derived_file)
                if r.derived_file else (el("code", r.location) if r.location else None),
                badge(r.status, _STATUS_KIND.get(r.status, "info")) if r.status else None,
            ]
        n = per_row.get(r.row, 0)
        cells.append(Cell(str(n), num=True))
        body.append(cells)
    note = None
    if rows.shown < rows.total:
        note = el("p", f"{rows.shown:,} of {rows.total:,} rows listed: every row whose logs disagree or could not be "
                       f"read, and the first {rows.limit:,} others (the --json report lists every row).")
    title = "Rows: the table's values beside the logs'" if has_tree else "Rows"
    return section(title, note, table(head, body, data_table="rows"), id="rows")


def _diff_plot(rows: PageRows) -> Markup | None:
    pts = [(r.row, r.difference_pct, r.status) for r in rows.rows if r.difference_pct is not None]
    if not pts:
        return None
    ok = [(x, y) for x, y, s in pts if s != RowStatus.MISMATCH.value and y is not None]
    bad = [(x, y) for x, y, s in pts if s == RowStatus.MISMATCH.value and y is not None]
    series = []
    if ok:
        series.append(Series(f"match within rounding ({len(ok):,})", [float(x) for x, _ in ok], [float(y) for _, y in ok],
                             "markers", "#009E73"))
    if bad:
        series.append(Series(f"differ from the logs ({len(bad):,})", [float(x) for x, _ in bad],
                             [float(y) for _, y in bad], "markers", LIMIT_COLOR))
    p = Plot(
        key="table-rederived-difference",
        title="The table's value against the value re-derived from the logs",
        x_label="table row",
        y_label="table − logs (% of the logs' value)",
        series=tuple(series),
        lines=(RefLine(0.0, "same as the logs", "y", "#5f6368", ":"),),
        integer_x=True,
    )
    return figure(p.key, render_plot(p), "Each row whose logs were found: how far the published value is from the one "
                  "the logs give (0: identical). Printed rounding makes small differences; the red points differ beyond it.")


def _rule_groups(audit: TableAudit, files: _Files) -> Markup:
    findings = list(audit.findings)
    totals: Counter[tuple[Severity, str]] = Counter()
    if isinstance(audit.findings, FindingLog):
        totals.update(audit.findings.totals)
    else:
        totals.update((f.severity, f.rule) for f in findings)
    rules: dict[str, dict[Severity, int]] = {}
    for (sev, rule), n in totals.items():
        rules.setdefault(rule, {})[sev] = n
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    order = sorted(rules, key=lambda r: (min(rank[s] for s in rules[r]), -sum(rules[r].values()), r))
    overview = []
    parts = []
    for rule in order:
        group = [f for f in findings if f.rule == rule]
        by_sev = rules[rule]
        worst = min(by_sev, key=lambda s: rank[s])
        source = next((f.source for f in group if f.source), None)
        counts = ", ".join(f"{k:,} {SEVERITY_WORD[s]}{'s' if k != 1 else ''}" for s, k in sorted(by_sev.items(), key=lambda kv: rank[kv[0]]))
        overview.append([el("a", el("code", rule), href="#" + anchor_id("rule", rule)),
                         el("span", SEVERITY_WORD[worst], class_=f"sev-{worst.value}"), counts,
                         el("span", source, class_="src") if source else "—"])
        shown = sum(by_sev.values())
        more = shown - len(group)
        parts.append(
            el(
                "div",
                el("h3", el("code", rule), f" — {counts}"),
                el("p", "Rule text: ", el("span", source, class_="src")) if source else None,
                el("ul", [finding_item(f, files.location(f), show_rule=False, show_source=f.source != source)
                          for f in group], class_="findings"),
                el("p", f"... and {more:,} more (-v lists them; the --json report holds all)") if more > 0 else None,
                id=anchor_id("rule", rule),
                data_rule=rule,
            )
        )
    if not order:
        return section("Rules", el("p", "No rule found anything: every row passes."), id="rules")
    return section(
        "Rules: outcome and citation",
        el("p", "Each rule that found something, its count by severity and the rule text it cites. Rules not listed "
                "found nothing."),
        table(["rule", "worst", "findings", "citation"], overview, data_table="rules"),
        parts,
        id="rules",
    )


def table_page(
    audit: TableAudit, rows: PageRows, *, link_dir: Path | None = None, tree_dir: Path | None = None,
    lacks: Sequence[str] = (),
) -> bytes:
    """The page; ``lacks``: what the page would show that the JSON report it was read from lacks (a report of an
    earlier version), said on the page."""
    files = _Files(link_dir, tree_dir)
    t = audit.table
    code = audit.exit_code
    n = {s: 0 for s in ("error", "warning", "info")}
    n.update(severity_counts(audit.findings))
    tree_text: Child = None
    if audit.tree is not None:
        c = audit.tree.status_counts
        tree_text = [el("code", audit.tree.root), " — ",
                     ", ".join(f"{k:,} {s}" for s, k in c.items()) or "no rows compared",
                     f"; {len(audit.tree.missing_rows):,} valid results in the tree have no row"]
    summary = kv_table(
        [
            ("verdict", [badge("VALID" if code == 0 else "INVALID"), f" (exit code {code})"]),
            ("table", [files.link(t.path, t.path), f" ({t.format.value}, {audit.row_count:,} rows)"]),
            ("round", f"{audit.round} ({audit.round_detection})"),
            ("findings", f"{n['error']:,} error(s), {n['warning']:,} warning(s), {n['info']:,} note(s)"),
            ("logs (--tree)", tree_text),
            ("relative tolerance", f"{audit.rel_tol:g}" if audit.tree is not None else None),
        ],
        data_summary="table",
    )
    body: list[Child] = [summary]
    if lacks:
        body.append(box("warn", el("p", "Written from a JSON report of an earlier version, which lacks: ",
                                   "; ".join(lacks), ". Run the table again for a complete page."),
                        data_note="report-lacks"))
    if audit.tree is None:
        body.append(box("info", el("p", "Without --tree the rows are judged against the round's rules only; with "
                                        "--tree PATH each row is re-derived from the LoadGen logs it points to.")))
    plot = _diff_plot(rows)
    if plot is not None:
        body.append(plot)
    body.append(_rule_groups(audit, files))
    body.append(_rows_section(audit, rows, files))
    if audit.tree is not None and audit.tree.missing_rows:
        missing = audit.tree.missing_rows
        body.append(section(
            "Results in the tree without a row",
            el("ul", [el("li", files.link(m, m)) for m in missing[:MAX_MISSING]]),
            el("p", f"... and {len(missing) - MAX_MISSING:,} more") if len(missing) > MAX_MISSING else None,
            id="missing-rows",
        ))
    title = f"inference-audit table: {Path(t.path).name}"
    subtitle = f"round {audit.round}; {audit.row_count:,} rows; {n['error']:,} errors"
    return document(title, subtitle, body, kind="table")


# what a table report of an earlier version lacks, as the page says it
LACKS_LABEL = "each row's label without a result ID (submitter / system / benchmark / scenario: the 'result' column)"
LACKS_TEXT = "each row's result as written in the table (the 'table's value' column shows the parsed number)"
LACKS_LOG = "the detail log and line each re-derived value came from (the 'logs' column shows the row's location)"


def _page_row(r: dict[str, Any], lacks: set[str]) -> PageRow:
    d = r.get("derived")
    if "label" not in r:
        lacks.add(LACKS_LABEL)
    if "result_text" not in r:
        lacks.add(LACKS_TEXT)
    if d is not None and "file" not in d:
        lacks.add(LACKS_LOG)
    label = r.get("label") or r.get("id") or " / ".join(p or "?" for p in (None, None, r.get("benchmark"), r.get("scenario")))
    return PageRow(
        row=int(r["row"]),
        line=r.get("line"),
        label=str(label),
        benchmark=r.get("benchmark"),
        scenario=r.get("scenario"),
        location=r.get("location"),
        result=r.get("result"),
        result_text=r.get("result_text"),
        units=r.get("units"),
        status=r.get("tree_status"),
        derived=d.get("value") if d is not None else None,
        derived_key=d.get("key") if d is not None else None,
        derived_file=d.get("file") if d is not None else None,
        derived_line=d.get("line") if d is not None else None,
    )


def load_table_json(
    path: Path, data: dict[str, Any], *, verbose: bool = False, limit: int | None = None
) -> tuple[TableAudit, PageRows, Path | None, tuple[str, ...]]:
    """A ``table --json`` report (``schemas/table-report.json``) read back: the audit, the rows the page lists, the
    tree the rows' logs are in, and what of the page the report lacks (one of an earlier version); UnusableInput
    naming the file when it is not one.

    The findings go through a :class:`FindingLog` as the command's did: without ``verbose`` the page lists what
    ``table --html`` lists (every error, the first warnings and notes of each rule, the rest counted), with it
    every finding (``table -v --html``)."""
    where = str(path)
    problems = schema_refusal(data, "table-report")
    if problems is not None:  # parse, then render: nothing the schema refuses reaches the page
        raise UnusableInput(f"not a table --json report: {problems}", where)
    lacks: set[str] = set()
    try:
        t = data["table"]
        header = ResultTable(path=t["path"], format=TableFormat(t["format"]), columns=t["columns"], rows=())
        findings = FindingLog(keep_all=verbose)
        for f in data["findings"]:
            findings.add(Finding.model_validate(f))
        tree = None
        if data.get("tree") is not None:
            tree = TreeSummary(str(data["tree"]), dict(data.get("tree_counts") or {}),
                               tuple(str(m) for m in data.get("missing_rows") or ()))
        rows = PageRows(limit)
        for r in data["rows"]:
            rows.add_page_row(_page_row(r, lacks))
        audit = TableAudit(header, str(data["round"]), str(data.get("round_detection") or "?"), findings, tree,
                           float(data.get("rel_tol", 0.0)), int(t["rows"]))
    except (KeyError, TypeError, ValueError, AttributeError, ValidationError) as exc:
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise UnusableInput(f"not a table --json report ({type(exc).__name__}: {detail})", where) from None
    if audit.exit_code != data.get("exit_code") or severity_counts(findings) != data.get("counts"):
        raise UnusableInput(
            f"the report's counts ({data.get('counts')}, exit code {data.get('exit_code')}) are not those of its "
            f"findings ({severity_counts(findings)}, exit code {audit.exit_code}): an edited report", where
        )
    tree_dir = Path(audit.tree.root) if audit.tree is not None else None  # what the command linked logs from
    order = (LACKS_LABEL, LACKS_TEXT, LACKS_LOG)
    return audit, rows, tree_dir, tuple(x for x in order if x in lacks)
