"""A claim audit's verdict, findings and reports (terminal text, ``--json`` per ``schemas/claim-report.json``).

One list of findings drives the exit code: a blocker (not comparable) or a requirement the claim does not meet
is an ERROR (exit 1); a requirement it meets is INFO. The verdict names the outcome in words:

- ``comparable``: no blocker and no difference to disclose (the claim still carries the printed citation);
- ``comparable-with-disclosures``: comparable only with the disclosures listed (met or not);
- ``not-comparable``: at least one blocker.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from checker.audit.claim.citation import placeholders
from checker.audit.claim.model import Claim, Metric, ResolvedResult
from checker.audit.claim.rules import Issue, IssueKind
from checker.audit.report_common import exit_code_of, finding_lines, severity_counts
from checker.checks.rule_registry import registered_finding
from checker.findings import Finding, Severity
from checker.version import tool_version

SCHEMA_VERSION = "1"
# Requirements every citation has (labels, correct numbers), as opposed to disclosures of a difference between results
LABELLING_RULES = frozenset({"LBL-01", "LBL-02", "TM-01", "VER-05"})
# Lookup findings that make the comparison itself wrong (a quoted number that is not the published one)
BLOCKING_FINDINGS = frozenset({"VER-05"})


class Verdict(str, Enum):
    COMPARABLE = "comparable"
    WITH_DISCLOSURES = "comparable-with-disclosures"
    NOT_COMPARABLE = "not-comparable"


def issue_finding(issue: Issue, path: str | None) -> Finding:
    """A blocker or a requirement the claim does not meet: the rule's registered severity (an ERROR); a requirement
    it meets: INFO."""
    on = f" [results {', '.join(str(i) for i in issue.results)}]" if issue.results else ""
    if issue.kind is IssueKind.BLOCKER:
        message = f"not comparable: {issue.reason}{on}"
    elif issue.satisfied:
        message = f"{issue.reason}: {issue.required} — the claim does{on}"
    else:
        message = f"{issue.reason}: the claim must {issue.required}{on}"
    met = issue.kind is IssueKind.REQUIREMENT and issue.satisfied
    return registered_finding(
        issue.rule,
        message,
        severity=Severity.INFO if met else None,
        scope="claim",
        path=path,
        source=issue.source,
    )


@dataclass(frozen=True)
class ClaimAudit:
    claim: Claim
    claim_path: str | None
    round: str
    metric: Metric
    results: tuple[ResolvedResult, ...]
    issues: tuple[Issue, ...]
    findings: tuple[Finding, ...]
    footnote: tuple[str, ...]
    # what the claim came from when it is no claim file: '--text', or the peer result files it compares
    claim_source: str = "--text"

    def blocking_rules(self) -> list[str]:
        """The rules that make the results not comparable: blockers, and lookups whose quoted number is wrong."""
        return sorted(
            {i.rule for i in self.issues if i.kind is IssueKind.BLOCKER}
            | {
                f.rule
                for f in self.findings
                if f.rule in BLOCKING_FINDINGS and f.severity is Severity.ERROR and (f.scope or "").startswith("results[")
            }
        )

    @property
    def verdict(self) -> Verdict:
        if self.blocking_rules():
            return Verdict.NOT_COMPARABLE
        if any(i.kind is IssueKind.REQUIREMENT and i.rule not in LABELLING_RULES for i in self.issues):
            return Verdict.WITH_DISCLOSURES
        return Verdict.COMPARABLE

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.findings)

    def disclosures(self) -> list[Issue]:
        return [i for i in self.issues if i.kind is IssueKind.REQUIREMENT]


def _result_dict(r: ResolvedResult) -> dict[str, Any]:
    return {
        "index": r.index,
        "label": r.label,
        "origin": r.origin.value,
        "verified": r.verified,
        "mlperf": r.mlperf,
        "id": r.id,
        "benchmark": r.benchmark,
        "scenario": r.scenario.value if r.scenario else None,
        "version": r.version,
        "division": r.division,
        "availability": r.availability,
        "suite": r.suite,
        "submitter": r.submitter,
        "system": r.system,
        "result": r.result,
        "units": r.units,
        "accelerators": r.accelerators,
        "has_power": r.has_power,
        "power_watts": r.power_watts,
        "power_basis": r.power_basis,
        "server_metric": r.server_metric.value if r.server_metric else None,
        "table_row": r.row.row if r.row else None,
        "peer": None if r.peer is None else r.peer.model_dump(mode="json"),
    }


def quoted(claim: Claim, r: ResolvedResult) -> float | None:
    """The number the claim itself gives for result ``r`` (its ``results`` entry's ``result``; None: it gives none
    and cites the table's or the peer file's). The report's ``quoted``, the HTML page's "claim quotes"."""
    if 1 <= r.index <= len(claim.results):
        return claim.results[r.index - 1].result
    return None


def report_dict(audit: ClaimAudit) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "claim-report",
        "tool": "inference-audit",
        "tool_version": tool_version(),
        "round": audit.round,
        "claim": {
            "path": audit.claim_path,
            "text": audit.claim.text,
            "metric": audit.metric.model_dump(mode="json"),
        },
        "results": [{**_result_dict(r), "quoted": quoted(audit.claim, r)} for r in audit.results],
        "verdict": audit.verdict.value,
        "exit_code": audit.exit_code,
        "rules": [
            {
                "rule": i.rule,
                "kind": i.kind.value,
                "satisfied": i.satisfied if i.kind is IssueKind.REQUIREMENT else None,
                "reason": i.reason,
                "required": i.required,
                "source": i.source,
                "results": list(i.results),
            }
            for i in audit.issues
        ],
        "footnote": list(audit.footnote),
        "counts": severity_counts(audit.findings),
        "findings": [f.model_dump(mode="json") for f in audit.findings],
    }


def _result_line(r: ResolvedResult) -> str:
    bits = []
    if r.row is not None:
        bits.append(f"table row {r.row.row}")
    elif r.peer is not None:
        bits.append(r.peer.tool.value)
    else:
        bits.append("given by the claim")
    value = f"{r.result:g} {r.units or ''}".strip() if r.result is not None else "no value"
    bits.append(value)
    for b in (
        r.division,
        r.availability,
        f"v{r.version}" if r.version else None,
        f"{r.accelerators} accelerators" if r.accelerators else "accelerator count unknown",
        f"Server basis: {r.server_metric.value}" if r.server_metric else None,
    ):
        if b:
            bits.append(b)
    bits.append("verified" if r.verified else "unverified" + ("" if r.mlperf else ", not an MLPerf® result"))
    return f"  [{r.index}] {r.label} — {', '.join(bits)}"


VERDICT_WORDS = {
    Verdict.COMPARABLE: "COMPARABLE",
    Verdict.WITH_DISCLOSURES: "COMPARABLE ONLY WITH THE DISCLOSURES LISTED",
    Verdict.NOT_COMPARABLE: "NOT COMPARABLE",
}


def verdict_line(audit: ClaimAudit, needed: list[Issue]) -> str:
    """Two answers a reader needs: whether the results may be compared, and whether the claim may be published as
    written (no ERROR: every number is the published one, every required label and disclosure is there). A claim
    that carries no footnote (``--text``, or a claim file without ``footnote:``) may be published with the one this
    tool wrote for it (LBL-02 judges a footnote the claim carries), not as written."""
    n = severity_counts(audit.findings)
    errors = sorted({f.rule for f in audit.findings if f.severity is Severity.ERROR})
    if errors:
        publish = f"the claim may NOT be published as written: fix {', '.join(errors)}"
    elif audit.footnote and audit.claim.footnote is None:
        todo = placeholders(audit.footnote)
        publish = (
            f"the claim may be published with the citation and footnote above once the claim file's "
            f"{', '.join(todo)} fills in their placeholder (it carries no footnote)"
            if todo
            else "the claim may be published with the citation and footnote above (it carries none)"
        )
    else:
        publish = "the claim may be published as written"
    rules = audit.blocking_rules() or sorted({i.rule for i in needed if not i.satisfied})
    why = f" ({', '.join(rules)})" if rules and audit.verdict is not Verdict.COMPARABLE else ""
    return (
        f"verdict: results {VERDICT_WORDS[audit.verdict]}{why}; {publish} "
        f"({n['error']} errors, {n['warning']} warnings)"
    )


def render_text(audit: ClaimAudit, *, verbose: bool = False) -> list[str]:
    m = audit.metric
    derived = f", derived: {', '.join(d.value for d in m.derivations)}" if m.derivations else ""
    lines = [
        f"inference-audit claim: {audit.claim_path or audit.claim_source} (round {audit.round}; metric: {m.text}"
        f"{' (from the text)' if m.from_text and m.base is not None else ''}{derived})",
        "results:",
    ]
    lines += [_result_line(r) for r in audit.results]
    lines += finding_lines([f for f in audit.findings if f.severity is not Severity.INFO], verbose=True)
    needed = audit.disclosures()
    if needed:
        lines.append("disclosures and labels the claim must carry:")
        for i in needed:
            mark = "ok " if i.satisfied else "MISSING"
            lines.append(f"  [{mark}] {i.rule}: {i.required}  ({i.reason})")
    lines.append("citation and footnote the claim must carry:")
    lines += [f"  {line}" for line in audit.footnote]
    lines.append(verdict_line(audit, needed))
    if verbose:
        lines += finding_lines([f for f in audit.findings if f.severity is Severity.INFO], verbose=True)
    return lines
