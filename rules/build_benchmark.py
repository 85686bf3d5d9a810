"""One benchmark of a generated round (``rules/data/<round>.yaml`` ``benchmarks``), from its facts and the official
checkers' constants, built in named steps that each add their keys in the file's order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.build_constants import OfficialConstants
from rules.build_values import arith, check_cite, is_cite_part, join_cites

# the inference parameters that become fields; any other is a note
_TOKEN_PARAMETERS = (
    "max_new_tokens",
    "min_new_tokens",
    "max_new_tokens (accuracy)",
    "max_new_tokens (performance)",
)


@dataclass
class _Draft:
    """A benchmark being built: its fields (in output order), their citations and its notes."""

    round_name: str
    name: str
    consts: OfficialConstants
    b: dict[str, Any]
    cites: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def family(self) -> str:
        return self.consts.family(self.round_name)

    def cite(self, key: str) -> str:
        return self.consts.cite(self.round_name, key)

    def set(self, key: str, value: Any, cite: str) -> None:
        """A field with its citation (validated)."""
        self.b[key] = value
        self.cites[key] = check_cite(cite)


def _scenario_list(names: Iterable[str]) -> list[str]:
    return [str(n) for n in names]


def _target(t: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"metric": t["metric"], "value": arith(t["expr"])}
    if "reference" in t:
        out["reference"] = arith(t["reference"])
        out["factor"] = float(t["factor"])
    out["cite"] = check_cite(t["cite"])
    return out


def _int_param(params: list[Mapping[str, Any]], name: str) -> tuple[int | None, str | None]:
    for p in params:
        if p["parameter"] == name:
            return int(str(p["value"])), str(p["cite"])
    return None, None


def _rules_text(rt: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, str], list[str]]:
    text: dict[str, str] = {}
    cites: list[str] = []
    for systype, cells in rt.items():
        for key, val in cells.items():
            if key == "cite" or key.endswith("_cite"):
                cites.append(str(val))
            else:
                text[f"{systype}.{key}"] = " ".join(str(val).split())
    return text, cites


def has_scenario(scenarios: Mapping[str, Mapping[str, Any]], scen: str) -> bool:
    """Whether any system type requires or allows scenario ``scen``."""
    return any(scen in s.get("required", []) or scen in s.get("optional", []) for s in scenarios.values())


def _scenarios(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Required, optional and one-of scenarios per system type."""
    scenarios: dict[str, dict[str, Any]] = {}
    for systype, sc in facts["scenarios_checker"].items():
        entry: dict[str, Any] = {"required": _scenario_list(sc["required"])}
        if sc.get("optional"):
            entry["optional"] = _scenario_list(sc["optional"])
        if sc.get("one_of"):
            entry["one_of"] = _scenario_list(sc["one_of"])
        entry["cite"] = join_cites(sc.get("cite"), sc.get("cite_optional"))
        scenarios[systype] = entry
    d.b["scenarios"] = scenarios


def _sample_counts(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Sample counts, minimum query counts and the minimum-duration exemption."""
    counts = facts["sample_counts"]
    for key in ("performance_sample_count", "dataset_size", "offline_min_samples_per_query"):
        if key in counts:
            d.set(key, int(counts[key]["value"]), counts[key]["cite"])
    if "accuracy_sample_count" in counts:
        asc = counts["accuracy_sample_count"]
        if isinstance(asc["value"], dict):
            d.b["accuracy_sample_count_by_scenario"] = {k: int(v) for k, v in asc["value"].items()}
        else:
            d.b["accuracy_sample_count"] = int(asc["value"])
        d.cites["accuracy_sample_count"] = check_cite(asc["cite"])
    mqc = facts["min_query_count_checker"]
    d.set("min_query_count", {k: int(v) for k, v in mqc["value"].items()}, mqc["cite"])
    md = facts["min_duration_ms"]
    if md.get("value") is None:
        d.set("min_duration_exempt", True, md["cite"])
        d.notes.append(f"min duration: {md.get('note', 'exempt')}")


def _token_latency_limits(d: _Draft, tt: Mapping[str, Any]) -> None:
    """The checker's p99 TTFT/TPOT gates per scenario."""
    limits: dict[str, dict[str, Any]] = {}
    if "applies_to" in tt:  # v5.0: model-keyed, applies to the only non-Offline scenario
        limits["Server"] = {
            "ttft_ms": float(tt["ttft_ms"]),
            "tpot_ms": float(tt["tpot_ms"]),
            "cite": check_cite(tt["cite"]),
        }
        d.notes.append(f"TTFT/TPOT limits apply to {tt['applies_to']}")
    for scen in ("Server", "Interactive"):
        if scen in tt:
            limits[scen] = {
                "ttft_ms": float(tt[scen]["ttft_ms"]),
                "tpot_ms": float(tt[scen]["tpot_ms"]),
                "cite": check_cite(tt[scen]["cite"]),
            }
    d.b["token_latency_limits"] = limits


def _latency(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Target latencies (checker and mlperf.conf), token-latency gates and the mlperf.conf model keys."""
    lat = facts.get("latency", {})
    lc = lat.get("checker_latency_constraint_ns")
    if lc:
        if "Server" in lc["value"]:
            d.b["server_target_latency_ns"] = int(lc["value"]["Server"])
        if "Interactive" in lc["value"]:
            d.b["interactive_target_latency_ns"] = int(lc["value"]["Interactive"])
        d.cites["server_target_latency_ns"] = check_cite(lc["cite"])
    if lat.get("checker_ttft_tpot_p99"):
        _token_latency_limits(d, lat["checker_ttft_tpot_p99"])
    conf_lat = lat.get("mlperf_conf", {})
    if conf_lat:
        d.b["mlperf_conf_target_latency_ms"] = {
            scen: float(v["target_latency_ms"]) for scen, v in conf_lat.items()
        }
        d.cites["mlperf_conf_target_latency_ms"] = join_cites(*(v["cite"] for v in conf_lat.values())) or ""
        for scen, v in conf_lat.items():
            key = str(v["conf_key"]).split(".")[0]
            if scen == "Interactive":
                d.b["mlperf_conf_interactive_model"] = key
            elif scen == "Server":
                d.b["mlperf_conf_model"] = key
    conf_models = d.consts.data["mlperf_conf_model"]
    if "mlperf_conf_model" not in d.b and d.name in conf_models:
        d.b["mlperf_conf_model"] = conf_models[d.name]
    if "mlperf_conf_model" in d.b:
        psc = facts["sample_counts"].get("mlperf_conf_performance_sample_count_override")
        d.cites["mlperf_conf_model"] = check_cite(psc["cite"]) if psc else d.cite("model_config")


def _accuracy(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Accuracy targets (per scenario where they differ), upper limits and TEST01 delta overrides."""
    acc = facts["accuracy"]
    if "targets" in acc:
        d.b["accuracy_targets"] = [_target(t) for t in acc["targets"]]
    if "targets_by_scenario" in acc:
        d.b["accuracy_targets_by_scenario"] = {
            scen: [_target(t) for t in ts] for scen, ts in acc["targets_by_scenario"].items()
        }
        if "accuracy_targets" not in d.b:
            d.b["accuracy_targets"] = [_target(t) for t in acc["targets_by_scenario"]["Offline"]]
    if acc.get("upper_limits"):
        d.b["accuracy_upper_limits"] = [_target(t) for t in acc["upper_limits"]]
    d.b["accuracy_cite"] = check_cite(acc["comparison_cite"])
    for t in [*acc.get("targets", []), *acc.get("upper_limits", [])]:
        if t.get("note"):
            d.notes.append(f"accuracy {t['metric']}: {t['note']}")
            break
    if "test01_delta_perc_override" in acc:
        ov = acc["test01_delta_perc_override"]
        d.set("compliance_delta_pct_overrides", {k: float(v) for k, v in ov["value"].items()}, ov["cite"])


def _flags(d: _Draft, facts: Mapping[str, Any]) -> None:
    """mlperf.conf flags, equal-issue mode, token latencies and whether the benchmark is an LLM."""
    conf_flags = facts.get("mlperf_conf_flags", {})
    flags = {k: int(v["value"]) for k, v in conf_flags.items()}
    if flags:
        d.b["mlperf_conf_flags"] = flags
        d.cites["mlperf_conf_flags"] = join_cites(*(v["cite"] for v in conf_flags.values())) or ""
    d.b["equal_issue_required"] = flags.get("sample_concatenate_permutation") == 1
    if d.b["equal_issue_required"]:
        scp = conf_flags["sample_concatenate_permutation"]["cite"]
        d.cites["equal_issue_required"] = check_cite(f"{scp}; {d.cite('equal_issue')}")
    d.b["use_token_latencies_required"] = d.name in d.consts.data["token_latency_models"][d.family]
    if d.b["use_token_latencies_required"]:
        d.cites["use_token_latencies_required"] = d.cite("token_latencies")
    d.b["is_llm"] = bool(facts.get("decoding_rules")) or d.b["use_token_latencies_required"]


def _compliance(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Compliance tests, TEST06's tokens, the TEST07/TEST09 thresholds, the evaluator and the accuracy-log format."""
    comp = facts["compliance_tests"]
    d.b["compliance_tests"] = list(comp["tests"])
    if is_cite_part(str(comp["cite"]).split(";")[0]):
        d.b["compliance_cite"] = check_cite(comp["cite"])
    else:
        d.b["compliance_cite"] = check_cite(d.consts.data["family_cites"]["compliance_fallback"])
        d.notes.append(f"compliance: {comp['cite']}")
    data = d.consts.data
    test06 = data["test06_tokens"].get(d.name)
    if "TEST06" in d.b["compliance_tests"] and test06:
        d.b["test06_eos_token_ids"] = list(test06["eos_token_ids"])
        d.b["test06_token_dtype"] = test06["token_dtype"]
        d.cites["test06_eos_token_ids"] = check_cite(test06["cite"])
    if d.family == "head":
        for key, threshold in data["compliance_thresholds"].get(d.name, {}).items():
            d.set(key, threshold["value"], threshold["cite"])
    if d.name in data["evaluators"]:
        d.b["evaluator"] = data["evaluators"][d.name]["family"]
    if d.name in data["accuracy_log_formats"]:
        log_format = data["accuracy_log_formats"][d.name]
        d.set("accuracy_log_format", log_format["format"], log_format["cite"])
    if d.name in data["accuracy_txt_hashes"]:
        txt_hash = data["accuracy_txt_hashes"][d.name]
        d.set("accuracy_txt_hash", txt_hash["hash"], txt_hash["cite"])


def _result_keys_and_units(d: _Draft) -> None:
    """The LoadGen result key and the summary unit where they are not the scenario's."""
    scenarios = d.b["scenarios"]
    overrides = d.consts.data["result_overrides"][d.round_name].get(d.name)
    if overrides:
        ro = dict(overrides)
        if "Server" in ro and has_scenario(scenarios, "Interactive"):
            ro["Interactive"] = ro["Server"]
        d.set("result_field_overrides", ro, d.cite("result_overrides"))
    units = d.consts.data["units_overrides"].get(d.family, {}).get(d.name)
    if units:
        d.set(
            "units_overrides",
            {s: u for s, u in units.items() if has_scenario(scenarios, s)},
            d.cite("units_overrides"),
        )


def _generation(d: _Draft, facts: Mapping[str, Any]) -> None:
    """Output-token limits, the decoding algorithm and the generation-length window (a note)."""
    params = list(facts.get("inference_parameters_rules", []))
    mx, mx_cite = _int_param(params, "max_new_tokens")
    if mx is None:
        mx, mx_cite = _int_param(params, "max_new_tokens (accuracy)")
        mxp, mxp_cite = _int_param(params, "max_new_tokens (performance)")
        if mxp is not None:
            d.set("max_new_tokens_performance", mxp, mxp_cite or "")
    if mx is not None:
        d.set("max_new_tokens", mx, mx_cite or "")
    mn, mn_cite = _int_param(params, "min_new_tokens")
    if mn is not None:
        d.set("min_new_tokens", mn, mn_cite or "")
    for p in params:
        if p["parameter"] not in _TOKEN_PARAMETERS:
            d.notes.append(f"inference parameter {p['parameter']} = {p['value']} ({p['cite']})")
    if facts.get("decoding_rules"):
        d.set("decoding", str(facts["decoding_rules"]["algorithm"]), facts["decoding_rules"]["cite"])
    gl = facts.get("generation_length_checker")
    if gl:
        d.notes.append(
            f"generation length: {gl['metric']} ({gl['unit']}) must lie within the "
            "accuracy lower bound and upper limit"
        )


def _sdxl_images(d: _Draft) -> None:
    """The extra accuracy image ids of stable-diffusion-xl."""
    if d.name == "stable-diffusion-xl":
        images = list(d.consts.data["sdxl_images"][d.round_name])
        d.set("extra_accuracy_files", {"images": images}, d.cite("sdxl_images"))


def _enforced_values(d: _Draft) -> dict[str, str]:
    """The notes on what the round does not gate, the enforced values that replace a rules-text value (returned:
    field -> the rules-text value), and the token results the summary CSV mislabels."""
    if (
        has_scenario(d.b["scenarios"], "Interactive")
        and "Interactive" not in d.b.get("token_latency_limits", {})
        and "interactive_target_latency_ns" not in d.b
    ):
        d.notes.append(
            "Interactive: allowed by the checker's scenario table but no Interactive latency "
            "gate is defined for this benchmark in this round (none is enforced)"
        )
    rules_values: dict[str, str] = {}
    for ov in d.consts.data["enforced_overrides"]:
        if (ov["round"], ov["benchmark"]) != (d.round_name, d.name):
            continue
        key = ov["field"]
        d.notes.append(
            f"{key}: rules text says {d.b.get(key)}, enforced value {ov['value']} ({ov['discrepancy']})"
        )
        rules_values[key] = str(d.b.get(key))
        d.set(key, ov["value"], ov["cite"])
    for scen, key in d.b.get("result_field_overrides", {}).items():
        if "tokens" in key and scen not in d.b.get("units_overrides", {}):
            unit = d.consts.data["units"][scen]
            d.notes.append(
                f"{scen}: the result is {key} but the official summary CSV labels it {unit!r} "
                "(no special_unit_dict entry)"
            )
    return rules_values


def _rules_text_and_discrepancies(
    d: _Draft, facts: Mapping[str, Any], rules_values: dict[str, str], discrepancies: list[Mapping[str, Any]]
) -> None:
    """The rules-text values (where the data holds the enforced one) and the discrepancies that concern the
    benchmark in this round."""
    rt, rt_cites = _rules_text(facts.get("rules_text", {}))
    rt.update(rules_values)
    disc_ids: list[str] = []
    for disc in discrepancies:
        scope = d.consts.data["discrepancy_scope"].get(str(disc["id"]), {"benchmarks": [], "rounds": []})
        if d.name in scope["benchmarks"] and d.round_name in scope["rounds"]:
            disc_ids.append(str(disc["id"]))
            d.notes.append(
                f"{disc['id']} ({disc['topic']}): {' '.join(str(disc['summary']).split())} "
                f"Auditor impact: {' '.join(str(disc['auditor_impact']).split())}."
            )
    if disc_ids:
        rt["discrepancies"] = ", ".join(disc_ids)
        d.b["discrepancies"] = disc_ids
    if rt:
        d.b["rules_text"] = rt
        if rt_cites:
            d.cites["rules_text"] = join_cites(*rt_cites) or ""


def build_benchmark(
    round_name: str,
    name: str,
    facts: Mapping[str, Any],
    discrepancies: list[Mapping[str, Any]],
    consts: OfficialConstants,
) -> dict[str, Any]:
    """The benchmark's entry of the generated round file."""
    d = _Draft(round_name, name, consts, {"name": name, "categories": list(facts["categories"])})
    if facts.get("categories_note"):
        d.notes.append(f"categories: {facts['categories_note']}")
    _scenarios(d, facts)
    _sample_counts(d, facts)
    _latency(d, facts)
    _accuracy(d, facts)
    _flags(d, facts)
    _compliance(d, facts)
    _result_keys_and_units(d)
    _generation(d, facts)
    _sdxl_images(d)
    rules_values = _enforced_values(d)
    _rules_text_and_discrepancies(d, facts, rules_values, discrepancies)
    d.b["notes"] = d.notes
    d.b["cites"] = {k: v for k, v in d.cites.items() if v}
    return d.b
