"""Whether the cited results may be compared at all, and what a comparison must disclose: the messaging rules
CMP-01 to CMP-09 (benchmark, scenario, round, MultiStream across v2.0, MLPerf vs non-MLPerf, power vs performance,
Open vs Closed, verified vs unverified, and the differences the main text must name) and D-16 (the Server metric's
basis, from the MLPerf Compatibility Table). :class:`checker.audit.claim.rules.ClaimRules` calls them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.audit.claim.labelling import AVAILABILITY_LABELS
from checker.audit.claim.model import Derivation, ResolvedResult, ServerMetric
from checker.audit.claim.text import mentions, mentions_count, mentions_version, norm
from checker.audit.table.model import POWER_UNITS
from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding, Severity
from rules.messaging import Compatibility
from rules.models import Scenario

if TYPE_CHECKING:  # the claim's judge calls this module: its type only
    from checker.audit.claim.rules import ClaimRules

# The messaging rules this module judges (ids and text: rules/data/messaging.yaml). A blocker or a requirement the
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
)


def non_mlperf_mix(ctx: ClaimRules) -> None:
    mlperf = [r for r in ctx.results if r.mlperf]
    other = [r for r in ctx.results if not r.mlperf]
    if mlperf and other:
        ctx.block(
            "CMP-05",
            f"{', '.join(ctx.name(r) for r in other)} {'is' if len(other) == 1 else 'are'} not an MLPerf "
            f"result (peer tool or own harness), compared with {', '.join(ctx.name(r) for r in mlperf)}",
            ctx.ids(other + mlperf),
        )


def same_benchmark(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    missing = [r for r in rs if r.benchmark is None]
    for r in missing:
        ctx.block("CMP-01", f"{ctx.name(r)} names no benchmark", (r.index,))
    named = [r for r in rs if r.benchmark is not None]
    names = {ctx.bench_name(r) for r in named}
    if len(names) <= 1 or Derivation.COMPOSITE in ctx.metric.derivations:
        return
    families = {n.rsplit("-99", 1)[0] if n else n for n in names}
    listing = "; ".join(f"{ctx.name(r)}: {ctx.bench_name(r)}" for r in named)
    if len(families) == 1:
        ctx.block(
            "CMP-01",
            f"the 99% and 99.9% accuracy variants are different benchmarks: {listing}",
            ctx.ids(named),
        )
    else:
        ctx.block("CMP-01", f"different benchmarks: {listing}", ctx.ids(named))


def same_scenario(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    for r in rs:
        if r.scenario is None:
            ctx.block("CMP-01", f"{ctx.name(r)} names no scenario", (r.index,))
    scen = {r.scenario for r in rs if r.scenario is not None}
    if len(scen) > 1 and Derivation.COMPOSITE not in ctx.metric.derivations:
        listing = "; ".join(f"{ctx.name(r)}: {r.scenario.value}" for r in rs if r.scenario)
        rule = "CMP-09" if scen == {Scenario.SERVER, Scenario.INTERACTIVE} else "CMP-01"
        ctx.block(rule, f"different scenarios: {listing}", ctx.ids(rs))


def versions(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    versions = {r.version for r in rs if r.version}
    if len(versions) < 2:
        return
    ref = rs[0]
    for other in rs[1:]:
        if not (ref.version and other.version) or ref.version == other.version:
            continue
        bench = ctx.bench_name(ref) or ""
        suite = (ref.suite or other.suite or "datacenter").split(",")[0]
        compat = ctx.md.compatibility_of(bench, suite, ref.version, other.version)
        pair = f"{ctx.name(ref)} is v{ref.version}, {ctx.name(other)} is v{other.version}"
        if ref.scenario is Scenario.MULTI_STREAM and _spans_v1_v2(ref.version, other.version):
            ctx.block(
                "CMP-04",
                f"MultiStream before v2.0 is not compatible with v2.0+: {pair}",
                (ref.index, other.index),
            )
        elif compat is Compatibility.INCOMPATIBLE:
            ctx.block(
                "CMP-02",
                f"{pair}: not in one compatibility group of '{bench}' ({suite}) in the "
                "MLPerf Compatibility Table",
                (ref.index, other.index),
            )
        elif compat is Compatibility.UNKNOWN:
            ctx.block(
                "CMP-02",
                f"{pair}: the Compatibility Table does not cover '{bench}' ({suite}) for both "
                "rounds; compatibility is undetermined",
                (ref.index, other.index),
            )
        else:
            ok = mentions_version(ctx.text, ref.version) and mentions_version(ctx.text, other.version)
            ctx.require(
                "CMP-06",
                f"{pair} (compatible rounds)",
                f"name both versions (v{ref.version}, v{other.version}) in the main text",
                ok,
                (ref.index, other.index),
            )


def accelerator_counts(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    known = [r for r in rs if r.accelerators is not None]
    unknown = [r for r in rs if r.accelerators is None]
    counts = {r.accelerators for r in known}
    if len(counts) > 1:
        assert all(r.accelerators is not None for r in known)
        listing = ", ".join(f"{ctx.name(r)}: {r.accelerators}" for r in known)
        ok = all(mentions_count(ctx.text, r.accelerators or 0) for r in known)
        ctx.require(
            "CMP-06",
            f"different accelerator (chip) counts — {listing}",
            "identify each system's accelerator count in the main text (e.g. '8 GPUs vs 4 GPUs')",
            ok,
            ctx.ids(known),
        )
    if unknown and known and Derivation.PER_ACCELERATOR not in ctx.metric.derivations:
        ctx.require(
            "CMP-06",
            f"the accelerator count of {', '.join(ctx.name(r) for r in unknown)} is not given; "
            "a difference in chip count must be identified",
            "give 'accelerators:' for every result and name the counts in the text",
            False,
            ctx.ids(unknown),
        )


def server_metric(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    server = [r for r in rs if r.scenario in (Scenario.SERVER, Scenario.INTERACTIVE)]
    if not server:
        return
    for r in server:
        if r.server_metric is None:
            ctx.require(
                "D-16",
                f"{ctx.name(r)} is a Server figure of unstated basis; published v{r.version or '5.x'} "
                "Server results are completed rates (result_completed_samples_per_sec / "
                "result_completed_tokens_per_second), while the Rules FAQ names scheduled samples/s",
                "state 'server_metric: completed' or 'scheduled' for it (and compare like with like)",
                False,
                (r.index,),
            )
    bases = {r.server_metric for r in server if r.server_metric is not None}
    if len(bases) > 1:
        listing = "; ".join(f"{ctx.name(r)}: {r.server_metric.value}" for r in server if r.server_metric)
        ctx.block(
            "D-16",
            f"Server figures on different bases (completed vs scheduled samples/s): {listing}",
            ctx.ids(server),
        )
        return
    if len(bases) == 1:
        basis = next(iter(bases))
        other = ServerMetric.SCHEDULED if basis is ServerMetric.COMPLETED else ServerMetric.COMPLETED
        says_other = mentions(ctx.text, other.value)
        ctx.require(
            "D-16",
            f"the Server figures are {basis.value} rates"
            + (f" but the text calls them {other.value}" if says_other else ""),
            f"describe them as {basis.value} (not {other.value}) samples/s",
            not says_other,
            ctx.ids(server),
        )


def open_vs_closed(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    """CMP-07, CMP-06: Open compared with Closed says how the Open result would not qualify, and names both
    divisions."""
    divisions = {r.division for r in rs if r.division}
    if "open" in divisions and divisions & {"closed", "network"}:
        open_rs = [r for r in rs if r.division == "open"]
        closed = [r for r in rs if r.division in ("closed", "network")]
        stated = bool(ctx.claim.open_deviations) or any(
            mentions(t, w)
            for t in (ctx.text, ctx.footnote or "")
            for w in ("not qualify", "would not qualify", "does not qualify")
        )
        ctx.require(
            "CMP-07",
            f"Open ({', '.join(ctx.name(r) for r in open_rs)}) compared with Closed "
            f"({', '.join(ctx.name(r) for r in closed)})",
            "state how the Open result would not qualify as Closed (model, accuracy, latency, scenario, "
            "retraining) — 'open_deviations:' or in the text",
            stated,
            ctx.ids(open_rs + closed),
        )
        both = mentions(ctx.text, "Open") and mentions(ctx.text, "Closed")
        ctx.require(
            "CMP-06",
            "the results differ in division",
            "name both divisions (Open, Closed) in the main text",
            both,
            ctx.ids(open_rs + closed),
        )


def availability_mix(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    """CMP-06: results of different availability categories name each one's in the main text."""
    cats = {r.availability for r in rs if r.availability}
    if len(cats) > 1:
        ok = all(
            any(mentions(ctx.text, w) for w in AVAILABILITY_LABELS[c][1])
            for c in cats
            if c in AVAILABILITY_LABELS
        )
        ctx.require(
            "CMP-06",
            f"the results differ in availability category ({', '.join(sorted(cats))})",
            "identify each result's category in the main text",
            ok,
            ctx.ids(rs),
        )


def power_vs_performance(ctx: ClaimRules) -> None:
    """CMP-03: inference performance results and power results are not comparable with each other."""
    power = [r for r in ctx.results if (r.units or "") in POWER_UNITS]
    perf = [r for r in ctx.results if r.units and r.units not in POWER_UNITS]
    if power and perf:
        ctx.block(
            "CMP-03",
            f"power results ({', '.join(ctx.name(r) for r in power)}) compared with performance "
            f"results ({', '.join(ctx.name(r) for r in perf)})",
            ctx.ids(power + perf),
        )


def verified_vs_unverified(ctx: ClaimRules) -> None:
    """CMP-08, CMP-06: verified compared with unverified carries the footnote and says which are unverified."""
    unverified = [r for r in ctx.results if not r.verified and r.mlperf]
    verified = [r for r in ctx.results if r.verified]
    if unverified and verified:
        fn = ctx.md.sentence("unverified_comparison_footnote")
        ctx.require(
            "CMP-08",
            "a verified result is compared with an unverified one",
            f"footnote: “{fn}”",
            ctx.in_footnote(norm(fn) in norm(ctx.footnote or "")),
            ctx.ids(unverified + verified),
        )
        ctx.require(
            "CMP-06",
            "the results differ in verified status",
            "say in the main text which results are unverified",
            mentions(ctx.text, "unverified"),
            ctx.ids(unverified + verified),
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
