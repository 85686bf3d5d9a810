"""Run every check over a results tree: ``check_tree(root, round) -> CheckReport``.

Per submitter (in parallel processes when ``workers`` > 1): walk the tree once (lstat only), then for each result
directory read each file once, parse lazily, run the check families and compute the official-compatible summary
row. Submitter-, system- and benchmark-level ERRORs that make the official checker skip results are copied into each
affected :class:`ResultEntry`, so ``ResultEntry.valid`` alone gives a result's verdict.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from checker.checks.accuracy import check_accuracy
from checker.checks.catalog import INFO, RuleInfo, register
from checker.checks.compliance import check_compliance
from checker.checks.context import FileCache, ResultContext, SubmitterContext
from checker.checks.endpoints import check_endpoints
from checker.checks.inferred import check_result
from checker.checks.latency import check_latency
from checker.checks.measurements import check_measurements
from checker.checks.performance import check_performance
from checker.checks.power import check_power
from checker.checks.structure import (
    benchmark_findings,
    load_model_mapping,
    required_scenario_findings,
    scenario_finding,
    submitter_findings,
    unknown_entry_findings,
)
from checker.checks.system import check_system
from checker.findings import Finding, Severity, UnusableInput, filter_findings
from checker.result_value import result_units
from checker.results import SUMMARY_CSV_COLUMNS, CheckReport, ResultEntry, SummaryRow
from checker.safe_io import SafeTree, display_name
from checker.tree import ResultDir, discover, hygiene_findings, walk_findings, walk_submitter
from checker.version import tool_version
from rules.models import Round, Scenario

# the rules this module emits (the registry: checker/checks/catalog.py)
RULES = register(
    __name__,
    RuleInfo("TREE-NO-RESULTS", "A4", "submitter without results/ is skipped", INFO),
    RuleInfo("TREE-NOTHING-CHECKED", "-", "no result directory could be checked", beyond=True),
)

RESULT_CHECKS: tuple[Callable[[ResultContext], list[Finding]], ...] = (
    check_measurements,
    check_performance,
    check_result,
    check_latency,
    check_accuracy,
    check_compliance,
    check_power,
)

# an endpoints result (v6.1, MLPerf Endpoints documents instead of LoadGen logs): check_endpoints runs the
# performance, result, latency, accuracy and compliance rules on them
ENDPOINTS_RESULT_CHECKS: tuple[Callable[[ResultContext], list[Finding]], ...] = (
    check_measurements,
    check_endpoints,
)

# Finding families the official checker counts in its per-benchmark ``errors`` counter (summary CSV column)
_ERROR_FAMILIES = (("TREE-SCENARIO",), ("MEAS-",), ("ACC-",), ("PERF-", "LAT-", "INFER-", "POWER-"))


def _copy_into(f: Finding, result: str) -> Finding:
    return f.model_copy(update={"result": result})


def summary_values(
    ctx: ResultContext, result: float, *, power: float | None = None, errors: int = 0
) -> dict[str, str]:
    """One row of the official summary CSV (log_result in the v5.1.1 checker)."""
    d = ctx.system_desc
    assert d is not None  # a summary row is written only for a result whose system description parsed
    rd = ctx.rd
    r = ctx.round
    scen = ctx.scenario
    assert scen is not None
    bm = ctx.benchmark
    # the system fields as the official log_result writes them: str() of the JSON value (SystemDesc.shown)
    notes = d.shown("hw_notes", "") if d.filled("hw_notes") else ""
    if d.filled("sw_notes"):
        notes = (notes + ". " if notes else "") + d.shown("sw_notes")
    if power is None:
        units = result_units(r, bm, scen)
    else:
        units = r.power_units.get(
            scen,
            "Watts" if scen in (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE) else "millijoules",
        )
    wdt = ctx.computed.weight_data_types
    values = {
        "Organization": rd.submitter,
        "Availability": d.shown("status", "").lower(),
        "Division": rd.division,
        "SystemType": d.shown("system_type"),
        "SystemName": d.shown("system_name"),
        "Platform": rd.system,
        "Model": rd.benchmark,
        "MlperfModel": ctx.mlperf_model or "",
        "Scenario": scen.value,
        "Result": str(float(power if power is not None else result)),
        "Accuracy": ctx.computed.accuracy or "",
        "number_of_nodes": d.shown("number_of_nodes"),
        "host_processor_model_name": d.shown("host_processor_model_name"),
        "host_processors_per_node": d.shown("host_processors_per_node"),
        "host_processor_core_count": d.shown("host_processor_core_count"),
        "accelerator_model_name": d.shown("accelerator_model_name"),
        "accelerators_per_node": d.shown("accelerators_per_node"),
        "Location": rd.path,
        "framework": d.shown("framework", ""),
        "operating_system": d.shown("operating_system", ""),
        "notes": notes,
        "compliance": str(ctx.computed.compliance),
        "errors": str(errors),
        "version": r.name,
        "inferred": "1" if ctx.computed.inferred else "0",
        "has_power": str(ctx.computed.power_metric is not None and ctx.computed.power_metric > 0),
        "Units": units,
        "weight_data_types": "" if wdt is None else str(wdt),
    }
    assert tuple(values) == SUMMARY_CSV_COLUMNS
    return values


def _error_categories(findings: list[Finding]) -> int:
    n = 0
    for prefixes in _ERROR_FAMILIES:
        if any(f.severity is Severity.ERROR and f.rule.startswith(prefixes) for f in findings):
            n += 1
    return n


def check_submitter(
    base: Path,
    checked: Path,
    division: str,
    name: str,
    rnd: Round,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> tuple[list[ResultEntry], list[Finding]]:
    """Check one submitter; returns its result entries and its submitter/system/benchmark-level findings.

    ``select`` / ``ignore`` (the CLI's rule filters) decide the verdicts that tree-level findings are computed from
    (A18/A19: a required scenario with a valid result), so a filtered report is consistent with itself."""
    sub = walk_submitter(base, checked, division, name)
    level: list[Finding] = []
    walked = walk_findings(sub)  # what could not be looked at: errors, never skipped silently
    if not sub.has_results_dir:
        level += walked
        if sub.results_kind is None and not any(p == sub.path for p, _ in sub.unreadable):
            level.append(
                Finding(
                    rule="TREE-NO-RESULTS",
                    severity=Severity.INFO,
                    message="no results/ directory: skipped, as the official checker does",
                    scope=sub.path,
                    path=sub.path,
                    source="official checker v5.1.1: check_results_dir L2272",
                )
            )
        return [], level
    tree = SafeTree(base, confine=checked)
    tree.register_walk(sub.path, frozenset(link.path for link in sub.symlinks), sub.file_ids)
    sctx = SubmitterContext(round=rnd, tree=tree, sub=sub, files=FileCache(tree))
    hygiene = walked + hygiene_findings(sub, rnd.structure.file_size_limit_mb)
    mapping = load_model_mapping(sctx)
    level += hygiene + mapping + submitter_findings(sctx)
    copied_sub = [f for f in hygiene + mapping if f.severity is Severity.ERROR]
    entries: list[ResultEntry] = []
    for system in sub.result_systems:
        sys_f = check_system(sctx, system)
        level += sys_f
        copied_sys = copied_sub + [f for f in sys_f if f.severity is Severity.ERROR]
        desc = sctx.system_desc(system)  # parsed once (check_system read it); None: missing or unusable
        system_type = desc.system_type if desc is not None else None
        for bm_dir, scen_dirs in sub.benchmarks.get(system, {}).items():
            model = sctx.resolve_model(bm_dir)
            bench = rnd.benchmarks.get(model) if model else None
            bm_f = benchmark_findings(sctx, system, bm_dir, bench, system_type)
            level += bm_f
            copied = copied_sys + [f for f in bm_f if f.severity is Severity.ERROR]
            verdicts: dict[Scenario, bool] = {}
            trial_only: dict[Scenario, bool] = {}
            errors_so_far = 0
            for scen_dir in scen_dirs:
                rd = ResultDir(division, name, system, bm_dir, scen_dir)
                scen = Scenario.parse(scen_dir)
                ctx = ResultContext(sctx, rd, model, bench, scen, desc)
                found: list[Finding] = [_copy_into(f, rd.path) for f in copied]
                sf = scenario_finding(sctx, rd.path, scen_dir, bench, system_type)
                if sf is not None:
                    found.append(sf)
                endpoints = scen is not None and ctx.is_endpoints
                found += unknown_entry_findings(sctx, rd.path, endpoints=endpoints)
                if scen is not None:
                    for check in ENDPOINTS_RESULT_CHECKS if endpoints else RESULT_CHECKS:
                        found += check(ctx)
                summary = power_row = None
                value = ctx.computed.result
                if scen is not None and value is not None and _finite(value) and desc is not None:
                    summary = SummaryRow(values=summary_values(ctx, value, errors=errors_so_far))
                    pm = ctx.computed.power_metric
                    if pm and desc.power_only:
                        summary = None  # the official log_result writes only the power row then
                    if pm and _finite(pm):
                        power_row = SummaryRow(
                            values=summary_values(ctx, value, power=pm, errors=errors_so_far)
                        )
                entry = ResultEntry(
                    path=rd.path,
                    division=division,
                    submitter=name,
                    system=system,
                    benchmark=bm_dir,
                    mlperf_model=model,
                    scenario=scen_dir,
                    findings=tuple(found),
                    summary=summary,
                    power_summary=power_row,
                )
                entries.append(entry)
                errors_so_far += _error_categories(found)
                if scen is not None:
                    kept = filter_findings(found, select, ignore) if select or ignore else found
                    errors = [f for f in kept if f.severity is Severity.ERROR]
                    verdicts[scen] = verdicts.get(scen, False) or not errors
                    trial_only[scen] = trial_only.get(scen, True) and all(f.trial for f in errors)
                sctx.files.forget_logs()
            if bench is not None and system_type is not None:
                level += required_scenario_findings(sctx, system, bm_dir, bench, system_type, verdicts, trial_only)
    tree.close()
    return entries, level


def _finite(v: Any) -> bool:
    """A value a summary row may carry: a real number (NaN, infinities and non-numbers never reach the CSV; the
    checks report them as PERF-VALUE)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _nothing_checked(root: Path, layout_findings: list[Finding], submitter: str | None) -> Finding:
    which = f" for submitter '{submitter}'" if submitter else ""
    return Finding(
        rule="TREE-NOTHING-CHECKED",
        severity=Severity.ERROR,
        message=f"no result directory (<division>/<submitter>/results/<system>/<benchmark>/<scenario>) was found"
        f"{which} in {display_name(str(root))}: nothing was checked, so nothing can be reported valid"
        + (" (see the errors above)" if any(f.severity is Severity.ERROR for f in layout_findings) else ""),
        scope=".",
        source="beyond the official checker, which reports success on a tree it could not check",
        fix="point the checker at a tree holding results (and check --submitter), and fix the errors reported",
        beyond_official=True,
    )


_worker_round: list[Round] = []  # in a worker process: the caller's Round, handed over once at start-up


def _init_worker(rnd: Round) -> None:
    _worker_round[:] = [rnd]


def _run_one(
    args: tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]],
) -> tuple[list[ResultEntry], list[Finding]]:
    base, checked, division, name, select, ignore = args
    return check_submitter(Path(base), Path(checked), division, name, _worker_round[0], select, ignore)


def check_tree(
    root: Path,
    round: Round,
    *,
    submitter: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> CheckReport:
    """Check a results repository, a division directory or one submitter directory against ``round``.

    ``select`` / ``ignore``: the rule filters the report will be filtered with (``filter_report``); the tree-level
    findings that follow from result verdicts (TREE-REQUIRED-SCENARIOS, TREE-SERVER-OR-INTERACTIVE) are then computed
    from the filtered verdicts. The findings themselves are not filtered here."""
    sel, ign = tuple(select), tuple(ignore)
    root = Path(root)
    if not root.is_dir():
        raise UnusableInput(
            "not a directory (expected a results repository, division or submitter directory)", str(root)
        )
    layout = discover(root, round.structure.divisions, submitter)
    findings: list[Finding] = list(layout.findings)
    # A3: a division holding files fails the whole division
    div_errors = {f.scope: f for f in layout.findings if f.rule == "TREE-DIVISION-FILES"}
    total = len(layout.submitters)
    n_workers = (os.cpu_count() or 1) if workers is None else max(1, workers)
    results: dict[tuple[str, str], tuple[list[ResultEntry], list[Finding]]] = {}
    done = 0
    if progress:
        progress(0, total)
    if n_workers > 1 and total > 1:
        # the Round goes to each worker once (initargs), not pickled with every submitter
        with ProcessPoolExecutor(
            max_workers=min(n_workers, total), initializer=_init_worker, initargs=(round,)
        ) as pool:
            futs = {
                pool.submit(_run_one, (str(layout.base), str(layout.checked), d, s, sel, ign)): (d, s)
                for d, s in layout.submitters
            }
            for fut in as_completed(futs):
                results[futs[fut]] = fut.result()
                done += 1
                if progress:
                    progress(done, total)
    else:
        for d, s in layout.submitters:
            results[(d, s)] = check_submitter(layout.base, layout.checked, d, s, round, sel, ign)
            done += 1
            if progress:
                progress(done, total)
    entries: list[ResultEntry] = []
    for key in layout.submitters:
        ents, level = results[key]
        findings += level
        div_f = div_errors.get(key[0])
        if div_f is not None:
            ents = [e.model_copy(update={"findings": (*e.findings, _copy_into(div_f, e.path))}) for e in ents]
        entries += ents
    unusable = any(f.rule == "TREE-NO-DIVISION" for f in findings)
    if not entries and not unusable:
        findings.append(_nothing_checked(root, findings, submitter))
    return CheckReport(
        root=display_name(str(root)),
        round=round.name,
        tool_version=tool_version(),
        results=tuple(entries),
        findings=tuple(findings),
        unusable=unusable,
    )
