"""The ``inference-audit claim --html`` page: the claim, the results it rests on (the number the claim quotes
beside the published one), each rule's outcome with its citation, and the footnote the claim must carry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checker.audit.claim.model import ResolvedResult
from checker.audit.claim.report import ClaimAudit, Verdict
from checker.audit.claim.rules import Issue, IssueKind
from checker.audit.report_common import severity_counts
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

_VERDICT_WORDS = {
    Verdict.COMPARABLE: "COMPARABLE",
    Verdict.WITH_DISCLOSURES: "COMPARABLE ONLY WITH THE DISCLOSURES LISTED",
    Verdict.NOT_COMPARABLE: "NOT COMPARABLE",
}


def _quoted(audit: ClaimAudit, r: ResolvedResult) -> float | None:
    """The number the claim itself gives for this result (None: it cites the table's)."""
    specs = audit.claim.results
    if 1 <= r.index <= len(specs):
        return specs[r.index - 1].result
    return None


def _results(audit: ClaimAudit) -> Markup:
    rows = []
    for r in audit.results:
        quoted = _quoted(audit, r)
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
                Cell(fmt_num(quoted, 7) if quoted is not None else "—", num=True),
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


def claim_page(audit: ClaimAudit, *, link_dir: Path | None = None) -> bytes:
    m = audit.metric
    n = severity_counts(audit.findings)
    verdict = audit.verdict
    where: Child = audit.claim_path or "--text"
    if audit.claim_path and link_dir is not None and Path(audit.claim_path).exists():
        where = el("a", el("code", audit.claim_path), href=relative_href(audit.claim_path, link_dir))
    derived = ", ".join(d.value for d in m.derivations)
    summary = kv_table(
        [
            ("verdict", [badge(verdict.value, None), " ", _VERDICT_WORDS[verdict], f" (exit code {audit.exit_code})"]),
            ("claim", el("q", audit.claim.text)),
            ("from", where),
            ("round", audit.round),
            ("metric", m.text + (" (read from the text)" if m.from_text else "") + (f"; derived: {derived}" if derived else "")),
            ("findings", f"{n['error']} error(s), {n['warning']} warning(s), {n['info']} note(s)"),
        ],
        data_summary="claim",
    )
    body: list[Child] = [summary]
    blockers = [i for i in audit.issues if i.kind is IssueKind.BLOCKER]
    missing = [i for i in audit.issues if i.kind is IssueKind.REQUIREMENT and not i.satisfied]
    if blockers:
        body.append(box("bad", el("p", el("strong", "Not comparable: "), "; ".join(i.reason for i in blockers))))
    elif missing:
        body.append(box("warn", el("p", el("strong", "Comparable only with: "), "; ".join(i.required or i.rule for i in missing))))
    body.append(_results(audit))
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
    subtitle = f"{_VERDICT_WORDS[verdict]}; {errors} error(s); round {audit.round}"
    return document("inference-audit claim", subtitle, body, kind="claim")

