"""Submitter- and benchmark-level structure checks (catalogue A11-A19).

- submitter level: model_mapping.json (A11), systems/measurements without results (A12), calibration.md (A13);
  the official checker fails a "results" key for these, so the run fails but no result row is dropped: findings
  carry ``scope`` and are not copied into results.
- benchmark level: known benchmark (A15), scenario table for the system type (A16), scenario allowed (A17) -- these
  invalidate results; required scenarios valid (A18) and Server-or-Interactive (A19) fail the benchmark key only,
  as the official checker does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from checker.checks.context import SubmitterContext
from checker.checks.rule_registry import OLD, WARN, Case, RuleInfo, register, registered_finding
from checker.findings import Finding
from checker.parsers.endpoints import CONFIG_FILES, HARNESS_EXTRA_ENTRIES
from rules.models import Benchmark, Scenario

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "TREE-MODEL-MAPPING",
        "A11",
        "open-division model_mapping.json unreadable or malformed",
        official="crashes on a malformed file",
        source=f"{OLD}: check_results_dir L2363-2371",
        fix='write {"<model dir>": "<benchmark>", ...}',
        cases={"unreadable": Case(source=f"{OLD}: L2363-2371")},
    ),
    RuleInfo(
        "TREE-ORPHAN-SYSTEM",
        "A12",
        "measurements/ or systems/ entry without results",
        source=f"{OLD}: check_results_dir L2373-2402 (fails the submitter's results key)",
    ),
    RuleInfo(
        "TREE-CALIBRATION",
        "A13",
        "closed/network submission without calibration.md",
        source=f"{OLD}: check_results_dir L2404-2418 (fails the submitter's results key)",
        fix="document the quantization/calibration in documentation/calibration.md",
    ),
    RuleInfo(
        "TREE-UNKNOWN-BENCHMARK",
        "A15/A16",
        "benchmark directory that is not a benchmark of the round",
        source=f"{OLD}: check_results_dir L2482-2512 (Config.get_mlperf_model)",
    ),
    RuleInfo(
        "TREE-NO-SCENARIO-TABLE",
        "A16",
        "benchmark has no scenarios for the system type",
        source=f"{OLD}: check_results_dir L2502-2512 ('invalid model ... system_type=')",
    ),
    RuleInfo(
        "TREE-SCENARIO",
        "A17",
        "scenario neither required nor optional (or not a scenario)",
        source=f"{OLD}: check_results_dir L2536-2544",
        fix="remove the scenario or check the system_type",
        cases={
            "not-a-scenario": Case(
                fix="name the directory after its scenario", source=f"{OLD}: SCENARIO_MAPPING"
            )
        },
    ),
    RuleInfo(
        "TREE-REQUIRED-SCENARIOS",
        "A18",
        "a required scenario has no valid result",
        fix="submit a valid result for every required scenario",
    ),
    RuleInfo(
        "TREE-SERVER-OR-INTERACTIVE",
        "A19",
        "neither Server nor Interactive has a valid result",
        fix="submit a valid Server or Interactive result",
    ),
    RuleInfo(
        "TREE-UNKNOWN-ENTRY",
        "-",
        "entry of a result directory no rule expects",
        WARN,
        beyond=True,
        source="beyond the official checker, which ignores unknown entries here",
        fix="remove it, or move it where it belongs",
    ),
    RuleInfo(
        "TREE-OTHER-LAYOUT",
        "-",
        "measurements/ or compliance/ tree of the v5.x layout in a v6.x round",
        WARN,
        beyond=True,
    ),
)

# What a result directory may hold: the runs, and (v6.x layout, or SDXL in v5.1) compliance TESTxx dirs.
RESULT_DIR_ENTRIES = frozenset({"performance", "accuracy"})
_TEST_DIR = re.compile(r"^TEST\d\d$")


def load_model_mapping(sctx: SubmitterContext) -> list[Finding]:
    """A11: open/<sub>/model_mapping.json maps directory names to benchmarks."""
    if sctx.division != "open":
        return []
    rel = f"{sctx.sub.path}/model_mapping.json"
    if rel not in sctx.sub.files:
        return []
    jr = sctx.files.json(rel)
    if not isinstance(jr.value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in jr.value.items()
    ):
        if jr.problem is not None:
            return [jr.problem.finding("TREE-MODEL-MAPPING", scope=sctx.sub.path, case="unreadable")]
        return [
            registered_finding(
                "TREE-MODEL-MAPPING",
                "model_mapping.json must be a JSON object of directory name -> benchmark name strings",
                scope=sctx.sub.path,
                path=rel,
            )
        ]
    sctx.model_mapping = dict(jr.value)
    return []


def submitter_findings(sctx: SubmitterContext) -> list[Finding]:
    sub = sctx.sub
    r = sctx.round
    out: list[Finding] = []
    results = set(sub.result_systems)
    lay = r.structure.layout
    measurement_systems = sub.measurement_systems if lay.has_measurements_tree else ()
    for name, kind in [(s, "measurements") for s in measurement_systems] + [
        (s, "systems") for s in sub.systems
    ]:
        if name not in results:
            path = (
                lay.measurements_system_path(sub.division, sub.name, name)
                if kind == "measurements"
                else lay.system_file_of(sub.division, sub.name, name)
            )
            out.append(
                registered_finding(
                    "TREE-ORPHAN-SYSTEM",
                    f"{kind} entry '{name}' has no results/{name} directory",
                    scope=sub.path,
                    path=path,
                    fix=f"remove {path} or add the results of '{name}'",
                )
            )
    out += _other_layout_findings(sctx)
    paths = (
        r.structure.calibration_paths
    )  # empty: the round's checker asks for no calibration document (v4.1)
    if sctx.closed_or_network and paths and not any(f"{sub.path}/{p}" in sub.files for p in paths):
        out.append(
            registered_finding(
                "TREE-CALIBRATION",
                f"closed/network submission without {' or '.join(paths)}",
                scope=sub.path,
                path=sub.path,
            )
        )
    return out


def _other_layout_findings(sctx: SubmitterContext) -> list[Finding]:
    """Beyond official: a submitter directory laid out for another round family (v5.x ``measurements/`` or
    ``compliance/`` trees in a v6.x round, which its checker never reads, so their files count as missing)."""
    lay = sctx.round.structure.layout
    sub = sctx.sub
    out: list[Finding] = []
    for name, used in (
        ("measurements", lay.has_measurements_tree),
        ("compliance", not lay.compliance_in_result_dir),
    ):
        rel = f"{sub.path}/{name}"
        if used or not sub.is_dir(rel):
            continue
        where = lay.result_dir.replace("{division}/{submitter}/", "")
        out.append(
            registered_finding(
                "TREE-OTHER-LAYOUT",
                f"{name}/ is the v5.x layout; round {sctx.round.name}'s checker does not read it (its files "
                f"belong in {where}/)",
                scope=sub.path,
                path=rel,
                source=f"{lay.cite}; beyond the official checker, which ignores the directory",
                fix=f"move each {name}/<system>/<benchmark>/<scenario>/ into {where}/",
            )
        )
    return out


def benchmark_findings(
    sctx: SubmitterContext, system: str, benchmark_dir: str, bench: Benchmark | None, system_type: str | None
) -> list[Finding]:
    """A15/A16 for one results/<system>/<benchmark> directory (ERRORs here invalidate all its results)."""
    path = sctx.round.structure.layout.benchmark_path(sctx.sub.division, sctx.sub.name, system, benchmark_dir)
    if bench is None:
        div = sctx.division
        hint = " (open division: map it in model_mapping.json)" if div == "open" else ""
        return [
            registered_finding(
                "TREE-UNKNOWN-BENCHMARK",
                f"'{benchmark_dir}' is not a benchmark of round {sctx.round.name}{hint}",
                scope=path,
                path=path,
                fix=f"name the directory after a benchmark: {', '.join(sctx.round.benchmarks)}",
            )
        ]
    if system_type is not None and bench.scenario_set(system_type) is None:
        kinds = "/".join(bench.categories)
        kinds = ("an " if kinds[:1] in "aeiou" else "a ") + kinds  # an edge, a datacenter
        return [
            registered_finding(
                "TREE-NO-SCENARIO-TABLE",
                f"{bench.name} has no scenarios for system_type={system_type}",
                scope=path,
                path=path,
                fix=f"{bench.name} is {kinds} benchmark; check the system_type",
            )
        ]
    return []


def scenario_finding(
    sctx: SubmitterContext, result_path: str, scen_dir: str, bench: Benchmark | None, system_type: str | None
) -> Finding | None:
    """A17 for one scenario directory."""
    scen = Scenario.parse(scen_dir)
    if scen is None:
        return registered_finding(
            "TREE-SCENARIO",
            f"'{scen_dir}' is not a scenario (SingleStream, MultiStream, Server, Offline, Interactive)",
            result=result_path,
            path=result_path,
            case="not-a-scenario",
        )
    if not sctx.closed_or_network or bench is None or system_type is None:
        return None
    allowed = bench.allowed_scenarios(system_type)
    if scen not in allowed:
        return registered_finding(
            "TREE-SCENARIO",
            f"{scen.value} is neither required nor optional for {bench.name} on a {system_type} system "
            f"(allowed: {', '.join(s.value for s in allowed)})",
            result=result_path,
            path=result_path,
        )
    return None


def required_scenario_findings(
    sctx: SubmitterContext,
    system: str,
    benchmark_dir: str,
    bench: Benchmark,
    system_type: str,
    valid: dict[Scenario, bool],
    trial_only: dict[Scenario, bool] | None = None,
) -> list[Finding]:
    """A18/A19 after the results were checked: ``valid`` maps each present scenario to its verdict, ``trial_only``
    to whether its errors are all trial settings' (:attr:`Finding.trial`); a benchmark short of scenarios only
    through such results is a trial finding too."""
    if not sctx.closed_or_network:
        return []
    sset = bench.scenario_set(system_type)
    if sset is None:
        return []
    trial_only = trial_only or {}
    path = sctx.round.structure.layout.benchmark_path(sctx.sub.division, sctx.sub.name, system, benchmark_dir)
    out: list[Finding] = []

    def without_valid(scenarios: Sequence[Scenario]) -> str:
        """'['X'] present but invalid, ['Y'] missing' for ``scenarios``."""
        invalid = [s.value for s in scenarios if s in valid]
        absent = [s.value for s in scenarios if s not in valid]
        return ", ".join(
            ([f"{invalid} present but invalid"] if invalid else [])
            + ([f"{absent} missing"] if absent else [])
        )

    def trial_fixes(s: Scenario) -> bool:
        """``s`` is present and only trial settings' errors keep it from being valid."""
        return s in valid and trial_only.get(s, False)

    lacking = [s for s in sset.required if not valid.get(s)]
    if lacking:
        out.append(
            registered_finding(
                "TREE-REQUIRED-SCENARIOS",
                f"{bench.name} on a {system_type} system does not have all required scenarios with a valid "
                f"result: {without_valid(lacking)}",
                scope=path,
                path=path,
                source=f"{sset.cite or 'required scenarios'}; {OLD}: check_results_dir L2853-2867 (fails the benchmark key; "
                "rows of valid scenarios stay in the CSV)",
                trial=all(trial_fixes(s) for s in lacking),
            )
        )
    if sset.one_of and not any(valid.get(s) for s in sset.one_of):
        out.append(
            registered_finding(
                "TREE-SERVER-OR-INTERACTIVE",
                f"{bench.name} needs a valid result in at least one of {[s.value for s in sset.one_of]}: "
                f"{without_valid(sset.one_of)}",
                scope=path,
                path=path,
                source=f"{sset.cite or 'one_of scenarios'}; {OLD}: check_results_dir L2869-2874",
                trial=any(trial_fixes(s) for s in sset.one_of),
            )
        )
    return out


def unknown_entry_findings(
    sctx: SubmitterContext, result_path: str, *, endpoints: bool = False
) -> list[Finding]:
    """Beyond official: entries of a result directory that no rule expects (the official checker ignores them).

    ``endpoints``: an endpoints result, whose config.yaml, audit/ and the harness's report.txt / metrics/ belong."""
    lay = sctx.round.structure.layout
    files = set(sctx.sub.list_files(result_path))
    allowed_files: set[str] = set()
    if lay.measurements_in_result_dir:
        allowed_files |= set(sctx.round.structure.measurement_required_files) | set(
            lay.measurement_optional_files
        )
        allowed_files.add(lay.measurements_json)
    allowed_files |= {f for f in files if f.lower().endswith(lay.result_dir_document_suffixes)}
    if endpoints:
        allowed_files |= set(CONFIG_FILES) | set(HARNESS_EXTRA_ENTRIES)
    names = [d for d in sctx.sub.list_dirs(result_path) if not (endpoints and d in HARNESS_EXTRA_ENTRIES)]
    names += sorted(files - allowed_files)
    return [
        registered_finding(
            "TREE-UNKNOWN-ENTRY",
            f"'{name}' is not part of a result directory in round {sctx.round.name}'s layout "
            f"(performance/, accuracy/, TESTxx/{', measurement files' if lay.measurements_in_result_dir else ''}); not checked",
            result=result_path,
            path=f"{result_path}/{name}",
        )
        for name in sorted(set(names))
        if name not in RESULT_DIR_ENTRIES and not _TEST_DIR.match(name)
    ]
