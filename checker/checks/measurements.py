"""Measurement checks (catalogue C1-C6), wherever the round's layout puts the measurement files.

Sets ``ctx.computed.weight_data_types`` from the measurement JSON (summary CSV column).
"""

from __future__ import annotations

import re

from checker.checks.context import ResultContext
from checker.checks.rule_registry import OLD, WARN, RuleInfo, register
from checker.checks.system import TRIAL_PREFIX
from checker.findings import Finding
from rules.models import Scenario

HEAD = "HEAD checker measurements_checks.py"

# the rules this module emits (the registry: checker/checks/rule_registry.py); the sources of MEAS-DIR/-FILES/-JSON/
# -JSON-FIELDS/-CODE depend on the round's layout (_sources)
RULES = register(
    __name__,
    RuleInfo("MEAS-DIR", "C1", "measurement directory missing"),
    RuleInfo("MEAS-FILES", "C2", "user.conf / README.md missing or empty"),
    RuleInfo(
        "MEAS-POWER-FILES",
        "C3",
        "power result without analyzer_table / power_settings",
        official="HEAD accepts the flag but does not check",
        source=f"{OLD}: check_measurement_dir L3002-3040",
    ),
    RuleInfo("MEAS-JSON", "C4", "measurement JSON missing or unreadable"),
    RuleInfo(
        "MEAS-JSON-FIELDS",
        "C5",
        "measurement JSON field missing or empty",
        fix="fill in every implementation field",
    ),
    RuleInfo("MEAS-CODE", "C6", "no code/<benchmark>"),
    RuleInfo(
        "MEAS-TRIAL-VALUE",
        "-",
        "an implementation field still holds the value `init implementation --trial` writes",
        beyond=True,
        trial=True,
        source="the official checkers require each implementation field (v5.1.1 check_measurement_dir; HEAD "
        "measurements checks): a 'TRIAL:' value fills one without describing what ran (they accept any non-empty "
        "text)",
        fix="describe the implementation: replace each 'TRIAL:' value (`inference-audit init check FILE --kind "
        "implementation --submission` lists what a submission still lacks)",
    ),
    RuleInfo(
        "MEAS-MLPERF-CONF",
        "-",
        "the measurements mlperf.conf is not the round's (seeds, min duration)",
        WARN,
        beyond=True,
        source="beyond the official checker, which does not read the mlperf.conf copy; round seeds and durations from "
        "the rules data",
        fix="copy the mlperf.conf of the LoadGen release the run used (inference-audit run keeps it)",
    ),
)


def _sources(ctx: ResultContext) -> dict[str, str]:
    """Where each measurement rule is enforced in the round's official checker (v5.x: one function; v6.x: a class)."""
    lay = ctx.round.structure.layout
    if lay.has_measurements_tree:
        return {
            "dir": f"{lay.cite}; {OLD}: check_results_dir L2572-2580",
            "files": f"{OLD}: check_measurement_dir L2991-3000",
            "json": f"{OLD}: check_measurement_dir L3042-3052",
            "fields": f"SYSTEM_IMP_REQUIRED_FILES; {OLD}: check_measurement_dir L3054-3066",
            "code": f"{OLD}: check_measurement_dir L3068-3080",
        }
    return {
        "dir": f"{lay.cite}; HEAD loader.py (MEASUREMENTS_PATH)",
        "files": f"CHK_CONST#REQUIRED_MEASURE_FILES; {HEAD}: required_files_check",
        "json": f"CHK_CONST#MEASUREMENTS_PATH; {HEAD}: missing_check ('measurements json file not found')",
        "fields": f"CHK_CONST#SYSTEM_IMP_REQUIRED_FILES; {HEAD}: required_fields_check",
        "code": f"CHK_CONST#SRC_PATH; {HEAD}: directory_exist_check ('src directory does not exist')",
    }


def _measurement_json(ctx: ResultContext, d: str) -> str | None:
    """The implementation JSON, found as the round's official checker finds it."""
    lay = ctx.round.structure.layout
    files = ctx.list_files(d)
    want = lay.measurements_json_path(ctx.rd.location)
    if want.rsplit("/", 1)[-1] in files:
        return want
    if lay.measurements_json_prefix_fallback:
        for f in files:  # v5.1.1: the first <system>*_<scenario>.json, else <system>*.json, in listing order
            if f.startswith(ctx.rd.system) and f.endswith(".json"):
                return f"{d}/{f}"
    return None


_CONF_LINE = re.compile(r"^\s*(?P<model>[^.\s#]+)\.(?P<scen>[^.\s]+)\.(?P<key>\S+)\s*=\s*(?P<value>\S+)")


def _mlperf_conf_findings(ctx: ResultContext, rel: str) -> list[Finding]:
    """Beyond official (a warning): the mlperf.conf copied into the measurements is not the round's.

    Compared: the three seeds (``*.*.<seed>``) and the scenario's ``*.<scenario>.min_duration``, the values that make
    a run of another round; the LoadGen detail log is what the round's checks judge, so this only says the copy
    documents other settings than the ones the run must have used.
    """
    text = ctx.files.text(rel).text
    if not text:
        return []
    seeds = ctx.round.seeds
    want = {
        ("*", "*", "qsl_rng_seed"): seeds.qsl_rng_seed,
        ("*", "*", "sample_index_rng_seed"): seeds.sample_index_rng_seed,
        ("*", "*", "schedule_rng_seed"): seeds.schedule_rng_seed,
    }
    scen = Scenario.parse(ctx.rd.scenario)
    if scen is not None and scen.loadgen_scenario in ctx.round.scenario_defaults:
        want[("*", scen.loadgen_scenario.value, "min_duration")] = ctx.round.scenario_defaults[
            scen.loadgen_scenario
        ].min_duration_ms
    differ: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "_rng_seed" not in line and "min_duration" not in line:
            continue  # only the compared keys: most of the ~8 KiB file is other models' counts
        m = _CONF_LINE.match(line)
        if m is None:
            continue
        key = (m.group("model"), m.group("scen"), m.group("key"))
        if key in want and m.group("value") != str(want[key]):
            differ.append((lineno, f"{'.'.join(key)} = {m.group('value')} (the round's: {want[key]})"))
    if not differ:
        return []
    return [
        ctx.finding(
            "MEAS-MLPERF-CONF",
            f"the mlperf.conf copy is not round {ctx.round.name}'s: " + "; ".join(d for _, d in differ),
            path=rel,
            line=differ[0][0],
        )
    ]


def check_measurements(ctx: ResultContext) -> list[Finding]:
    """C1-C6 on the result's measurement directory, wherever the round's layout puts it."""
    lay = ctx.round.structure.layout
    src = _sources(ctx)
    d = ctx.measurement_dir
    want_json = lay.measurements_json.format(**ctx.rd.location.fields())
    if not ctx.exists_dir(d):
        return [
            ctx.finding(
                "MEAS-DIR",
                f"no measurement directory {d}",
                path=d,
                source=src["dir"],
                fix=f"add {d}/ with {', '.join(ctx.round.structure.measurement_required_files)} and {want_json}",
            )
        ]
    out: list[Finding] = []
    files = set(ctx.list_files(d))
    if "mlperf.conf" in files:
        out += _mlperf_conf_findings(ctx, f"{d}/mlperf.conf")
    out += _required_file_findings(ctx, d, files, src)
    if ctx.has_power:
        out += _power_file_findings(ctx, d)
    out += _measurement_json_findings(ctx, d, want_json, src)
    out += _code_findings(ctx, src)
    return out


def _required_file_findings(
    ctx: ResultContext, d: str, files: set[str], src: dict[str, str]
) -> list[Finding]:
    """C2: user.conf and README.md are there and not empty."""
    out: list[Finding] = []
    for name in ctx.round.structure.measurement_required_files:
        if name == "user.conf" and ctx.is_endpoints:
            continue  # HEAD checker required_files_check: an endpoints run has no LoadGen user.conf (config.yaml)
        rel = f"{d}/{name}"
        size = ctx.sctx.sub.files.get(rel)
        if name not in files:
            out.append(
                ctx.finding(
                    "MEAS-FILES",
                    f"{rel} is missing",
                    path=rel,
                    source=src["files"],
                    fix=f"add {name} (the settings / instructions used for this run) in {d}/",
                )
            )
        elif size == 0:
            out.append(
                ctx.finding(
                    "MEAS-FILES",
                    f"{rel} is empty",
                    path=rel,
                    source=src["files"] + " (--skip-empty-files-check)",
                    fix=f"fill in {name}",
                )
            )
    return out


def _power_file_findings(ctx: ResultContext, d: str) -> list[Finding]:
    """C3: a power result has a non-empty analyzer_table.* and power_settings.* in the directory or 3 above it."""
    out: list[Finding] = []
    for stem in ("analyzer_table", "power_settings"):
        found = False
        cur = d
        for _ in range(4):
            for f in ctx.list_files(cur):
                if f.startswith(stem + ".") and ctx.sctx.sub.files.get(f"{cur}/{f}", 0) > 0:
                    found = True
            if found or "/" not in cur:
                break
            cur = cur.rsplit("/", 1)[0]
        if not found:
            out.append(
                ctx.finding(
                    "MEAS-POWER-FILES",
                    f"power result without a non-empty {stem}.* in {d} or its 3 parent directories",
                    path=d,
                    fix=f"add the power analyzer's {stem} file",
                )
            )
    return out


def _measurement_json_findings(
    ctx: ResultContext, d: str, want_json: str, src: dict[str, str]
) -> list[Finding]:
    """C4 the implementation JSON, C5 its fields (and the summary's weight_data_types)."""
    out: list[Finding] = []
    lay = ctx.round.structure.layout
    mj = _measurement_json(ctx, d)
    if mj is None:
        out.append(
            ctx.finding(
                "MEAS-JSON",
                f"no {want_json}"
                + (f" or {ctx.rd.system}*.json" if lay.measurements_json_prefix_fallback else "")
                + f" in {d}",
                path=d,
                source=src["json"],
                fix=f"add {d}/{want_json} describing the implementation (weights, data types, retraining)",
            )
        )
    else:
        jr = ctx.files.json(mj)
        if not isinstance(jr.value, dict):
            if jr.problem is not None:
                out.append(ctx.problem("MEAS-JSON", jr.problem))
            else:
                out.append(ctx.finding("MEAS-JSON", f"{mj} is not a JSON object", path=mj))
        else:
            wdt = jr.value.get("weight_data_types")
            ctx.computed.weight_data_types = None if wdt is None else str(wdt)
            trial = [f for f, v in jr.value.items() if isinstance(v, str) and v.startswith(TRIAL_PREFIX)]
            if trial:
                out.append(
                    ctx.finding(
                        "MEAS-TRIAL-VALUE",
                        f"{mj}: field(s) hold a trial's value ({TRIAL_PREFIX} ...), not a description: "
                        + ", ".join(repr(f) for f in trial[:8])
                        + (f" and {len(trial) - 8} more" if len(trial) > 8 else ""),
                        path=mj,
                    )
                )
            empty = [f for f in ctx.round.structure.measurement_json_fields if not jr.value.get(f)]
            if empty:
                out.append(
                    ctx.finding(
                        "MEAS-JSON-FIELDS",
                        f"{mj}: missing or empty field(s) {', '.join(empty)}",
                        path=mj,
                        source=src["fields"],
                    )
                )
    return out


def _code_findings(ctx: ResultContext, src: dict[str, str]) -> list[Finding]:
    """C6: the code directory of the benchmark."""
    out: list[Finding] = []
    lay = ctx.round.structure.layout
    code = lay.code_path(ctx.rd.location)
    if not (ctx.exists_dir(code) or ctx.exists_file(code)):
        out.append(
            ctx.finding(
                "MEAS-CODE",
                f"no {lay.code_root}/{ctx.rd.benchmark} for this benchmark",
                path=code,
                source=src["code"],
                fix=f"add the implementation (or its README) under {code}/",
            )
        )
    return out
