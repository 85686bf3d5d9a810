"""The citation and footnote a claim must carry (LBL-02, LBL-03, VER-02, CMP-08, DRV-01, CMB-01, TM-01).

Template (MSG:62 and the LBL-03 auditor check)::

    MLPerf® v5.1 Inference Closed llama2-70b-99 Offline. Retrieved from <url> <date>, entry 5.1-0001.
    Result verified by MLCommons Association.
"""

from __future__ import annotations

from datetime import datetime, timezone

from checker.audit.claim.model import Claim, Derivation, Metric, Origin, ResolvedResult
from rules.messaging import MessagingData

RESULTS_PAGE = "https://mlcommons.org/benchmarks/inference-{suite}/"
# what the footnote holds where the claim file does not say (``combination:``): the footnote is not ready to publish
COMBINATION_PLACEHOLDER = "<describe the method of combination>"
PLACEHOLDERS = {COMBINATION_PLACEHOLDER: "combination:"}


def placeholders(lines: tuple[str, ...] | list[str]) -> list[str]:
    """The claim file keys whose placeholders the printed footnote still holds."""
    return [key for mark, key in PLACEHOLDERS.items() if any(mark in line for line in lines)]


def retrieval(claim: Claim, result: ResolvedResult) -> tuple[str, str]:
    """(url, date) of retrieval: the claim's, else the MLCommons results page of the suite and today (UTC)."""
    suite = (result.suite or "datacenter").split(",")[0].strip() or "datacenter"
    url = claim.url or RESULTS_PAGE.format(suite=suite)
    date = claim.retrieved or datetime.now(timezone.utc).strftime("%d %B %Y").lstrip("0")
    return url, date


def _entry(r: ResolvedResult) -> str:
    """``entry 5.1-0001``; a table without result IDs (v6.1) names the row by organisation, system, model and
    scenario instead."""
    if r.id:
        return f"entry {r.id}"
    if r.row is not None:
        return f"row {r.row.identity()} (the table has no result ID)"
    who = " / ".join(p for p in (r.submitter, r.system, r.benchmark, r.scenario.value if r.scenario else None) if p)
    return f"result {who or r.label} (no result ID)"


def citation(claim: Claim, r: ResolvedResult, md: MessagingData) -> str:
    if r.origin is Origin.PEER and r.peer is not None:
        run = r.peer
        return (
            f"{run.tool.value}{' ' + run.tool_version if run.tool_version else ''} run {run.run_id or '(no run id)'} "
            f"({run.path}); not an MLPerf® result. {md.sentence('unverified_statement')}"
        )
    version = f"v{r.version}" if r.version else "v?"
    division = (r.division or "").capitalize()
    what = " ".join(p for p in (r.benchmark, r.scenario.value if r.scenario else None) if p)
    if r.verified:
        url, date = retrieval(claim, r)
        return (
            f"MLPerf® {version} Inference {division} {what}. Retrieved from {url} {date}, {_entry(r)}. "
            f"{md.sentence('verified_statement')}"
        )
    by = f" measured by {r.submitter}" if r.submitter else ""
    if not r.mlperf:  # an own number from another tool: no MLPerf® suite, version or division to name
        return f"{r.label}{by}{', ' + what if what else ''}; not an MLPerf® result. {md.sentence('unverified_statement')}"
    head = " ".join(p for p in ("MLPerf®", version, "Inference", division, what) if p)
    return f"{head}, unverified result ({r.label}{by}). {md.sentence('unverified_statement')}"


def footnote(claim: Claim, metric: Metric, results: list[ResolvedResult], md: MessagingData) -> list[str]:
    lines = [f"[{r.index}] {citation(claim, r, md)}" for r in results]
    if Derivation.PER_ACCELERATOR in metric.derivations:
        counts = ", ".join(f"[{r.index}] {r.accelerators if r.accelerators else '?'}" for r in results)
        lines.append(
            f"Per-accelerator figures are the system result divided by its accelerator count ({counts}); "
            "they are derived, not MLPerf® metrics, and are not verified by MLCommons Association."
        )
    if Derivation.PER_WATT in metric.derivations:
        lines.append(
            "Per-watt figures divide the result by the MLPerf®-measured system power of the same submission; "
            "they are derived and not verified by MLCommons Association."
        )
    if Derivation.COST in metric.derivations:
        lines.append(
            "Cost figures are derived from the result and the cost basis stated in the text; they are not "
            "MLPerf® metrics and are not verified by MLCommons Association."
        )
    if Derivation.COMPOSITE in metric.derivations:
        method = claim.combination or COMBINATION_PLACEHOLDER
        lines.append(
            f"Composite of the cited scores, combined as: {method}. The composite is not sanctioned by "
            "MLCommons and is not an official or verified MLPerf® result."
        )
    if any(r.verified for r in results) and any(not r.verified for r in results):
        lines.append(md.sentence("unverified_comparison_footnote"))
    lines.append(md.sentence("trademark_legend"))
    return lines
