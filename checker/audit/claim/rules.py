"""Judge a claim: which messaging rules apply, and does its wording honour them.

Every rule yields :class:`Issue` records named by the rule ids of ``rules/data/messaging.yaml`` (``CMP-01``,
``DRV-02``, ...) or, for what the MLPerf Compatibility Table decides, ``D-16`` for the Server metric. An issue is
either a *blocker* (the results are not comparable at all) or a *requirement* (the claim is comparable only if
it states, carries or avoids something); a requirement is ``satisfied`` when the claim already does.

:class:`ClaimRules` holds the claim and the issues found, and applies the rules in order; the rules are registered and
judged by :mod:`checker.audit.claim.comparison` (what may be compared, what a comparison discloses),
:mod:`checker.audit.claim.labelling` (how each result is labelled) and :mod:`checker.audit.claim.figures` (stated
factors, derived metrics).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from checker.audit.claim import comparison, figures, labelling
from checker.audit.claim.model import Claim, Metric, ResolvedResult
from rules.messaging import MessagingData
from rules.models import Round


class IssueKind(str, Enum):
    BLOCKER = "not-comparable"
    REQUIREMENT = "requirement"


@dataclass(frozen=True)
class Issue:
    kind: IssueKind
    rule: str
    reason: str  # from the data: which results, which values
    source: str  # citation of the rule text
    satisfied: bool = False
    required: str | None = None  # what the claim must state / carry / avoid
    results: tuple[int, ...] = ()


class ClaimRules:
    def __init__(
        self, claim: Claim, metric: Metric, results: list[ResolvedResult], md: MessagingData, rnd: Round
    ) -> None:
        self.claim = claim
        self.metric = metric
        self.results = results
        self.md = md
        self.round = rnd
        self.text = claim.text
        self.footnote = claim.footnote
        self.issues: list[Issue] = []

    # ---- helpers -------------------------------------------------------------------------------------------
    def cite(self, rule_id: str) -> str:
        try:
            return f"{self.md.rule(rule_id).cite} ({rule_id})"
        except KeyError:
            d = self.md.discrepancy(rule_id)
            return f"{', '.join(q.cite for q in d.quotes)} ({rule_id})"

    def block(self, rule: str, reason: str, results: tuple[int, ...] = ()) -> None:
        self.issues.append(Issue(IssueKind.BLOCKER, rule, reason, self.cite(rule), results=results))

    def require(
        self, rule: str, reason: str, required: str, satisfied: bool, results: tuple[int, ...] = ()
    ) -> None:
        self.issues.append(
            Issue(IssueKind.REQUIREMENT, rule, reason, self.cite(rule), satisfied, required, results)
        )

    def in_footnote(self, check: bool) -> bool:
        """A footnote requirement holds when the claim's footnote has it, or when the claim has no footnote yet
        (it must then carry the footnote this tool prints, which has it)."""
        return self.footnote is None or check

    @staticmethod
    def ids(rs: list[ResolvedResult]) -> tuple[int, ...]:
        return tuple(r.index for r in rs)

    @staticmethod
    def name(r: ResolvedResult) -> str:
        return f"result {r.index} ({r.label})"

    def bench_name(self, r: ResolvedResult) -> str | None:
        if r.benchmark is None:
            return None
        b = self.round.benchmark(r.benchmark)
        return b.name if b else r.benchmark.lower()

    # ---- the rules, in the order of their issues -----------------------------------------------------------
    def run(self) -> list[Issue]:
        mlperf = [r for r in self.results if r.mlperf]
        comparison.non_mlperf_mix(self)
        if len(mlperf) >= 2:
            comparison.same_benchmark(self, mlperf)
            comparison.same_scenario(self, mlperf)
            comparison.versions(self, mlperf)
            comparison.accelerator_counts(self, mlperf)
            comparison.server_metric(self, mlperf)
        elif mlperf:
            comparison.server_metric(self, mlperf)
        labelling.open_label(self, mlperf)
        comparison.open_vs_closed(self, mlperf)
        labelling.availability_labels(self, mlperf)
        comparison.availability_mix(self, mlperf)
        labelling.audit_wording(self, mlperf)
        comparison.power_vs_performance(self)
        figures.stated_ratio(self)
        labelling.unverified_labels(self)
        comparison.verified_vs_unverified(self)
        figures.derived(self)
        labelling.labels(self, mlperf)
        return self.issues
