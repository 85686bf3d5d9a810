"""The claim's figures: a stated factor or a quoted number the published results must support (VER-05), and a
derived metric (DRV-01, DRV-02 per accelerator, PWR-01 per watt, CMB-01 a composite).
:class:`checker.audit.claim.rules.ClaimRules` calls them; :mod:`checker.audit.claim.resolve` calls
:func:`quoted_value_finding`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.audit.claim.model import Derivation
from checker.audit.claim.parse import read_metric
from checker.audit.claim.text import mentions, official_wording, stated_factor
from checker.audit.table.model import TableRow
from checker.checks.rule_registry import Case, RuleInfo, register, registered_finding
from checker.findings import Finding

if TYPE_CHECKING:  # the claim's judge calls this module: its type only
    from checker.audit.claim.rules import ClaimRules

# The messaging rules this module judges (ids and text: rules/data/messaging.yaml). A blocker or a requirement the
# claim does not meet is an ERROR, a requirement it meets INFO (checker.audit.claim.report.issue_finding).
RULES = register(
    __name__,
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
)


def stated_ratio(ctx: ClaimRules) -> None:
    """VER-05: a stated factor ("1.5x") must follow from the cited numbers (either direction)."""
    stated = stated_factor(ctx.claim.comparison or "") or stated_factor(ctx.text)
    rs = [r for r in ctx.results if r.result]
    if stated is None or len(rs) < 2:
        return
    a, b = rs[0], rs[1]
    va, vb = a.result or 0.0, b.result or 0.0
    if Derivation.PER_ACCELERATOR in ctx.metric.derivations:
        if not (a.accelerators and b.accelerators):
            return
        va, vb = va / a.accelerators, vb / b.accelerators
    ratios = (va / vb, vb / va)
    ok = any(abs(x - stated) <= 0.05 * stated for x in ratios)
    basis = " per accelerator" if Derivation.PER_ACCELERATOR in ctx.metric.derivations else ""
    ctx.require(
        "VER-05",
        f"the claim states {stated:g}x; the cited numbers{basis} give {ratios[0]:.3g}x "
        f"({ctx.name(a)} / {ctx.name(b)}) or {ratios[1]:.3g}x the other way",
        "state a factor the cited numbers support (within 5 %)",
        ok,
        (a.index, b.index),
    )


def derived(ctx: ClaimRules) -> None:
    d = ctx.metric.derivations
    if not d:
        return
    kinds = ", ".join(x.value for x in d)
    if Derivation.PER_ACCELERATOR in d:
        missing = [r for r in ctx.results if r.accelerators is None]
        if missing:
            ctx.block(
                "DRV-02",
                f"per-accelerator metric, but the accelerator count of "
                f"{', '.join(ctx.name(r) for r in missing)} is unknown",
                ctx.ids(missing),
            )
    if Derivation.PER_WATT in d:
        for r in ctx.results:
            if r.verified and not r.has_power:
                ctx.block(
                    "PWR-01",
                    f"per-watt metric, but {ctx.name(r)} has no MLPerf power measurement "
                    "(has_power is false): no proxy power may be used",
                    (r.index,),
                )
            elif not r.verified and (r.power_basis or "") not in ("mlperf-power", "mlperf power"):
                basis = r.power_basis or "unstated"
                ctx.block(
                    "PWR-01",
                    f"per-watt metric, but the power of {ctx.name(r)} is '{basis}', not "
                    "system power measured with the MLPerf Power workflow",
                    (r.index,),
                )
    if Derivation.COMPOSITE in d:
        described = bool(ctx.claim.combination) or any(
            mentions(ctx.text, w)
            for w in ("geometric mean", "geomean", "arithmetic mean", "average of", "sum of")
        )
        ctx.require(
            "CMB-01",
            "a composite of several scores",
            "describe the method of combination ('combination:' or in the text) and cite each score",
            described,
            ctx.ids(ctx.results),
        )
    words = official_wording(ctx.text)
    ctx.require(
        "DRV-01",
        f"the metric is derived ({kinds}), not an official MLPerf metric"
        + (f"; the text says {', '.join(repr(w) for w in words)}" if words else ""),
        "never present it as official or verified",
        not words,
        ctx.ids(ctx.results),
    )
    basis_text = ctx.metric.from_text or _says_derivation(ctx.text, d)
    ctx.require(
        "DRV-01",
        f"derived metric ({kinds})",
        "state the basis of the derivation in the main text",
        basis_text,
        ctx.ids(ctx.results),
    )
    ctx.require(
        "DRV-01",
        f"derived metric ({kinds})",
        "state the basis of the derivation in the footnote",
        ctx.in_footnote(_says_derivation(ctx.footnote or "", d)),
        ctx.ids(ctx.results),
    )
    ctx.require(
        "DRV-01",
        f"derived metric ({kinds}) follows the rules for unverified scores",
        "label the derived figure 'unverified'",
        mentions(ctx.text, "unverified"),
        ctx.ids(ctx.results),
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


def _says_derivation(text: str, derivations: tuple[Derivation, ...]) -> bool:
    found = read_metric(text, None).derivations if text else ()
    return all(d in found for d in derivations)
