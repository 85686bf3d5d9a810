"""Judge a claim: which messaging rules apply, and does its wording honour them.

Every rule yields :class:`Issue` records named by the rule ids of ``rules/data/messaging.yaml`` (``CMP-01``,
``DRV-02``, ...) or, for what the MLPerf Compatibility Table decides, ``D-16`` for the Server metric. An issue is
either a *blocker* (the results are not comparable at all) or a *requirement* (the claim is comparable only if
it states, carries or avoids something); a requirement is ``satisfied`` when the claim already does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from checker.audit.claim.model import Claim, Derivation, Metric, ResolvedResult, ServerMetric
from checker.audit.claim.parse import read_metric
from checker.audit.claim.text import (
    has_unverified_near,
    mentions,
    mentions_benchmark,
    mentions_count,
    mentions_version,
    norm,
    official_wording,
    stated_factor,
    trademark_problems,
)
from checker.audit.table.model import POWER_UNITS, TableRow
from checker.checks.catalog import Case, RuleInfo, register, registered_finding
from checker.findings import Finding, Severity
from rules.messaging import Compatibility, MessagingData
from rules.models import Round, Scenario

# The messaging rules a claim is judged by (ids and text: rules/data/messaging.yaml). A blocker or a requirement the
# claim does not meet is an ERROR, a requirement it meets INFO (checker.audit.claim.report.issue_finding).
RULES = register(
    __name__,
    RuleInfo(
        "CMP-01", "-", "claim: results of different benchmarks (99% vs 99.9% included) or scenarios compared"
    ),
    RuleInfo(
        "CMP-02",
        "-",
        "claim: rounds not in one group of the MLPerf Compatibility Table (or not covered by it)",
    ),
    RuleInfo("CMP-03", "-", "claim: power results compared with performance results"),
    RuleInfo("CMP-04", "-", "claim: MultiStream before v2.0 compared with v2.0+"),
    RuleInfo(
        "CMP-05", "-", "claim: an MLPerf result compared with a non-MLPerf one (peer tool, own harness)"
    ),
    RuleInfo(
        "CMP-06",
        "-",
        "claim: a difference in version, division, availability, verified status or chip count not "
        "named in the main text",
    ),
    RuleInfo(
        "CMP-07", "-", "claim: Open compared with Closed without saying how the Open result would not qualify"
    ),
    RuleInfo("CMP-08", "-", "claim: verified compared with unverified without the required footnote"),
    RuleInfo("CMP-09", "-", "claim: Server compared with Interactive (a scenario difference)"),
    RuleInfo(
        "D-16", "-", "claim: Server figures of unstated or different basis (completed vs scheduled samples/s)"
    ),
    RuleInfo("DIV-01", "-", "claim: an Open result not called 'MLPerf® Open'"),
    RuleInfo("DIV-03", "-", "claim: Open results described as compliance-tested"),
    RuleInfo("AVL-02", "-", "claim: a Preview result not labelled Preview (or presented as available)"),
    RuleInfo("AVL-03", "-", "claim: an RDI result not labelled RDI (or presented as available)"),
    RuleInfo(
        "AVL-05", "-", "claim: results described as audited that are not published Closed + Available results"
    ),
    RuleInfo(
        "VER-02", "-", "claim: an unverified result without 'unverified' next to it and the required sentence"
    ),
    RuleInfo("VER-04", "-", "claim: unverified results called official, verified or certified"),
    RuleInfo(
        "VER-05",
        "-",
        "claim: a stated factor the cited numbers do not support, or a quoted number that is not the "
        "published one",
        cases={"quoted-value": Case(source="MSG:171 (VER-05)")},  # the lookup's (quoted_value_finding)
    ),
    RuleInfo(
        "DRV-01",
        "-",
        "claim: a derived metric presented as official, without its basis in text and footnote, or "
        "not labelled unverified",
    ),
    RuleInfo("DRV-02", "-", "claim: a per-accelerator metric for a result of unknown accelerator count"),
    RuleInfo("CMB-01", "-", "claim: a composite of several scores without its method of combination"),
    RuleInfo("PWR-01", "-", "claim: a per-watt metric without MLPerf-measured system power"),
    RuleInfo(
        "LBL-01",
        "-",
        "claim: a cited result without organization, benchmark and version, and system in the text",
    ),
    RuleInfo(
        "LBL-02",
        "-",
        "claim: a footnote without suite, version, division, scenario, retrieval, result ID, legend",
    ),
    RuleInfo("TM-01", "-", "claim: MLPerf without ®, or as noun, verb, plural or possessive"),
)


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

    # ---- the rules -----------------------------------------------------------------------------------------
    def run(self) -> list[Issue]:
        mlperf = [r for r in self.results if r.mlperf]
        self.non_mlperf_mix()
        if len(mlperf) >= 2:
            self.same_benchmark(mlperf)
            self.same_scenario(mlperf)
            self.versions(mlperf)
            self.accelerator_counts(mlperf)
            self.server_metric(mlperf)
        elif mlperf:
            self.server_metric(mlperf)
        self.divisions(mlperf)
        self.availability(mlperf)
        self.audit_wording(mlperf)
        self.power_vs_performance()
        self.stated_ratio()
        self.verification()
        self.derived()
        self.labels(mlperf)
        return self.issues

    def audit_wording(self, rs: list[ResolvedResult]) -> None:
        """AVL-05: only Closed + Available results are auditable; DIV-03: Open results run no compliance tests."""
        if re.search(r"\baudit(ed)?\b", self.text, re.I):
            bad = [
                r
                for r in rs
                if not (r.verified and r.division in ("closed", "network") and r.availability == "available")
            ]
            if bad:
                self.require(
                    "AVL-05",
                    f"the text speaks of an audit, but {', '.join(self.name(r) for r in bad)} "
                    f"{'is' if len(bad) == 1 else 'are'} not a published Closed + Available result",
                    "not describe these results as audited",
                    False,
                    self.ids(bad),
                )
        if re.search(r"\bcomplian(t|ce)\b", self.text, re.I):
            open_rs = [r for r in rs if r.division == "open"]
            if open_rs:
                self.require(
                    "DIV-03",
                    f"the text speaks of compliance, but {', '.join(self.name(r) for r in open_rs)} "
                    "is Open division, which runs no compliance tests",
                    "not describe Open results as compliance-tested",
                    False,
                    self.ids(open_rs),
                )

    def power_vs_performance(self) -> None:
        """CMP-03: inference performance results and power results are not comparable with each other."""
        power = [r for r in self.results if (r.units or "") in POWER_UNITS]
        perf = [r for r in self.results if r.units and r.units not in POWER_UNITS]
        if power and perf:
            self.block(
                "CMP-03",
                f"power results ({', '.join(self.name(r) for r in power)}) compared with performance "
                f"results ({', '.join(self.name(r) for r in perf)})",
                self.ids(power + perf),
            )

    def stated_ratio(self) -> None:
        """VER-05: a stated factor ("1.5x") must follow from the cited numbers (either direction)."""
        stated = stated_factor(self.claim.comparison or "") or stated_factor(self.text)
        rs = [r for r in self.results if r.result]
        if stated is None or len(rs) < 2:
            return
        a, b = rs[0], rs[1]
        va, vb = a.result or 0.0, b.result or 0.0
        if Derivation.PER_ACCELERATOR in self.metric.derivations:
            if not (a.accelerators and b.accelerators):
                return
            va, vb = va / a.accelerators, vb / b.accelerators
        ratios = (va / vb, vb / va)
        ok = any(abs(x - stated) <= 0.05 * stated for x in ratios)
        basis = " per accelerator" if Derivation.PER_ACCELERATOR in self.metric.derivations else ""
        self.require(
            "VER-05",
            f"the claim states {stated:g}x; the cited numbers{basis} give {ratios[0]:.3g}x "
            f"({self.name(a)} / {self.name(b)}) or {ratios[1]:.3g}x the other way",
            "state a factor the cited numbers support (within 5 %)",
            ok,
            (a.index, b.index),
        )

    def non_mlperf_mix(self) -> None:
        mlperf = [r for r in self.results if r.mlperf]
        other = [r for r in self.results if not r.mlperf]
        if mlperf and other:
            self.block(
                "CMP-05",
                f"{', '.join(self.name(r) for r in other)} {'is' if len(other) == 1 else 'are'} not an MLPerf "
                f"result (peer tool or own harness), compared with {', '.join(self.name(r) for r in mlperf)}",
                self.ids(other + mlperf),
            )

    def same_benchmark(self, rs: list[ResolvedResult]) -> None:
        missing = [r for r in rs if r.benchmark is None]
        for r in missing:
            self.block("CMP-01", f"{self.name(r)} names no benchmark", (r.index,))
        named = [r for r in rs if r.benchmark is not None]
        names = {self.bench_name(r) for r in named}
        if len(names) <= 1 or Derivation.COMPOSITE in self.metric.derivations:
            return
        families = {n.rsplit("-99", 1)[0] if n else n for n in names}
        listing = "; ".join(f"{self.name(r)}: {self.bench_name(r)}" for r in named)
        if len(families) == 1:
            self.block(
                "CMP-01",
                f"the 99% and 99.9% accuracy variants are different benchmarks: {listing}",
                self.ids(named),
            )
        else:
            self.block("CMP-01", f"different benchmarks: {listing}", self.ids(named))

    def same_scenario(self, rs: list[ResolvedResult]) -> None:
        for r in rs:
            if r.scenario is None:
                self.block("CMP-01", f"{self.name(r)} names no scenario", (r.index,))
        scen = {r.scenario for r in rs if r.scenario is not None}
        if len(scen) > 1 and Derivation.COMPOSITE not in self.metric.derivations:
            listing = "; ".join(f"{self.name(r)}: {r.scenario.value}" for r in rs if r.scenario)
            rule = "CMP-09" if scen == {Scenario.SERVER, Scenario.INTERACTIVE} else "CMP-01"
            self.block(rule, f"different scenarios: {listing}", self.ids(rs))

    def versions(self, rs: list[ResolvedResult]) -> None:
        versions = {r.version for r in rs if r.version}
        if len(versions) < 2:
            return
        ref = rs[0]
        for other in rs[1:]:
            if not (ref.version and other.version) or ref.version == other.version:
                continue
            bench = self.bench_name(ref) or ""
            suite = (ref.suite or other.suite or "datacenter").split(",")[0]
            compat = self.md.compatibility_of(bench, suite, ref.version, other.version)
            pair = f"{self.name(ref)} is v{ref.version}, {self.name(other)} is v{other.version}"
            if ref.scenario is Scenario.MULTI_STREAM and _spans_v1_v2(ref.version, other.version):
                self.block(
                    "CMP-04",
                    f"MultiStream before v2.0 is not compatible with v2.0+: {pair}",
                    (ref.index, other.index),
                )
            elif compat is Compatibility.INCOMPATIBLE:
                self.block(
                    "CMP-02",
                    f"{pair}: not in one compatibility group of '{bench}' ({suite}) in the "
                    "MLPerf Compatibility Table",
                    (ref.index, other.index),
                )
            elif compat is Compatibility.UNKNOWN:
                self.block(
                    "CMP-02",
                    f"{pair}: the Compatibility Table does not cover '{bench}' ({suite}) for both "
                    "rounds; compatibility is undetermined",
                    (ref.index, other.index),
                )
            else:
                ok = mentions_version(self.text, ref.version) and mentions_version(self.text, other.version)
                self.require(
                    "CMP-06",
                    f"{pair} (compatible rounds)",
                    f"name both versions (v{ref.version}, v{other.version}) in the main text",
                    ok,
                    (ref.index, other.index),
                )

    def accelerator_counts(self, rs: list[ResolvedResult]) -> None:
        known = [r for r in rs if r.accelerators is not None]
        unknown = [r for r in rs if r.accelerators is None]
        counts = {r.accelerators for r in known}
        if len(counts) > 1:
            assert all(r.accelerators is not None for r in known)
            listing = ", ".join(f"{self.name(r)}: {r.accelerators}" for r in known)
            ok = all(mentions_count(self.text, r.accelerators or 0) for r in known)
            self.require(
                "CMP-06",
                f"different accelerator (chip) counts — {listing}",
                "identify each system's accelerator count in the main text (e.g. '8 GPUs vs 4 GPUs')",
                ok,
                self.ids(known),
            )
        if unknown and known and Derivation.PER_ACCELERATOR not in self.metric.derivations:
            self.require(
                "CMP-06",
                f"the accelerator count of {', '.join(self.name(r) for r in unknown)} is not given; "
                "a difference in chip count must be identified",
                "give 'accelerators:' for every result and name the counts in the text",
                False,
                self.ids(unknown),
            )

    def server_metric(self, rs: list[ResolvedResult]) -> None:
        server = [r for r in rs if r.scenario in (Scenario.SERVER, Scenario.INTERACTIVE)]
        if not server:
            return
        for r in server:
            if r.server_metric is None:
                self.require(
                    "D-16",
                    f"{self.name(r)} is a Server figure of unstated basis; published v{r.version or '5.x'} "
                    "Server results are completed rates (result_completed_samples_per_sec / "
                    "result_completed_tokens_per_second), while the Rules FAQ names scheduled samples/s",
                    "state 'server_metric: completed' or 'scheduled' for it (and compare like with like)",
                    False,
                    (r.index,),
                )
        bases = {r.server_metric for r in server if r.server_metric is not None}
        if len(bases) > 1:
            listing = "; ".join(f"{self.name(r)}: {r.server_metric.value}" for r in server if r.server_metric)
            self.block(
                "D-16",
                f"Server figures on different bases (completed vs scheduled samples/s): {listing}",
                self.ids(server),
            )
            return
        if len(bases) == 1:
            basis = next(iter(bases))
            other = ServerMetric.SCHEDULED if basis is ServerMetric.COMPLETED else ServerMetric.COMPLETED
            says_other = mentions(self.text, other.value)
            self.require(
                "D-16",
                f"the Server figures are {basis.value} rates"
                + (f" but the text calls them {other.value}" if says_other else ""),
                f"describe them as {basis.value} (not {other.value}) samples/s",
                not says_other,
                self.ids(server),
            )

    def divisions(self, rs: list[ResolvedResult]) -> None:
        divisions = {r.division for r in rs if r.division}
        open_rs = [r for r in rs if r.division == "open"]
        if open_rs:
            ok = any(mentions(self.text, p) for p in ("MLPerf® Open", "MLPerf Open", "MLPerf(R) Open"))
            self.require(
                "DIV-01",
                f"{', '.join(self.name(r) for r in open_rs)} {'is' if len(open_rs) == 1 else 'are'} "
                "Open division",
                "call it 'MLPerf® Open' in the text",
                ok,
                self.ids(open_rs),
            )
        if "open" in divisions and divisions & {"closed", "network"}:
            closed = [r for r in rs if r.division in ("closed", "network")]
            stated = bool(self.claim.open_deviations) or any(
                mentions(t, w)
                for t in (self.text, self.footnote or "")
                for w in ("not qualify", "would not qualify", "does not qualify")
            )
            self.require(
                "CMP-07",
                f"Open ({', '.join(self.name(r) for r in open_rs)}) compared with Closed "
                f"({', '.join(self.name(r) for r in closed)})",
                "state how the Open result would not qualify as Closed (model, accuracy, latency, scenario, "
                "retraining) — 'open_deviations:' or in the text",
                stated,
                self.ids(open_rs + closed),
            )
            both = mentions(self.text, "Open") and mentions(self.text, "Closed")
            self.require(
                "CMP-06",
                "the results differ in division",
                "name both divisions (Open, Closed) in the main text",
                both,
                self.ids(open_rs + closed),
            )

    def availability(self, rs: list[ResolvedResult]) -> None:
        labels = {
            "preview": ("AVL-02", ("Preview",)),
            "rdi": (
                "AVL-03",
                ("RDI", "Research, Development, or Internal", "Research, Development or Internal"),
            ),
        }
        for r in rs:
            if r.availability not in labels:
                continue
            rule, words = labels[r.availability]
            ok = any(mentions(self.text, w) for w in words)
            as_available = mentions(self.text, "available") and not ok
            self.require(
                rule,
                f"{self.name(r)} is in the {words[0]} category"
                + (" but the text presents it as available" if as_available else ""),
                f"label it '{words[0]}' next to the result; never present it as available",
                ok,
                (r.index,),
            )
        cats = {r.availability for r in rs if r.availability}
        if len(cats) > 1:
            ok = all(any(mentions(self.text, w) for w in labels[c][1]) for c in cats if c in labels)
            self.require(
                "CMP-06",
                f"the results differ in availability category ({', '.join(sorted(cats))})",
                "identify each result's category in the main text",
                ok,
                self.ids(rs),
            )

    def verification(self) -> None:
        unverified = [r for r in self.results if not r.verified and r.mlperf]
        verified = [r for r in self.results if r.verified]
        sentence = self.md.sentence("unverified_statement")
        for r in unverified:
            near = has_unverified_near(self.text, r.result)
            self.require(
                "VER-02",
                f"{self.name(r)} is not from an MLCommons-reviewed submission",
                "write 'unverified' next to its score",
                near,
                (r.index,),
            )
            has_sentence = sentence.lower() in (self.text + " " + (self.footnote or "")).lower()
            self.require(
                "VER-02",
                f"{self.name(r)} is unverified",
                f"carry the sentence “{sentence}”",
                has_sentence or self.footnote is None,
                (r.index,),
            )
        if unverified:
            exempt = tuple(r.result for r in verified if r.result is not None)
            words = official_wording(self.text, exempt)
            self.require(
                "VER-04",
                f"unverified results ({', '.join(self.name(r) for r in unverified)})"
                + (f" are described as {', '.join(repr(w) for w in words)}" if words else ""),
                "never call unverified numbers official / verified / certified",
                not words,
                self.ids(unverified),
            )
        if unverified and verified:
            fn = self.md.sentence("unverified_comparison_footnote")
            self.require(
                "CMP-08",
                "a verified result is compared with an unverified one",
                f"footnote: “{fn}”",
                self.in_footnote(norm(fn) in norm(self.footnote or "")),
                self.ids(unverified + verified),
            )
            self.require(
                "CMP-06",
                "the results differ in verified status",
                "say in the main text which results are unverified",
                mentions(self.text, "unverified"),
                self.ids(unverified + verified),
            )

    def derived(self) -> None:
        d = self.metric.derivations
        if not d:
            return
        kinds = ", ".join(x.value for x in d)
        if Derivation.PER_ACCELERATOR in d:
            missing = [r for r in self.results if r.accelerators is None]
            if missing:
                self.block(
                    "DRV-02",
                    f"per-accelerator metric, but the accelerator count of "
                    f"{', '.join(self.name(r) for r in missing)} is unknown",
                    self.ids(missing),
                )
        if Derivation.PER_WATT in d:
            for r in self.results:
                if r.verified and not r.has_power:
                    self.block(
                        "PWR-01",
                        f"per-watt metric, but {self.name(r)} has no MLPerf power measurement "
                        "(has_power is false): no proxy power may be used",
                        (r.index,),
                    )
                elif not r.verified and (r.power_basis or "") not in ("mlperf-power", "mlperf power"):
                    basis = r.power_basis or "unstated"
                    self.block(
                        "PWR-01",
                        f"per-watt metric, but the power of {self.name(r)} is '{basis}', not "
                        "system power measured with the MLPerf Power workflow",
                        (r.index,),
                    )
        if Derivation.COMPOSITE in d:
            described = bool(self.claim.combination) or any(
                mentions(self.text, w)
                for w in ("geometric mean", "geomean", "arithmetic mean", "average of", "sum of")
            )
            self.require(
                "CMB-01",
                "a composite of several scores",
                "describe the method of combination ('combination:' or in the text) and cite each score",
                described,
                self.ids(self.results),
            )
        words = official_wording(self.text)
        self.require(
            "DRV-01",
            f"the metric is derived ({kinds}), not an official MLPerf metric"
            + (f"; the text says {', '.join(repr(w) for w in words)}" if words else ""),
            "never present it as official or verified",
            not words,
            self.ids(self.results),
        )
        basis_text = self.metric.from_text or _says_derivation(self.text, d)
        self.require(
            "DRV-01",
            f"derived metric ({kinds})",
            "state the basis of the derivation in the main text",
            basis_text,
            self.ids(self.results),
        )
        self.require(
            "DRV-01",
            f"derived metric ({kinds})",
            "state the basis of the derivation in the footnote",
            self.in_footnote(_says_derivation(self.footnote or "", d)),
            self.ids(self.results),
        )
        self.require(
            "DRV-01",
            f"derived metric ({kinds}) follows the rules for unverified scores",
            "label the derived figure 'unverified'",
            mentions(self.text, "unverified"),
            self.ids(self.results),
        )

    def labels(self, rs: list[ResolvedResult]) -> None:
        verified = [r for r in rs if r.verified]
        for r in verified:
            missing = []
            if (
                r.submitter
                and not mentions(self.text, r.submitter)
                and norm(r.submitter) not in norm(self.text)
            ):
                missing.append(f"organization '{r.submitter}'")
            if r.benchmark and not mentions_benchmark(self.text, r.benchmark):
                missing.append(f"benchmark '{r.benchmark}'")
            if r.version and not mentions_version(self.text, r.version):
                missing.append(f"version 'v{r.version}'")
            if not _mentions_system(self.text, r):
                missing.append(f"system '{r.system or r.label}'")
            self.require(
                "LBL-01",
                f"{self.name(r)} is cited",
                "name the submitting organization, benchmark and version, and system under test in the main text"
                + (f" (missing: {', '.join(missing)})" if missing else ""),
                not missing,
                (r.index,),
            )
        quoted = (self.md.sentence("trademark_legend"), self.md.sentence("unverified_comparison_footnote"))
        problems = trademark_problems(self.text + " " + (self.footnote or ""), quoted)
        if problems:
            self.require(
                "TM-01",
                "; ".join(problems),
                "write 'MLPerf®', never as noun, verb, plural or possessive",
                False,
            )
        if self.footnote is not None and verified:
            lacking = []
            for r in verified:
                if r.id and r.id not in self.footnote:
                    lacking.append(f"entry {r.id}")
                if r.scenario and not mentions(self.footnote, r.scenario.value):
                    lacking.append(f"scenario {r.scenario.value} of {r.id}")
            for word, what in (("Inference", "suite"), ("Retrieved", "date and source of retrieval")):
                if not mentions(self.footnote, word):
                    lacking.append(what)
            if norm(self.md.sentence("trademark_legend")) not in norm(self.footnote):
                lacking.append("trademark legend")
            self.require(
                "LBL-02",
                "the claim carries a footnote",
                "the footnote must give suite, version, division, "
                "benchmark and scenario, date and source of retrieval, result ID and the trademark legend"
                + (f" (missing: {', '.join(lacking)})" if lacking else ""),
                not lacking,
                self.ids(verified),
            )


def quoted_value_finding(where: str, quoted: float, label: str, row: TableRow, path: str) -> Finding:
    """VER-05 of the lookup of a cited result (:mod:`checker.audit.claim.resolve`): the claim quotes a number that is
    not the published one."""
    return registered_finding(
        "VER-05",
        f"{where}: the claim quotes {quoted:g} for {label}; the table says {row.result_text} {row.units or ''}".rstrip(),
        scope=where,
        path=path,
        line=row.line,
        fix=f"quote the published value {row.result_text}",
        case="quoted-value",
    )


def variant_note(rid: str) -> Finding:
    """CMP-01 of the lookup of a cited result: the text names no accuracy variant, so the 99% one was taken (a note,
    not the rule's error)."""
    message = f"{rid}: the text does not say 99.9; took the 99% accuracy variant"
    return registered_finding("CMP-01", message, severity=Severity.INFO, scope="text")


def _spans_v1_v2(a: str, b: str) -> bool:
    def major_minor(v: str) -> tuple[int, int]:
        parts = v.split(".")
        return int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    try:
        va, vb = major_minor(a), major_minor(b)
    except ValueError:
        return False
    return (va <= (1, 1) < (2, 0) <= vb) or (vb <= (1, 1) < (2, 0) <= va)


def _says_derivation(text: str, derivations: tuple[Derivation, ...]) -> bool:
    found = read_metric(text, None).derivations if text else ()
    return all(d in found for d in derivations)


def _mentions_system(text: str, r: ResolvedResult) -> bool:
    candidates = [r.system, r.row.platform if r.row else None]
    if r.row and r.row.accelerator:
        candidates += [
            tok for tok in r.row.accelerator.replace("-", " ").split() if any(ch.isdigit() for ch in tok)
        ]
    return any(c and (mentions(text, c) or (len(norm(c)) >= 4 and norm(c) in norm(text))) for c in candidates)
