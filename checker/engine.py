"""Run every check over a results tree: ``check_tree(root, round) -> CheckReport``.

Per submitter (in parallel processes when ``workers`` > 1): walk the tree once (lstat only), then for each result
directory read each file once, parse lazily, run the check families and compute the official-compatible summary
row. Submitter-, system- and benchmark-level ERRORs that make the official checker skip results are copied into each
affected :class:`ResultEntry`, so ``ResultEntry.valid`` alone gives a result's verdict.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from checker.checks.accuracy import check_accuracy
from checker.checks.compliance import check_compliance
from checker.checks.context import FileCache, ResultContext, SubmitterContext
from checker.checks.endpoints import check_endpoints
from checker.checks.inferred import check_result
from checker.checks.latency import check_latency
from checker.checks.measurements import check_measurements
from checker.checks.performance import check_performance
from checker.checks.power import check_power
from checker.checks.rule_registry import INFO, RuleInfo, register, registered_finding
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
from checker.report.summary_row import error_categories, result_rows
from checker.results import CheckReport, ResultEntry
from checker.safe_io import SafeTree, display_name
from checker.tree import ResultDir, SubmitterTree, discover, hygiene_findings, walk_findings, walk_submitter
from checker.version import tool_version
from rules.models import Round, Scenario

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "TREE-NO-RESULTS",
        "A4",
        "submitter without results/ is skipped",
        INFO,
        source="official checker v5.1.1: check_results_dir L2272",
    ),
    RuleInfo(
        "TREE-NOTHING-CHECKED",
        "-",
        "no result directory could be checked",
        beyond=True,
        source="beyond the official checker, which reports success on a tree it could not check",
        fix="point the checker at a tree holding results (and check --submitter), and fix the errors reported",
    ),
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


def _copy_into(f: Finding, result: str) -> Finding:
    return f.model_copy(update={"result": result})


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
    walked = walk_findings(sub)  # what could not be looked at: errors, never skipped silently
    if not sub.has_results_dir:
        return [], walked + _no_results(sub)
    tree = SafeTree(base, confine=checked)
    tree.register_walk(sub.path, frozenset(link.path for link in sub.symlinks), sub.file_ids)
    sctx = SubmitterContext(round=rnd, tree=tree, sub=sub, files=FileCache(tree))
    hygiene = walked + hygiene_findings(sub, rnd.structure.file_size_limit_mb)
    mapping = load_model_mapping(sctx)
    level = hygiene + mapping + submitter_findings(sctx)
    copied_sub = [f for f in hygiene + mapping if f.severity is Severity.ERROR]
    entries: list[ResultEntry] = []
    for system in sub.result_systems:
        sys_f = check_system(sctx, system)
        level += sys_f
        copied_sys = copied_sub + [f for f in sys_f if f.severity is Severity.ERROR]
        for bm_dir, scen_dirs in sub.benchmarks.get(system, {}).items():
            ents, bm_level = _check_benchmark(sctx, system, bm_dir, scen_dirs, copied_sys, select, ignore)
            entries += ents
            level += bm_level
    tree.close()
    return entries, level


def _no_results(sub: SubmitterTree) -> list[Finding]:
    """A submitter without results/: skipped, as the official checker does (said unless it could not be read)."""
    if sub.results_kind is not None or any(p == sub.path for p, _ in sub.unreadable):
        return []
    return [
        registered_finding(
            "TREE-NO-RESULTS",
            "no results/ directory: skipped, as the official checker does",
            scope=sub.path,
            path=sub.path,
        )
    ]


def _check_benchmark(
    sctx: SubmitterContext,
    system: str,
    bm_dir: str,
    scen_dirs: Sequence[str],
    copied_sys: list[Finding],
    select: Sequence[str],
    ignore: Sequence[str],
) -> tuple[list[ResultEntry], list[Finding]]:
    """One ``results/<system>/<benchmark>`` directory: its results in order (each summary row counts the error
    categories of the ones before it, as the official checker does), then the required-scenario findings from their
    verdicts (under the rule filters)."""
    rnd = sctx.round
    desc = sctx.system_desc(system)  # parsed once (check_system read it); None: missing or unusable
    system_type = desc.system_type if desc is not None else None
    model = sctx.resolve_model(bm_dir)
    bench = rnd.benchmarks.get(model) if model else None
    level = benchmark_findings(sctx, system, bm_dir, bench, system_type)
    copied = copied_sys + [f for f in level if f.severity is Severity.ERROR]
    verdicts: dict[Scenario, bool] = {}
    trial_only: dict[Scenario, bool] = {}
    entries: list[ResultEntry] = []
    errors_so_far = 0
    for scen_dir in scen_dirs:
        rd = ResultDir(sctx.sub.division, sctx.sub.name, system, bm_dir, scen_dir)
        ctx = ResultContext(sctx, rd, model, bench, Scenario.parse(scen_dir), desc)
        entry = _check_result(ctx, copied, errors_so_far, system_type)
        entries.append(entry)
        errors_so_far += error_categories(list(entry.findings))
        if ctx.scenario is not None:
            kept = (
                filter_findings(list(entry.findings), select, ignore)
                if select or ignore
                else list(entry.findings)
            )
            errors = [f for f in kept if f.severity is Severity.ERROR]
            verdicts[ctx.scenario] = verdicts.get(ctx.scenario, False) or not errors
            trial_only[ctx.scenario] = trial_only.get(ctx.scenario, True) and all(f.trial for f in errors)
        sctx.files.forget_logs()
    if bench is not None and system_type is not None:
        level += required_scenario_findings(sctx, system, bm_dir, bench, system_type, verdicts, trial_only)
    return entries, level


def _check_result(
    ctx: ResultContext, copied: list[Finding], errors_so_far: int, system_type: str | None
) -> ResultEntry:
    """One result directory: the higher-level errors copied into it, its scenario and entries, the check families
    (LoadGen's or the Endpoints'), and its summary rows."""
    sctx, rd, scen = ctx.sctx, ctx.rd, ctx.scenario
    found: list[Finding] = [_copy_into(f, rd.path) for f in copied]
    sf = scenario_finding(sctx, rd.path, rd.scenario, ctx.benchmark, system_type)
    if sf is not None:
        found.append(sf)
    endpoints = scen is not None and ctx.is_endpoints
    found += unknown_entry_findings(sctx, rd.path, endpoints=endpoints)
    if scen is not None:
        for check in ENDPOINTS_RESULT_CHECKS if endpoints else RESULT_CHECKS:
            found += check(ctx)
    summary, power_row = result_rows(ctx, errors_so_far)
    return ResultEntry(
        path=rd.path,
        division=rd.division,
        submitter=rd.submitter,
        system=rd.system,
        benchmark=rd.benchmark,
        mlperf_model=ctx.mlperf_model,
        scenario=rd.scenario,
        findings=tuple(found),
        summary=summary,
        power_summary=power_row,
    )


def _nothing_checked(root: Path, layout_findings: list[Finding], submitter: str | None) -> Finding:
    which = f" for submitter '{submitter}'" if submitter else ""
    return registered_finding(
        "TREE-NOTHING-CHECKED",
        f"no result directory (<division>/<submitter>/results/<system>/<benchmark>/<scenario>) was found"
        f"{which} in {display_name(str(root))}: nothing was checked, so nothing can be reported valid"
        + (" (see the errors above)" if any(f.severity is Severity.ERROR for f in layout_findings) else ""),
        scope=".",
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
