"""The ``inference-audit claim --html`` page: the claim, the results it rests on (the number the claim quotes
beside the published one), each rule's outcome with its citation, and the footnote the claim must carry.

:func:`claim_page` renders a :class:`~checker.audit.claim.report.ClaimAudit` (as the command has it);
:func:`load_claim_json` reads a ``--json`` report back into one, for ``inference-audit report REPORT.json``: the
same page from the same input.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from checker.audit.claim.model import Claim, ClaimResultSpec, Metric, Origin, ResolvedResult, ServerMetric
from checker.audit.claim.report import VERDICT_WORDS, ClaimAudit, quoted
from checker.audit.claim.rules import Issue, IssueKind
from checker.audit.peers.model import PeerRun
from checker.audit.report_common import severity_counts
from checker.audit.table.model import TableRow
from checker.findings import Finding, UnusableInput
from checker.report.html.markup import Child, Markup, el, relative_href
from checker.report.html.page import (
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
from rules.models import Scenario
from schemas import schema_refusal

QUOTED_MISSING = "the number the claim quotes for each result (the report's results[].quoted: the 'claim quotes' column)"


def _results(audit: ClaimAudit, lacks: Sequence[str]) -> Markup:
    rows = []
    unknown = QUOTED_MISSING in lacks
    for r in audit.results:
        q = quoted(audit.claim, r)
        published = r.row.result if r.row is not None else None
        origin = f"table row {r.row.row}" if r.row is not None else (r.peer.tool.value if r.peer is not None else "the claim")
        rows.append(
            [
                Cell(str(r.index), num=True),
                r.label,
                origin,
                badge("verified", "ok") if r.verified else badge("unverified", "warn"),
                r.benchmark,
                r.scenario.value if r.scenario else None,
                f"v{r.version}" if r.version else None,
                r.division,
                Cell("not in the report" if unknown else fmt_num(q, 7) if q is not None else "—", num=True),
                Cell(fmt_num(published, 7) if published is not None else "—", num=True),
                Cell(f"{fmt_num(r.result, 7)} {r.units or ''}".strip() if r.result is not None else "no value", num=True),
                Cell(fmt_num(r.accelerators) if r.accelerators else "unknown", num=True),
            ]
        )
    head = [Cell("#", num=True), "result", "from", "status", "benchmark", "scenario", "round", "division",
            Cell("claim quotes", num=True), Cell("table says", num=True), Cell("value used", num=True),
            Cell("accelerators", num=True)]
    return section("Results the claim rests on", table(head, rows, data_table="results"), id="results")


def _bars(audit: ClaimAudit) -> Markup | None:
    vals = [r for r in audit.results if r.result is not None]
    units = {r.units for r in vals}
    if len(vals) < 1 or len(units) > 1:
        return None
    b = Bars(
        key="claim-results",
        title=f"The results compared ({next(iter(units)) or 'no units'})",
        x_label=next(iter(units)) or "value",
        categories=tuple(f"[{r.index}] {r.label}"[:60] for r in vals),
        stacks=(("value used", tuple(float(r.result) for r in vals if r.result is not None), "#0072B2"),),
    )
    return figure(b.key, render_bars(b), "The value of each result the comparison uses (the table's for a published "
                  "result, the claim's own otherwise).")


def _outcome(i: Issue) -> Markup:
    if i.kind is IssueKind.BLOCKER:
        return badge("NOT COMPARABLE", "bad")
    return badge("met", "ok") if i.satisfied else badge("MISSING", "bad")


def _rules(issues: Sequence[Issue]) -> Markup:
    rows = [
        [
            el("code", i.rule),
            "blocker" if i.kind is IssueKind.BLOCKER else "requirement",
            _outcome(i),
            i.reason,
            i.required or "—",
            ", ".join(f"[{k}]" for k in i.results) or "—",
            el("span", i.source, class_="src"),
        ]
        for i in issues
    ]
    if not rows:
        return section("Rules", el("p", "No messaging rule applies to this claim."), id="rules")
    return section(
        "Rules: outcome and citation",
        table(["rule", "kind", "outcome", "why", "the claim must", "results", "citation"], rows, data_table="rules"),
        id="rules",
    )


def claim_page(audit: ClaimAudit, *, link_dir: Path | None = None, lacks: Sequence[str] = ()) -> bytes:
    """The page; ``lacks``: what the page would show that the JSON report it was read from lacks (a report of
    an earlier version), said on the page."""
    m = audit.metric
    n = severity_counts(audit.findings)
    verdict = audit.verdict
    where: Child = audit.claim_path or "--text"
    if audit.claim_path and link_dir is not None and Path(audit.claim_path).exists():
        where = el("a", el("code", audit.claim_path), href=relative_href(audit.claim_path, link_dir))
    derived = ", ".join(d.value for d in m.derivations)
    summary = kv_table(
        [
            ("verdict", [badge(verdict.value, None), " ", VERDICT_WORDS[verdict], f" (exit code {audit.exit_code})"]),
            ("claim", el("q", audit.claim.text)),
            ("from", where),
            ("round", audit.round),
            ("metric", m.text + (" (read from the text)" if m.from_text else "") + (f"; derived: {derived}" if derived else "")),
            ("findings", f"{n['error']} error(s), {n['warning']} warning(s), {n['info']} note(s)"),
        ],
        data_summary="claim",
    )
    body: list[Child] = [summary]
    if lacks:
        body.append(box("warn", el("p", "Written from a JSON report of an earlier version, which lacks: ",
                                   "; ".join(lacks), ". Run the claim again for a complete page."),
                        data_note="report-lacks"))
    blockers = [i for i in audit.issues if i.kind is IssueKind.BLOCKER]
    missing = [i for i in audit.issues if i.kind is IssueKind.REQUIREMENT and not i.satisfied]
    if blockers:
        body.append(box("bad", el("p", el("strong", "Not comparable: "), "; ".join(i.reason for i in blockers))))
    elif missing:
        body.append(box("warn", el("p", el("strong", "Comparable only with: "), "; ".join(i.required or i.rule for i in missing))))
    body.append(_results(audit, lacks))
    bars = _bars(audit)
    if bars is not None:
        body.append(bars)
    body.append(_rules(audit.issues))
    other = [f for f in audit.findings if not (f.scope == "claim" and f.rule in {i.rule for i in audit.issues})]
    if other:
        body.append(section("Other findings", el("ul", [finding_item(f) for f in other], class_="findings"), id="findings"))
    body.append(section("Citation and footnote the claim must carry", el("ul", [el("li", line) for line in audit.footnote]),
                        id="footnote"))
    errors = n["error"]
    subtitle = f"{VERDICT_WORDS[verdict]}; {errors} error(s); round {audit.round}"
    return document("inference-audit claim", subtitle, body, kind="claim")



def _result(r: dict[str, Any]) -> ResolvedResult:
    """One of the report's ``results`` (``checker.audit.claim.report._result_dict``) back as the result: a table
    result's row is the row as the report records it (its number and its value, which is the result's own:
    ``checker.audit.claim.resolve._from_row``)."""
    row = r.get("table_row")
    peer = r.get("peer")
    scenario = r.get("scenario")
    metric = r.get("server_metric")
    return ResolvedResult(
        index=r["index"],
        label=r["label"],
        origin=Origin(r["origin"]),
        verified=r["verified"],
        mlperf=r["mlperf"],
        id=r.get("id"),
        benchmark=r.get("benchmark"),
        scenario=Scenario(scenario) if scenario is not None else None,
        version=r.get("version"),
        division=r.get("division"),
        availability=r.get("availability"),
        suite=r.get("suite"),
        submitter=r.get("submitter"),
        system=r.get("system"),
        result=r.get("result"),
        units=r.get("units"),
        accelerators=r.get("accelerators"),
        has_power=r.get("has_power"),
        power_watts=r.get("power_watts"),
        power_basis=r.get("power_basis"),
        server_metric=ServerMetric(metric) if metric is not None else None,
        row=TableRow(row=row, result=r.get("result")) if row is not None else None,
        peer=PeerRun.model_validate(peer) if peer is not None else None,
    )


def _check_indices(data: dict[str, Any], where: str) -> None:
    """The claim writes its results in order, numbered 1, 2, ... (``checker.audit.claim.resolve``), and a rule
    names results by those numbers: an index that is not its result's position, or that names no result, is an
    edited report (and the page would look up, or make room for, results that are not there)."""
    results = data["results"]
    for k, r in enumerate(results, start=1):
        if r["index"] != k:
            raise UnusableInput(f"not a claim --json report: results[{k - 1}].index is {r['index']}, not {k} (results "
                                "are numbered 1, 2, ... in order)", where)
    for j, rule in enumerate(data["rules"]):
        for k in rule.get("results", ()):
            if not 1 <= k <= len(results):
                raise UnusableInput(f"not a claim --json report: rules[{j}].results names result {k}, and the report "
                                    f"has {len(results)}", where)


def load_claim_json(path: Path, data: dict[str, Any]) -> tuple[ClaimAudit, tuple[str, ...]]:
    """A ``claim --json`` report (``schemas/claim-report.json``) read back, and what of the page it lacks (a report
    of an earlier version has no ``quoted``); UnusableInput naming the file when it is not one.

    The claim comes back as far as the report records it: its text and, per result, the number it quotes (what
    the page shows of it)."""
    where = str(path)
    problems = schema_refusal(data, "claim-report")
    if problems is not None:  # parse, then render: nothing the schema refuses reaches the page
        raise UnusableInput(f"not a claim --json report: {problems}", where)
    _check_indices(data, where)
    try:
        results = tuple(_result(r) for r in data["results"])
        # results[k] is the claim's result k + 1 (_check_indices): what it quotes for each
        specs = tuple(ClaimResultSpec(result=r.get("quoted")) for r in data["results"])
        claim = Claim(text=data["claim"]["text"], results=specs)
        issues = tuple(
            Issue(
                kind=IssueKind(i["kind"]),
                rule=i["rule"],
                reason=i["reason"],
                source=i["source"],
                satisfied=bool(i.get("satisfied")),
                required=i.get("required"),
                results=tuple(int(k) for k in i.get("results", ())),
            )
            for i in data["rules"]
        )
        audit = ClaimAudit(
            claim=claim,
            claim_path=data["claim"]["path"],
            round=str(data["round"]),
            metric=Metric.model_validate(data["claim"]["metric"]),
            results=results,
            issues=issues,
            findings=tuple(Finding.model_validate(f) for f in data["findings"]),
            footnote=tuple(str(line) for line in data["footnote"]),
        )
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise UnusableInput(f"not a claim --json report ({type(exc).__name__}: {detail})", where) from None
    if audit.verdict.value != data.get("verdict") or audit.exit_code != data.get("exit_code"):
        raise UnusableInput(
            f"the report's verdict ({data.get('verdict')}, exit code {data.get('exit_code')}) is not what its rules "
            f"and findings give ({audit.verdict.value}, exit code {audit.exit_code}): an edited report", where
        )
    lacks = () if all("quoted" in r for r in data["results"]) else (QUOTED_MISSING,)
    return audit, lacks
