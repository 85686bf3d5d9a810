"""One generated round file (``rules/data/<round>.yaml``): the round's facts, its benchmarks and the official
checker's constants of its family, with the sources its citations name, built in named sections."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rules.build_benchmark import build_benchmark
from rules.build_constants import OfficialConstants
from rules.build_values import check_cite, join_cites

# the four LoadGen scenarios (v4.1 has no Interactive)
_LOADGEN_SCENARIOS = ("SingleStream", "MultiStream", "Offline", "Server")
_EARLY_STOPPING_SCENARIOS = ("SingleStream", "MultiStream", "Server", "Interactive")


def _seeds(seeds: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "qsl_rng_seed": int(seeds["qsl_rng_seed"]),
        "sample_index_rng_seed": int(seeds["sample_index_rng_seed"]),
        "schedule_rng_seed": int(seeds["schedule_rng_seed"]),
        "cite": join_cites(seeds.get("cite_checker"), seeds.get("cite_mlperf_conf")),
    }


def _scenario_defaults(glob: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """mlperf.conf's per-scenario defaults."""
    scen_defaults: dict[str, dict[str, Any]] = {}
    for scen, d in glob["mlperf_conf_scenario_defaults"].items():
        entry: dict[str, Any] = {
            "min_duration_ms": int(d["min_duration"]),
            "target_latency_percentile": float(d["target_latency_percentile"]),
        }
        if "samples_per_query" in d:
            entry["samples_per_query"] = int(d["samples_per_query"])
        if "min_query_count" in d:
            entry["min_query_count"] = int(d["min_query_count"])
        entry["cite"] = check_cite(d["cite"])
        scen_defaults[scen] = entry
    return scen_defaults


def _benchmarks(
    round_name: str, facts: Mapping[str, Any], consts: OfficialConstants
) -> dict[str, dict[str, Any]]:
    """Every benchmark of the round, with mlperf.conf's per-model percentile overrides and a note on each accuracy
    metric the checker has no ACC_PATTERN for."""
    rf = facts["rounds"][round_name]
    benchmarks = {
        name: build_benchmark(round_name, name, bf, facts["discrepancies"], consts)
        for name, bf in rf["benchmarks"].items()
    }
    # per-model percentile overrides in mlperf.conf (pointpainting SingleStream p99.9)
    for scen, d in rf["globals"]["mlperf_conf_scenario_defaults"].items():
        for key, val in d.items():
            model = key[: -len("_target_latency_percentile")]
            if key.endswith("_target_latency_percentile") and model in benchmarks:
                bench = benchmarks[model]
                bench["target_latency_percentile_overrides"] = {scen: float(val)}
                bench["cites"]["target_latency_percentile_overrides"] = check_cite(d[f"{model}_cite"])
    patterns = consts.data["acc_patterns"][consts.family(round_name)]
    for bench in benchmarks.values():
        metrics = [
            t["metric"] for t in (*bench.get("accuracy_targets", []), *bench.get("accuracy_upper_limits", []))
        ]
        for metric in dict.fromkeys(metrics):
            if metric not in patterns:
                bench["notes"].append(
                    f"accuracy metric {metric}: no ACC_PATTERN for it in the checker constants "
                    "available here (CHK_CONST); its accuracy.txt line format is unknown"
                )
    return benchmarks


def _round_notes(round_name: str, facts: Mapping[str, Any], consts: OfficialConstants) -> list[str]:
    """The facts' notes, the round's own and the round-level discrepancies."""
    notes = [" ".join(str(n).split()) for n in facts["rounds"][round_name].get("notes", [])]
    notes.extend(" ".join(str(n).split()) for n in consts.data["rounds"][round_name]["notes"])
    for d in facts["discrepancies"]:
        scope = consts.data["discrepancy_scope"].get(str(d["id"]), {"benchmarks": [], "rounds": []})
        if "*" in scope["benchmarks"] and round_name in scope["rounds"]:
            notes.append(f"{d['id']} ({d['topic']}): {' '.join(str(d['summary']).split())}")
    return notes


def _identity(round_name: str, facts: Mapping[str, Any], consts: OfficialConstants) -> dict[str, Any]:
    """Name, checker, rules and mlperf.conf sources, accepted LoadGen versions and the releases runs use."""
    settings = consts.data["rounds"][round_name]
    sel = facts["meta"]["round_source_selection"][round_name]
    out: dict[str, Any] = {
        "name": round_name,
        "version": round_name.lstrip("v"),
        "checker": settings["checker"],
        "rules_source": str(sel["rules_text"]),
        "mlperf_conf_source": str(sel["mlperf_conf"]),
        "sources": {},  # filled from the citations actually used
        "loadgen_versions": list(settings["loadgen_versions"]),
        "loadgen_versions_cite": check_cite(settings["loadgen_cite"]),
    }
    if "loadgen_runs" in settings:
        runs = settings["loadgen_runs"]
        out["loadgen_runs"] = {**runs, "notes": list(runs["notes"]), "cite": check_cite(runs["cite"])}
    if consts.family(round_name) == "head":
        out["endpoints_allowed_models"] = list(consts.data["endpoints_allowed_models"])
        out["endpoints_cite"] = consts.cite(round_name, "endpoints")
        out["endpoints_accuracy_checked_models"] = list(consts.data["endpoints_accuracy_checked_models"])
        out["endpoints_accuracy_cite"] = consts.cite(round_name, "endpoints_accuracy")
    return out


def _results(round_name: str, consts: OfficialConstants) -> dict[str, Any]:
    """Minimum duration, early stopping, result keys, units, ACC_PATTERN and the compliance deltas."""
    data = consts.data
    scenarios = _LOADGEN_SCENARIOS if consts.family(round_name) == "v4" else tuple(data["result_fields"])
    return {
        "min_duration_ms": data["min_duration_ms"],
        "min_duration_cite": consts.cite(round_name, "min_duration"),
        "early_stopping_scenarios": [s for s in _EARLY_STOPPING_SCENARIOS if s in scenarios],
        "early_stopping_cite": consts.cite(round_name, "early_stopping"),
        "result_fields": {s: k for s, k in data["result_fields"].items() if s in scenarios},
        "result_fields_cite": consts.cite(round_name, "result_fields"),
        "units": {s: u for s, u in data["units"].items() if s in scenarios},
        "units_cite": consts.cite(round_name, "units"),
        "power_units": {s: u for s, u in data["power_units"].items() if s in scenarios},
        "acc_patterns": dict(data["acc_patterns"][consts.family(round_name)]),
        "acc_patterns_cite": consts.cite(round_name, "acc_patterns"),
        "compliance_delta_pct": dict(data["compliance_delta_pct"]),
        "compliance_delta_pct_cite": consts.cite(round_name, "compliance_delta"),
    }


def _system(round_name: str, consts: OfficialConstants) -> dict[str, Any]:
    """The system-description fields."""
    system: dict[str, Any] = consts.group("system", round_name)
    if consts.has_cite(round_name, "summary_int_fields"):
        system["summary_int_fields_cite"] = consts.cite(round_name, "summary_int_fields")
    system["cite"] = consts.cite(round_name, "system")
    return system


def _structure(round_name: str, consts: OfficialConstants) -> dict[str, Any]:
    """The file lists of a submission tree and the family's layout."""
    structure: dict[str, Any] = consts.group("structure", round_name)
    structure["layout"] = consts.group("layouts")[consts.data["rounds"][round_name]["layout"]]
    structure["cite"] = consts.cite(round_name, "structure")
    return structure


def build_round(round_name: str, facts: Mapping[str, Any], consts: OfficialConstants) -> dict[str, Any]:
    """The round file's data (validated by the caller against ``rules.models.Round``)."""
    glob = facts["rounds"][round_name]["globals"]
    benchmarks = _benchmarks(round_name, facts, consts)
    out: dict[str, Any] = {
        **_identity(round_name, facts, consts),
        "seeds": _seeds(glob["seeds"]),
        **({"test05_seeds": _seeds(glob["test05_seeds"])} if "test05_seeds" in glob else {}),
        "scenario_defaults": _scenario_defaults(glob),
        **_results(round_name, consts),
        "system": _system(round_name, consts),
        "structure": _structure(round_name, consts),
        "benchmarks": benchmarks,
        "aliases": {k: v for k, v in consts.data["model_mapping"].items() if v in benchmarks},
        "aliases_cite": consts.cite(round_name, "aliases"),
        "alias_substrings": [list(p) for p in consts.data["alias_substrings"]],
        "notes": _round_notes(round_name, facts, consts),
    }
    out["sources"] = _used_sources(out, facts["meta"]["sources"], consts.data["sources"])
    return out


def _collect_cites(obj: Any, acc: set[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if (k == "cite" or k.endswith("_cite")) and isinstance(v, str):
                acc.add(v)
            elif k == "cites" and isinstance(v, dict):
                acc.update(str(x) for x in v.values())
            else:
                _collect_cites(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            _collect_cites(v, acc)


def _used_sources(
    round_data: dict[str, Any], facts_sources: Mapping[str, Any], extra_sources: Mapping[str, Any]
) -> dict[str, Any]:
    """The sources the round's citations (and the source ids its notes name) use; an unknown one is a ValueError."""
    cites: set[str] = set()
    _collect_cites(round_data, cites)
    for key in ("rules_source", "mlperf_conf_source"):
        cites.add(f"{round_data[key]}:1")
    known = {**facts_sources, **extra_sources}
    notes = [*round_data["notes"]]
    for bench in round_data["benchmarks"].values():
        notes.extend(bench.get("notes", []))
    for n in notes:
        cites.update(f"{tok}:1" for tok in re.findall(r"[A-Za-z][A-Za-z0-9_.]*", n) if tok in known)
    ids: set[str] = set()
    for c in cites:
        for part in c.split(";"):
            m = re.match(r"\s*([A-Za-z][A-Za-z0-9_.]*?)(?::|#|$)", part)
            if m:
                ids.add(m.group(1))
    out: dict[str, Any] = {}
    for sid in sorted(ids):
        if sid in known:
            src = known[sid]
            out[sid] = {"path": str(src["path"]), "provenance": str(src["provenance"])}
    missing = sorted(i for i in ids if i not in known and not i.startswith("RES"))
    if missing:
        raise ValueError(f"{round_data['name']}: citations name unknown sources {missing}")
    return out
