"""How the claim must label each cited result: DIV-01 and DIV-03 (an Open result), AVL-02, AVL-03 and AVL-05 (its
availability category, what may be called audited), VER-02 and VER-04 (an unverified result), LBL-01 and LBL-02 (the
citation in the text and its footnote) and TM-01 (the trademark). :class:`checker.audit.claim.rules.ClaimRules` calls
them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from checker.audit.claim.model import ResolvedResult
from checker.audit.claim.text import (
    has_unverified_near,
    mentions,
    mentions_benchmark,
    mentions_version,
    norm,
    official_wording,
    trademark_problems,
)
from checker.checks.rule_registry import RuleInfo, register

if TYPE_CHECKING:  # the claim's judge calls this module: its type only
    from checker.audit.claim.rules import ClaimRules

# The messaging rules this module judges (ids and text: rules/data/messaging.yaml). A blocker or a requirement the
# claim does not meet is an ERROR, a requirement it meets INFO (checker.audit.claim.report.issue_finding).
RULES = register(
    __name__,
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


# an availability category that must be labelled -> (its rule, the words that label it, the first the one to write)
AVAILABILITY_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "preview": ("AVL-02", ("Preview",)),
    "rdi": (
        "AVL-03",
        ("RDI", "Research, Development, or Internal", "Research, Development or Internal"),
    ),
}


def open_label(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    """DIV-01: an Open result is called 'MLPerf® Open'."""
    open_rs = [r for r in rs if r.division == "open"]
    if open_rs:
        ok = any(mentions(ctx.text, p) for p in ("MLPerf® Open", "MLPerf Open", "MLPerf(R) Open"))
        ctx.require(
            "DIV-01",
            f"{', '.join(ctx.name(r) for r in open_rs)} {'is' if len(open_rs) == 1 else 'are'} Open division",
            "call it 'MLPerf® Open' in the text",
            ok,
            ctx.ids(open_rs),
        )


def availability_labels(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    """AVL-02, AVL-03: a Preview or RDI result is labelled so, and never presented as available."""
    for r in rs:
        if r.availability not in AVAILABILITY_LABELS:
            continue
        rule, words = AVAILABILITY_LABELS[r.availability]
        ok = any(mentions(ctx.text, w) for w in words)
        as_available = mentions(ctx.text, "available") and not ok
        ctx.require(
            rule,
            f"{ctx.name(r)} is in the {words[0]} category"
            + (" but the text presents it as available" if as_available else ""),
            f"label it '{words[0]}' next to the result; never present it as available",
            ok,
            (r.index,),
        )


def audit_wording(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    """AVL-05: only Closed + Available results are auditable; DIV-03: Open results run no compliance tests."""
    if re.search(r"\baudit(ed)?\b", ctx.text, re.I):
        bad = [
            r
            for r in rs
            if not (r.verified and r.division in ("closed", "network") and r.availability == "available")
        ]
        if bad:
            ctx.require(
                "AVL-05",
                f"the text speaks of an audit, but {', '.join(ctx.name(r) for r in bad)} "
                f"{'is' if len(bad) == 1 else 'are'} not a published Closed + Available result",
                "not describe these results as audited",
                False,
                ctx.ids(bad),
            )
    if re.search(r"\bcomplian(t|ce)\b", ctx.text, re.I):
        open_rs = [r for r in rs if r.division == "open"]
        if open_rs:
            ctx.require(
                "DIV-03",
                f"the text speaks of compliance, but {', '.join(ctx.name(r) for r in open_rs)} "
                "is Open division, which runs no compliance tests",
                "not describe Open results as compliance-tested",
                False,
                ctx.ids(open_rs),
            )


def unverified_labels(ctx: ClaimRules) -> None:
    """VER-02, VER-04: an unverified result is labelled so, with the required sentence, and never called
    official."""
    unverified = [r for r in ctx.results if not r.verified and r.mlperf]
    verified = [r for r in ctx.results if r.verified]
    sentence = ctx.md.sentence("unverified_statement")
    for r in unverified:
        near = has_unverified_near(ctx.text, r.result)
        ctx.require(
            "VER-02",
            f"{ctx.name(r)} is not from an MLCommons-reviewed submission",
            "write 'unverified' next to its score",
            near,
            (r.index,),
        )
        has_sentence = sentence.lower() in (ctx.text + " " + (ctx.footnote or "")).lower()
        ctx.require(
            "VER-02",
            f"{ctx.name(r)} is unverified",
            f"carry the sentence “{sentence}”",
            has_sentence or ctx.footnote is None,
            (r.index,),
        )
    if unverified:
        exempt = tuple(r.result for r in verified if r.result is not None)
        words = official_wording(ctx.text, exempt)
        ctx.require(
            "VER-04",
            f"unverified results ({', '.join(ctx.name(r) for r in unverified)})"
            + (f" are described as {', '.join(repr(w) for w in words)}" if words else ""),
            "never call unverified numbers official / verified / certified",
            not words,
            ctx.ids(unverified),
        )


def labels(ctx: ClaimRules, rs: list[ResolvedResult]) -> None:
    verified = [r for r in rs if r.verified]
    for r in verified:
        missing = []
        if r.submitter and not mentions(ctx.text, r.submitter) and norm(r.submitter) not in norm(ctx.text):
            missing.append(f"organization '{r.submitter}'")
        if r.benchmark and not mentions_benchmark(ctx.text, r.benchmark):
            missing.append(f"benchmark '{r.benchmark}'")
        if r.version and not mentions_version(ctx.text, r.version):
            missing.append(f"version 'v{r.version}'")
        if not _mentions_system(ctx.text, r):
            missing.append(f"system '{r.system or r.label}'")
        ctx.require(
            "LBL-01",
            f"{ctx.name(r)} is cited",
            "name the submitting organization, benchmark and version, and system under test in the main text"
            + (f" (missing: {', '.join(missing)})" if missing else ""),
            not missing,
            (r.index,),
        )
    quoted = (ctx.md.sentence("trademark_legend"), ctx.md.sentence("unverified_comparison_footnote"))
    problems = trademark_problems(ctx.text + " " + (ctx.footnote or ""), quoted)
    if problems:
        ctx.require(
            "TM-01",
            "; ".join(problems),
            "write 'MLPerf®', never as noun, verb, plural or possessive",
            False,
        )
    if ctx.footnote is not None and rs:
        lacking = _footnote_lacks(ctx, ctx.footnote, verified)
        ctx.require(
            "LBL-02",
            "the claim carries a footnote",
            "carry a footnote that gives suite, version, division, "
            "benchmark and scenario, date and source of retrieval, result ID and the trademark legend"
            + (f" (missing: {', '.join(lacking)})" if lacking else ""),
            not lacking,
            ctx.ids(verified or rs),
        )


# C0 and C1 controls but tab and line breaks, and the Unicode bidi controls: a footnote that holds them reads other
# than it is written (a terminal escape, text shown in another order)
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _footnote_lacks(ctx: ClaimRules, footnote: str, verified: list[ResolvedResult]) -> list[str]:
    """What a footnote the claim carries lacks: per verified result its entry, version, division, benchmark and
    scenario; the suite and the retrieval where any is verified; the trademark legend always (LBL-02's fields, MSG:50);
    and no control characters."""
    lacking = []
    for r in verified:
        name = r.id or r.label
        if r.id and r.id not in footnote:
            lacking.append(f"entry {r.id}")
        if r.version and not mentions_version(footnote, r.version, not_in_ids=True):  # the IDs are in it too
            lacking.append(f"version v{r.version} of {name}")
        if r.division and not mentions(footnote, r.division):
            lacking.append(f"division {r.division.capitalize()} of {name}")
        if r.benchmark and not mentions_benchmark(footnote, r.benchmark):
            lacking.append(f"benchmark {r.benchmark} of {name}")
        if r.scenario and not mentions(footnote, r.scenario.value):
            lacking.append(f"scenario {r.scenario.value} of {name}")
    if verified:
        for word, what in (("Inference", "suite"), ("Retrieved", "date and source of retrieval")):
            if not mentions(footnote, word):
                lacking.append(what)
    if norm(ctx.md.sentence("trademark_legend")) not in norm(footnote):
        lacking.append("trademark legend")
    if _HIDDEN.search(footnote):
        lacking.append("nothing hidden: it holds control or bidi characters")
    return lacking


def _mentions_system(text: str, r: ResolvedResult) -> bool:
    candidates = [r.system, r.row.platform if r.row else None]
    if r.row and r.row.accelerator:
        candidates += [
            tok for tok in r.row.accelerator.replace("-", " ").split() if any(ch.isdigit() for ch in tok)
        ]
    return any(c and (mentions(text, c) or (len(norm(c)) >= 4 and norm(c) in norm(text))) for c in candidates)
