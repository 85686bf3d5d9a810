"""Round data: every round loads, is internally consistent, and v5.1 equals the official checker."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from rules_params_table import parse as parse_params

from rules import (
    UnknownBenchmark,
    UnknownRound,
    find_benchmark,
    latest_round,
    list_rounds,
    load_round,
    normalize_round,
)
from rules.build_values import arith, check_cite
from rules.models import Round, Scenario

ROUNDS = ["v4.1", "v5.0", "v5.1", "v6.0", "v6.1"]


def all_rounds() -> list[Round]:
    return [load_round(r) for r in list_rounds()]


def test_every_round_loads_in_order() -> None:
    assert list_rounds() == ROUNDS
    assert latest_round() == "v6.1"
    for name in ROUNDS:
        rnd = load_round(name)
        assert rnd.name == name
        assert rnd.version == name[1:]
        assert rnd.benchmarks, name
        for key, bench in rnd.benchmarks.items():
            assert bench.name == key


@pytest.mark.parametrize(
    ("given", "expected"), [("v5.1", "v5.1"), ("5.1", "v5.1"), ("V5.1", "v5.1"), ("5.1.1", "v5.1")]
)
def test_normalize_round(given: str, expected: str) -> None:
    assert normalize_round(given) == expected


def test_unknown_round_names_known_rounds() -> None:
    with pytest.raises(UnknownRound, match=re.escape("known rounds: v4.1, v5.0, v5.1, v6.0, v6.1")):
        load_round("v4.0")
    with pytest.raises(UnknownRound, match="not a round name"):
        load_round("latest")


def test_unknown_benchmark_points_to_other_rounds() -> None:
    with pytest.raises(UnknownBenchmark, match=r"exists in v6\.0, v6\.1"):
        find_benchmark("v5.1", "gpt-oss-120b")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("llama3_1-8b", "llama3.1-8b"),
        ("llama3_1-8b-edge", "llama3.1-8b-edge"),
        ("llama3_1-405b", "llama3.1-405b"),
        ("resnet50", "resnet"),
        ("mobilenet", "resnet"),
        ("ssd-resnet34", "retinanet"),
        ("efficientnet-lite4", "resnet"),  # official substring heuristic
        ("resnet50-int8", "resnet"),
        ("bert-99.9-fp16", "bert-99.9"),
        ("bert-99-int8", "bert-99"),
        ("LLAMA2-70B-99", "llama2-70b-99"),  # case-insensitive fallback
        ("Llama3_1-8B", "llama3.1-8b"),
    ],
)
def test_aliases_resolve_like_the_official_checker(name: str, expected: str) -> None:
    assert load_round("v5.1").resolve(name) == expected


def test_unknown_name_does_not_resolve() -> None:
    rnd = load_round("v5.1")
    assert rnd.benchmark("gptj-99") is None
    assert rnd.resolve("llama2-70b-interactive-99") is None
    # v5.0 still has the interactive benchmarks as their own ids
    assert load_round("v5.0").resolve("llama2-70b-interactive-99") == "llama2-70b-interactive-99"


def test_interactive_limits_stricter_than_server() -> None:
    seen = 0
    for rnd in all_rounds():
        for b in rnd.benchmarks.values():
            lim = b.token_latency_limits
            if Scenario.INTERACTIVE in lim and Scenario.SERVER in lim:
                seen += 1
                assert lim[Scenario.INTERACTIVE].ttft_ms < lim[Scenario.SERVER].ttft_ms, b.name
                assert lim[Scenario.INTERACTIVE].tpot_ms < lim[Scenario.SERVER].tpot_ms, b.name
    assert seen >= 10  # llama2-70b x2, 405b, 8b in v5.1 alone


def test_interactive_allowed_only_with_token_limits_or_bound() -> None:
    for rnd in all_rounds():
        for b in rnd.benchmarks.values():
            allowed = {s for st in b.scenarios for s in b.allowed_scenarios(st)}
            if Scenario.INTERACTIVE in allowed:
                gated = (
                    Scenario.INTERACTIVE in b.token_latency_limits
                    or b.interactive_target_latency_ns is not None
                )
                # where the checker defines no gate, the data says so
                assert gated or any("no Interactive latency gate" in n for n in b.notes), (
                    f"{rnd.name} {b.name}"
                )


def test_one_of_server_or_interactive_v51() -> None:
    rnd = load_round("v5.1")
    with_one_of = {b.name for b in rnd.benchmarks.values() if b.scenarios["datacenter+edge"].one_of}
    assert with_one_of == {"llama2-70b-99", "llama2-70b-99.9", "llama3.1-405b", "llama3.1-8b"}
    sset = rnd.benchmarks["llama3.1-8b"].scenario_set("edge,datacenter")
    assert sset is not None and sset.one_of == (Scenario.SERVER, Scenario.INTERACTIVE)


def test_thresholds_are_reference_times_factor_exactly() -> None:
    n = 0
    for rnd in all_rounds():
        for b in rnd.benchmarks.values():
            targets = [*b.accuracy_targets, *b.accuracy_upper_limits]
            for ts in b.accuracy_targets_by_scenario.values():
                targets.extend(ts)
            for t in targets:
                if t.reference is not None:
                    assert t.factor is not None
                    assert t.value == t.reference * t.factor, (rnd.name, b.name, t.metric)
                    n += 1
    assert n > 150


def test_every_group_cites_a_listed_source() -> None:
    source_id = re.compile(r"\s*([A-Za-z][A-Za-z0-9_.]*?)(?::|#)")
    for rnd in all_rounds():
        cites: list[str] = [
            c
            for c in (
                rnd.seeds.cite,
                rnd.system.cite,
                rnd.structure.cite,
                rnd.min_duration_cite,
                rnd.early_stopping_cite,
                rnd.loadgen_versions_cite,
                rnd.acc_patterns_cite,
                rnd.result_fields_cite,
                rnd.aliases_cite,
                rnd.structure.layout.cite,
                rnd.units_cite,
                rnd.compliance_delta_pct_cite,
            )
            if c
        ]
        cites += [d.cite for d in rnd.scenario_defaults.values() if d.cite]
        for b in rnd.benchmarks.values():
            assert b.accuracy_cite and b.compliance_cite, b.name
            assert all(s.cite for s in b.scenarios.values()), b.name
            assert all(t.cite for t in b.accuracy_targets), b.name
            assert all(lim.cite for lim in b.token_latency_limits.values()), b.name
            cites += [b.accuracy_cite, b.compliance_cite, *b.cites.values()]
            cites += [s.cite for s in b.scenarios.values() if s.cite]
            cites += [t.cite for t in b.accuracy_targets if t.cite]
        for cite in cites:
            check_cite(cite)
            for part in cite.split(";"):
                m = source_id.match(part)
                assert m and m.group(1) in rnd.sources, f"{rnd.name}: {cite}"


def test_acc_patterns_cover_every_metric_and_compile() -> None:
    for rnd in all_rounds():
        for pattern in rnd.acc_patterns.values():
            assert re.compile(pattern).groups >= 1
        for b in rnd.benchmarks.values():
            metrics = {t.metric for t in (*b.accuracy_targets, *b.accuracy_upper_limits)}
            for ts in b.accuracy_targets_by_scenario.values():
                metrics |= {t.metric for t in ts}
            for metric in metrics - set(rnd.acc_patterns):  # only where the data says so
                assert any(f"metric {metric}: no ACC_PATTERN" in n for n in b.notes), (rnd.name, b.name)


def test_acc_patterns_parse_real_lines() -> None:
    p = load_round("v5.1").acc_patterns
    line = "{'rouge1': 44.4312, 'rouge2': 22.0352, 'rougeL': 28.6162, 'tokens_per_sample': 294.45}"
    assert re.match(p["ROUGE1"], line).group(1) == "44.4312"  # type: ignore[union-attr]
    assert re.match(p["TOKENS_PER_SAMPLE"], line).group(1) == "294.45"  # type: ignore[union-attr]
    assert re.match(p["acc"], "accuracy=76.456%, good=38228").group(1) == "76.456"  # type: ignore[union-attr]


def test_system_and_structure_lists() -> None:
    for rnd in all_rounds():
        assert len(rnd.system.required_fields) == 35
        assert len(rnd.system.meaningful_fields) == 26
        assert set(rnd.system.meaningful_fields) <= set(rnd.system.required_fields)
        assert len(rnd.system.network_fields) == 13
        # v4.1's SYSTEM_DESC_REQUIRED_FIELDS_POWER has no system_power_only
        assert len(rnd.system.power_fields) == (14 if rnd.name == "v4.1" else 15)
        assert rnd.structure.max_accuracy_log_bytes == 10240
        assert rnd.structure.file_size_limit_mb == 50
    assert load_round("v5.1").structure.layout.code_root == "code"
    assert not load_round("v5.1").structure.layout.compliance_in_result_dir
    assert load_round("v6.0").structure.layout.code_root == "src"


def test_units_llm_tokens_and_llama31_8b_interactive_queries() -> None:
    rnd = load_round("v5.1")
    b = rnd.benchmarks["llama3.1-8b"]
    assert b.units_overrides[Scenario.SERVER] == "Tokens/s"
    assert b.units_overrides.get(Scenario.INTERACTIVE, rnd.units[Scenario.INTERACTIVE]) == "Queries/s"
    assert b.result_field_overrides[Scenario.INTERACTIVE] == "result_completed_tokens_per_second"


def test_deepseek_v51_uses_enforced_max_new_tokens() -> None:
    b = load_round("v5.1").benchmarks["deepseek-r1"]
    assert b.max_new_tokens == 20000
    assert b.rules_text["max_new_tokens"] == "32768"
    assert "D-14" in b.discrepancies


def test_gpt_oss_interactive_tpot_is_the_enforced_value() -> None:
    b = load_round("v6.0").benchmarks["gpt-oss-120b"]
    assert b.token_latency_limits[Scenario.INTERACTIVE].tpot_ms == 15
    assert "D-01" in b.discrepancies


# ----------------------------------------------------------------------- against shared/ data


@pytest.mark.shared
def test_v51_equals_official_parameter_table(shared_dir: Path) -> None:
    rows = parse_params(shared_dir / "reference" / "official-checker-v5.1-parameters.md")
    rnd = load_round("v5.1")
    assert set(rows) == set(rnd.benchmarks)
    for name, row in rows.items():
        b = rnd.benchmarks[name]
        assert {t.metric: f"{t.value:g}" for t in b.accuracy_targets} == row.lower, name
        assert {t.metric: f"{t.value:g}" for t in b.accuracy_upper_limits} == row.upper, name
        assert b.performance_sample_count == row.performance_sample_count, name
        assert b.dataset_size == row.dataset_size, name
        assert b.offline_min_samples_per_query == row.offline_min_spq, name
        assert b.server_target_latency_ns == row.server_latency_ns, name
        ttft = {
            s.value: (f"{lim.ttft_ms * 1e6:g}", f"{lim.tpot_ms * 1e6:g}")
            for s, lim in b.token_latency_limits.items()
        }
        assert ttft == row.ttft_tpot_ns, name
        assert b.equal_issue_required == row.equal_issue, name
        assert b.use_token_latencies_required == row.token_latencies, name
        assert b.compliance_tests == row.compliance, name
        for systype, req in row.required.items():
            sset = b.scenarios.get(systype)
            assert (tuple(s.value for s in sset.required) if sset else ()) == req, (name, systype)
        dc = b.scenarios.get("datacenter")
        assert (tuple(s.value for s in dc.optional) if dc else ()) == row.optional_dc, name
        overrides = {s.value: k for s, k in b.result_field_overrides.items() if s is not Scenario.INTERACTIVE}
        assert overrides == row.result_overrides, name
        assert {s.value: n for s, n in b.min_query_count.items()} == row.min_query_count, name


@pytest.mark.shared
def test_v51_round_constants_equal_official_table(shared_dir: Path) -> None:
    text = (shared_dir / "reference" / "official-checker-v5.1-parameters.md").read_text()
    rnd = load_round("v5.1")
    seeds = json.loads(re.search(r"^Seeds: (\{.*\})$", text, re.M).group(1).replace("'", '"'))  # type: ignore[union-attr]
    assert rnd.seeds.model_dump(exclude={"cite"}) == seeds
    fields = json.loads(
        re.search(r"^RESULT_FIELD_NEW: (\{.*\})$", text, re.M).group(1).replace("'", '"')  # type: ignore[union-attr]
    )
    assert {s.value: k for s, k in rnd.result_fields.items() if s is not Scenario.INTERACTIVE} == fields
    patterns = dict(re.findall(r"^- (\w+): `(.*)`$", text, re.M))
    assert patterns == rnd.acc_patterns
    mapping = json.loads(
        re.search(r"^model_mapping: (\{.*\})$", text, re.M).group(1).replace("'", '"')  # type: ignore[union-attr]
    )
    assert mapping == rnd.aliases
    images = re.search(r"'images': \[(.*?)\]", text).group(1)  # type: ignore[union-attr]
    sdxl = rnd.benchmarks["stable-diffusion-xl"].extra_accuracy_files["images"]
    assert list(sdxl) == re.findall(r"'(\d+)'", images)


def _unit(rnd: Round, model: str, scenario: str) -> str:
    b = rnd.benchmark(model)
    assert b is not None, model
    scen = Scenario.parse(scenario)
    assert scen is not None, scenario
    return b.units_overrides.get(scen, rnd.units[scen])


@pytest.mark.shared
def test_units_match_published_v51_results(shared_dir: Path) -> None:
    rnd = load_round("v5.1")
    rows = json.loads((shared_dir / "data" / "mlperf-inference-v5.1" / "summary_results.json").read_text())
    pairs = {(r["Model"], r["Scenario"], r["Performance_Units"]) for r in rows}
    assert len(pairs) > 30
    for model, scenario, unit in pairs:
        assert _unit(rnd, model, scenario) == unit, (model, scenario)


@pytest.mark.shared
def test_units_match_official_checker_csv(shared_dir: Path) -> None:
    rnd = load_round("v5.1")
    path = shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for r in rows:
        assert _unit(rnd, r["MlperfModel"], r["Scenario"]) == r["Units"], r["Location"]


@pytest.mark.shared
def test_published_loadgen_versions_are_accepted(v51_tree: Path) -> None:
    found: set[str] = set()
    key = re.compile(r'"key": "loadgen_version", "value": "([^" ]+)')
    for path in v51_tree.rglob("mlperf_log_detail.txt"):
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = key.search(line)
                if m:
                    found.add(m.group(1))
                    break
    assert found
    prefixes = load_round("v5.1").loadgen_versions
    assert all(v.startswith(prefixes) for v in found), found


def test_arith_matches_python_float() -> None:
    assert arith("44.4312 * 0.99") == 44.4312 * 0.99
    assert arith("(100.0 - 2.0671) * 0.99") == (100.0 - 2.0671) * 0.99
    with pytest.raises(ValueError):
        arith("__import__('os')")


def test_one_loadgen_version_match_for_logs() -> None:
    """Round.accepts_loadgen is the one match the checker and round detection use (series or single releases)."""
    v51 = load_round("v5.1")
    assert v51.accepts_loadgen("5.0.25") and v51.accepts_loadgen("5.1.0") and v51.accepts_loadgen("5.1")
    assert not v51.accepts_loadgen("6.0.17") and not v51.accepts_loadgen("5.01")
    pinned = v51.model_copy(update={"loadgen_versions": ("6.0.15",)})
    assert pinned.accepts_loadgen("6.0.15") and not pinned.accepts_loadgen("6.0.1")
    runs = load_round("v6.0").loadgen_runs
    assert runs is not None and runs.accepts("6.0.15") and not runs.accepts("6.0.17")
