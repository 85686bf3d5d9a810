"""Round v4.1: its data equals the v4.1 official checker's constants and mlperf.conf.

The expected values are the text of ``tools/submission/submission_checker.py`` at mlcommons/inference tag v4.1
(MODEL_CONFIG["v4.1"] and the module constants; line numbers in the comments) and of its ``mlperf.conf``, copied
here as data: the test does not run or import the checker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rules import Scenario, load_round
from rules.build_data import SOURCES_DIR, load_facts

SS, MS, SV, OF = Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM, Scenario.SERVER, Scenario.OFFLINE
V41 = load_round("v4.1")

# MODEL_CONFIG["v4.1"]["models"] (CHK_v4.1:196-211)
MODELS = {
    "resnet", "retinanet", "bert-99", "bert-99.9", "dlrm-v2-99", "dlrm-v2-99.9", "3d-unet-99", "3d-unet-99.9",
    "gptj-99", "gptj-99.9", "llama2-70b-99", "llama2-70b-99.9", "stable-diffusion-xl", "mixtral-8x7b",
}  # fmt: skip
# "accuracy-target" (CHK_v4.1:257-272): (metric, reference, factor); SDXL's are absolute
TARGETS = {
    "resnet": [("acc", 76.46, 0.99)],
    "retinanet": [("mAP", 37.55, 0.99)],
    "bert-99.9": [("F1", 90.874, 0.999)],
    "dlrm-v2-99": [("AUC", 80.31, 0.99)],
    "3d-unet-99.9": [("DICE", 0.86170, 0.999)],
    "gptj-99": [("ROUGE1", 42.9865, 0.99), ("ROUGE2", 20.1235, 0.99), ("ROUGEL", 29.9881, 0.99),
                ("GEN_LEN", 4016878, 0.9)],
    "llama2-70b-99.9": [("ROUGE1", 44.4312, 0.999), ("ROUGE2", 22.0352, 0.999), ("ROUGEL", 28.6162, 0.999),
                        ("TOKENS_PER_SAMPLE", 294.45, 0.9)],
    "mixtral-8x7b": [("ROUGE1", 45.4911, 0.99), ("ROUGE2", 23.2829, 0.99), ("ROUGEL", 30.3615, 0.99),
                     ("TOKENS_PER_SAMPLE", 145.9, 0.9), ("gsm8k_accuracy", 73.78, 0.99),
                     ("mbxp_accuracy", 60.12, 0.99)],
}  # fmt: skip
SDXL_TARGETS = [("CLIP_SCORE", 31.68631873), ("FID_SCORE", 23.01085758)]  # CHK_v4.1:270
SDXL_UPPER = [("CLIP_SCORE", 31.81331801), ("FID_SCORE", 23.95007626)]  # CHK_v4.1:274
# "performance-sample-count" (CHK_v4.1:285-300) and OFFLINE_MIN_SPQ_SINCE_V4 (CHK_v4.1:432-448)
PSC = {"resnet": 1024, "retinanet": 64, "bert-99": 10833, "dlrm-v2-99.9": 204800, "3d-unet-99": 43,
       "gptj-99.9": 13368, "llama2-70b-99": 24576, "stable-diffusion-xl": 5000, "mixtral-8x7b": 15000}  # fmt: skip
OFFLINE_SPQ = {"resnet": 24576, "dlrm-v2-99": 24576, "bert-99.9": 10833, "3d-unet-99.9": 43, "gptj-99": 13368,
               "stable-diffusion-xl": 5000, "mixtral-8x7b": 15000}  # fmt: skip
# "latency-constraint" (CHK_v4.1:321-335; mixtral's is commented out)
LATENCY_NS = {"resnet": 15000000, "retinanet": 100000000, "bert-99": 130000000, "dlrm-v2-99.9": 60000000,
              "gptj-99": 20000000000, "llama2-70b-99.9": 20000000000, "stable-diffusion-xl": 20000000000,
              "mixtral-8x7b": None, "3d-unet-99": None}  # fmt: skip
# "seeds" / "test05_seeds" (CHK_v4.1:308-319), the same as mlperf.conf lines 22-28
SEEDS = (3066443479025735752, 10688027786191513374, 14962580496156340209)
TEST05_SEEDS = (16799458546791641818, 5453809927556429288, 5435552105434836064)
# check_compliance_dir (CHK_v4.1:2650-2700)
COMPLIANCE = {
    "resnet": ("TEST01", "TEST04", "TEST05"), "retinanet": ("TEST01", "TEST05"), "bert-99": ("TEST01", "TEST05"),
    "dlrm-v2-99.9": ("TEST01", "TEST05"), "3d-unet-99": ("TEST01", "TEST05"), "gptj-99": (), "gptj-99.9": (),
    "llama2-70b-99": ("TEST06",), "mixtral-8x7b": ("TEST06",), "stable-diffusion-xl": ("TEST01", "TEST04"),
}  # fmt: skip
# REQUIRED_ACC_BENCHMARK["stable-diffusion-xl"]["v4.1"] (CHK_v4.1:399-412)
SDXL_IMAGES = ("4655", "2569", "1303", "109", "4509", "3009", "2179", "1826", "2094", "3340")


def test_v41_has_the_checkers_models_and_nothing_else() -> None:
    assert set(V41.benchmarks) == MODELS
    assert V41.resolve("resnet50") == "resnet" and V41.resolve("ssd-resnet34") == "retinanet"
    assert V41.resolve("llama3_1-8b") is None


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_accuracy_targets_are_reference_times_factor(name: str) -> None:
    got = [(t.metric, t.reference, t.factor, t.value) for t in V41.benchmarks[name].accuracy_targets]
    assert got == [(m, ref, f, ref * f) for m, ref, f in TARGETS[name]]


def test_sdxl_absolute_window_and_images() -> None:
    b = V41.benchmarks["stable-diffusion-xl"]
    assert [(t.metric, t.value) for t in b.accuracy_targets] == SDXL_TARGETS
    assert [(t.metric, t.value) for t in b.accuracy_upper_limits] == SDXL_UPPER
    assert b.extra_accuracy_files == {"images": SDXL_IMAGES}
    assert b.compliance_delta_pct_overrides == {"CLIP_SCORE": 1.0, "FID_SCORE": 2.0}


def test_sample_counts_latency_and_minimum_queries() -> None:
    for name, psc in PSC.items():
        assert V41.benchmarks[name].performance_sample_count == psc, name
    for name, spq in OFFLINE_SPQ.items():
        assert V41.benchmarks[name].offline_min_samples_per_query == spq, name
    for name, ns in LATENCY_NS.items():
        assert V41.benchmarks[name].target_latency_ns_for(SV) == ns, name
    assert V41.benchmarks["resnet"].min_query_count == {SS: 1024, MS: 270336, SV: 270336, OF: 1}
    assert V41.benchmarks["dlrm-v2-99"].min_query_count == {SV: 270336, OF: 1}
    assert V41.min_duration_ms == 600000


def test_seeds_and_test05_seeds() -> None:
    assert (V41.seeds.qsl_rng_seed, V41.seeds.sample_index_rng_seed, V41.seeds.schedule_rng_seed) == SEEDS
    t05 = V41.test05_seeds
    assert t05 is not None
    assert (t05.qsl_rng_seed, t05.sample_index_rng_seed, t05.schedule_rng_seed) == TEST05_SEEDS


@pytest.mark.parametrize("name", sorted(COMPLIANCE))
def test_compliance_tests_per_benchmark(name: str) -> None:
    assert V41.benchmarks[name].compliance_tests == COMPLIANCE[name]


def test_scenarios_llm_gates_and_result_keys() -> None:
    b = V41.benchmarks["mixtral-8x7b"]
    assert b.allowed_scenarios("datacenter") == (SV, OF)
    assert b.allowed_scenarios("datacenter,edge") == (SS, SV, OF)  # CHK_v4.1:254
    assert V41.benchmarks["bert-99.9"].scenario_set("edge") is None  # no edge bert-99.9 in v4.1
    for name in ("llama2-70b-99", "mixtral-8x7b"):  # LLM_LATENCY_LIMITS (CHK_v4.1:516-535)
        lim = V41.benchmarks[name].token_latency_limits[SV]
        assert (lim.ttft_ms, lim.tpot_ms) == (2000.0, 200.0)
        assert V41.benchmarks[name].use_token_latencies_required
    assert not V41.benchmarks["gptj-99"].use_token_latencies_required
    # RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE["v4.1"] (CHK_v4.1:472-514); unit_dict (CHK_v4.1:1593-1598)
    gptj = V41.benchmarks["gptj-99"]
    assert V41.result_key(gptj, SV) == "result_inferred_completed_tokens_per_second"
    assert V41.result_key(gptj, OF) == "result_inferred_tokens_per_second"
    assert V41.result_key(V41.benchmarks["resnet"], SV) == "result_completed_samples_per_sec"
    assert V41.units_for(gptj, SV) == "Queries/s" and V41.units_for(gptj, OF) == "Samples/s"
    assert Scenario.INTERACTIVE not in V41.units and Scenario.INTERACTIVE not in V41.early_stopping_scenarios


def test_tree_layout_and_files() -> None:
    s = V41.structure
    assert s.measurement_required_files == ("mlperf.conf", "user.conf", "README.md")  # REQUIRED_MEASURE_FILES
    assert s.layout.code_root == "code" and not s.layout.compliance_in_result_dir
    assert (
        s.layout.measurements_json == "{system}_{scenario}.json"
        and s.layout.measurements_json_prefix_fallback
    )
    assert s.calibration_paths == ()  # the v4.1 checker asks for no calibration document
    assert "system_power_only" not in V41.system.power_fields
    assert V41.system.summary_int_fields == ()  # no v4.1 checker int()s a count
    assert load_round("v5.1").system.summary_int_fields == ("number_of_nodes", "accelerators_per_node")
    assert V41.acc_patterns["acc"] == r"^accuracy=([\d\.]+).*"  # ACC_PATTERN (CHK_v4.1:538)
    assert V41.accepts_loadgen("4.0") and V41.accepts_loadgen("4.1") and not V41.accepts_loadgen("5.0")
    assert V41.loadgen_runs is None


def test_every_v41_citation_names_a_v41_or_shared_source() -> None:
    assert {"CHK_v4.1", "CONF_v4.1", "RULES_v4.1", "DATA_v4.1"} <= set(V41.sources)
    assert V41.rules_source == "RULES_v4.1" and V41.mlperf_conf_source == "CONF_v4.1"


def test_a_round_in_both_the_facts_and_the_sources_is_refused(tmp_path: Path) -> None:
    facts = {"meta": {"sources": {}, "round_source_selection": {}}, "rounds": {"v4.1": {}}}
    path = tmp_path / "facts.yaml"
    path.write_text(yaml.safe_dump(facts), encoding="utf-8")
    with pytest.raises(ValueError, match=r"round v4\.1 is in the facts file too"):
        load_facts(path, SOURCES_DIR)
    facts["rounds"] = {}
    path.write_text(yaml.safe_dump(facts), encoding="utf-8")
    merged = load_facts(path, SOURCES_DIR)
    assert "v4.1" in merged["rounds"] and "CHK_v4.1" in merged["meta"]["sources"]
    assert merged["meta"]["round_files"] == {"v4.1": "rules/sources/v4.1.yaml"}
