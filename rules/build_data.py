"""Generate ``rules/data/<round>.yaml`` from the shared facts file (maintainer script).

Usage (from the repository root)::

    python -m rules.build_data [FACTS_YAML] [--out rules/data] [--check]

FACTS_YAML defaults to ``../shared/reference/mlperf-facts.yaml`` relative to the repository. The
facts file holds the per-benchmark numbers of each round (checker MODEL_CONFIG, mlperf.conf, rules
text) with their citations; a round it lacks is read from ``rules/sources/<round>.yaml``, a file of
the same format (v4.1). What the facts lack — the official checker's module-level constants (file
lists, system-description fields, ACC_PATTERN, units, result keys, SDXL image ids) — is written
below as data, each group with its citation. ``--check`` regenerates into memory and exits 1 when
a committed file differs.

The generated files are committed; CI does not run this script (a test does, when shared/ is
present, and asserts equality with the committed files).
"""

from __future__ import annotations

import argparse
import ast
import operator
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from rules.models import Round

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FACTS = REPO_ROOT.parent / "shared" / "reference" / "mlperf-facts.yaml"
DATA_DIR = Path(__file__).resolve().parent / "data"
SOURCES_DIR = Path(__file__).resolve().parent / "sources"
ROUNDS = ("v4.1", "v5.0", "v5.1", "v6.0", "v6.1")
_SINCE_V5 = ("v5.0", "v5.1", "v6.0", "v6.1")

# Sources this script adds to the facts file's own (``meta.sources``).
EXTRA_SOURCES: dict[str, dict[str, str]] = {
    "CATALOGUE": {
        "path": "shared/reference/official-checker-catalogue.md",
        "provenance": "project reference: catalogue of every check of the v5.1.1 (OLD) and HEAD "
        "official checkers, with their line numbers",
    },
    "PARAMS": {
        "path": "shared/reference/official-checker-v5.1-parameters.md",
        "provenance": "project reference: MODEL_CONFIG and constants of the v5.1.1-tag checker "
        "for --version v5.1 (generated from the checker source)",
    },
    "CHK_CONST": {
        "path": "mlcommons/inference/tools/submission/submission_checker/constants.py",
        "provenance": "module constants of the modular checker (version keys v5.0-v6.0), read "
        "from a stored copy; cited by symbol (SOURCE#SYMBOL) since its line numbers differ from "
        "CHK_HEAD",
    },
    "DATA_v5.1": {
        "path": "shared/data/mlperf-inference-v5.1",
        "provenance": "subset of mlcommons/inference_results_v5.1 (loadgen_version values of "
        "the published detail logs: 5.0.21-5.0.25 and 5.1.0)",
    },
    "LOADGEN_NOTES": {
        "path": "shared/reference/loadgen-notes.md",
        "provenance": "project reference: LoadGen and reference-implementation notes (TEST06 "
        "run_verification.py: CLI defaults -e 2 / -d int32 and its checks; output dtype of each "
        "reference SUT, with their file:line)",
    },
    "LLAMA31_GENCFG": {
        "path": "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/generation_config.json",
        "provenance": "generation_config.json of the Llama-3.1 instruct models (8B, 405B): eos_token_id "
        "[128001, 128008, 128009] (<|end_of_text|>, <|eom_id|>, <|eot_id|>); vLLM, which the "
        "llama3.1-8b reference SUT_VLLM.py uses without its own stop ids, stops on all of them",
    },
    "CHK_HEAD_results": {
        "path": "mlcommons/inference/tools/submission/submission_checker/results.py",
        "provenance": "the HEAD checker's summary writer at inference HEAD b66003e1 (ResultExporter.add_result: "
        "total_accelerators = int(number_of_nodes) * int(accelerators_per_node), lines 104-105); its MODEL_CONFIG "
        "has version keys v5.0-v6.1, so it never checks a v4.1 tree",
    },
    "AUDIT_TEST07": {
        "path": "mlcommons/inference/compliance/TEST07/gpt-oss-120b/audit.config",
        "provenance": "TEST07 audit.config at inference HEAD b66003e1 (accuracy_log_sampling_target 990, "
        "min_query_count 990, test07_accuracy_threshold 60.698), read from a stored copy",
    },
    "AUDIT_TEST09": {
        "path": "mlcommons/inference/compliance/TEST09/<benchmark>/audit.config",
        "provenance": "TEST09 audit.config files at inference HEAD b66003e1: gpt-oss-120b (min_query_count 6396, "
        "test09_min/max_output_tokens 1150.38/1406.02) and e2e-rag-qna (824, 246.43/301.19)",
    },
    "LOADGEN_SEEDS": {
        "path": "https://pypi.org/project/mlcommons-loadgen/#history",
        "provenance": "measured 2026-12-01 for every release on PyPI (5.0.0-5.0.25, 5.1.0-5.1.2, 6.0.3-6.0.17): "
        "a tiny Offline run of each, effective_qsl/sample_index/schedule_rng_seed of its mlperf_log_detail.txt, "
        "and the TestSettings attributes it binds; v5.0 seeds in 5.0.9-5.0.21, v5.1 in 5.0.22-5.1.2 (and 6.0.3-"
        "6.0.4), v6.0 in 6.0.5-6.0.15, v6.1 in 6.0.16-6.0.17",
    },
    "REF_Q3VL_TASK": {
        "path": "mlcommons/inference/multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/task.py",
        "provenance": "the qwen3-vl reference SUT at inference HEAD b66003e1, read from a stored copy: the response "
        "handed to QuerySamplesComplete is the chat completion's content encoded as UTF-8, with n_tokens = "
        "usage.completion_tokens (lines 329-344 non-streaming, 428-458 streaming: the first chunk's UTF-8 to "
        "FirstTokenComplete)",
    },
    "REF_Q3VL_EVAL": {
        "path": "mlcommons/inference/multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/evaluation.py",
        "provenance": "the qwen3-vl accuracy script at inference HEAD b66003e1, read from a stored copy: each "
        "accuracy-log entry is read as bytes.fromhex(data).decode('utf-8') and validated as the answer's JSON "
        "(lines 214-220)",
    },
    "PYPI_LOADGEN": {
        "path": "https://pypi.org/project/mlcommons-loadgen/",
        "provenance": "release list queried with `pip index versions mlcommons-loadgen` on "
        "2026-11-30: 6.0.3-6.0.17, 5.1.0-5.1.2, 5.0.0-5.0.25, 4.1.x (no 6.1.x yet); 6.0.17 is "
        "installed for this project",
    },
}

_CITE_PART = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*(:[0-9][0-9,\- ]*|#[A-Za-z0-9_][A-Za-z0-9_.\-]*)$")


def check_cite(cite: str) -> str:
    """Validate ``SOURCE_ID:line[-line][,line]`` (``;``-separated) or ``SOURCE_ID#SYMBOL``."""
    for part in cite.split(";"):
        if not _CITE_PART.match(part.strip()):
            raise ValueError(f"malformed citation {cite!r}")
    return cite


# --------------------------------------------------------------------------------------------
# Checker constants the facts file lacks, per checker family ("v4" = CHK_v4.1, "v5" = CHK_v5.1.1, "head").
# --------------------------------------------------------------------------------------------

SYSTEM_REQUIRED_FIELDS = (
    "division", "submitter", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "host_storage_capacity", "host_storage_type",
    "accelerators_per_node", "accelerator_model_name", "accelerator_memory_capacity",
    "framework", "operating_system", "system_type", "other_software_stack",
    "host_processor_frequency", "host_processor_caches", "host_memory_configuration",
    "host_processor_interconnect", "host_networking", "host_networking_topology",
    "accelerator_frequency", "accelerator_host_interconnect", "accelerator_interconnect",
    "accelerator_interconnect_topology", "accelerator_memory_configuration",
    "accelerator_on-chip_memories", "cooling", "hw_notes", "sw_notes",
    "host_network_card_count", "system_type_detail",
)  # fmt: skip
SYSTEM_MEANINGFUL_FIELDS = (
    "division", "submitter", "system_type", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "host_memory_configuration", "host_storage_capacity",
    "host_storage_type", "host_networking", "host_network_card_count",
    "host_networking_topology", "accelerators_per_node", "accelerator_model_name",
    "accelerator_memory_capacity", "accelerator_host_interconnect",
    "accelerator_memory_configuration", "accelerator_interconnect", "cooling", "framework",
    "operating_system", "other_software_stack",
)  # fmt: skip
SYSTEM_NETWORK_FIELDS = (
    "is_network", "network_type", "network_media", "network_rate", "nic_loadgen",
    "number_nic_loadgen", "net_software_stack_loadgen", "network_protocol",
    "number_connections", "nic_sut", "number_nic_sut", "net_software_stack_sut",
    "network_topology",
)  # fmt: skip
SYSTEM_POWER_FIELDS = (
    "power_management", "filesystem", "boot_firmware_version", "management_firmware_version",
    "other_hardware", "number_of_type_nics_installed", "nics_enabled_firmware",
    "nics_enabled_os", "nics_enabled_connected", "network_speed_mbit",
    "power_supply_quantity_and_rating_watts", "power_supply_details", "disk_drives",
    "disk_controllers", "system_power_only",
)  # fmt: skip
# v4.1: SYSTEM_DESC_REQUIRED_FIELDS_POWER has no system_power_only (CHK_v4.1:624-639)
SYSTEM_POWER_FIELDS_V4 = tuple(f for f in SYSTEM_POWER_FIELDS if f != "system_power_only")
MEASUREMENT_JSON_FIELDS = (
    "input_data_types", "retraining", "starting_weights_filename", "weight_data_types",
    "weight_transformations",
)  # fmt: skip

ACC_PATTERNS_V5 = {
    "acc": r"^(?:\{\"accuracy|accuracy)[\": ]*=?\s*([\d\.]+).*",
    "meanAcc": r".*'mean-accuracy':\s+'?([\d.]+)'?.*",
    "AUC": r"^AUC=([\d\.]+).*",
    "mAP": r".*(?:mAP=|'Total':)\s*([\d.]+)",
    "bleu": r"^BLEU\:\s*([\d\.]+).*",
    "F1": r"^{[\"\']exact_match[\"\']\:\s*[\d\.]+,\s*[\"\']f1[\"\']\:\s*([\d\.]+)}",
    "ACCURACY": r"Word Error Rate\:.*, accuracy=([0-9\.]+)%",
    "DICE": r"Accuracy\:\s*mean\s*=\s*([\d\.]+).*",
    "ROUGE1": r".*'rouge1':\s+'?([\d.]+)'?.*",
    "ROUGE2": r".*'rouge2':\s+'?([\d.]+)'?.*",
    "ROUGEL": r".*'rougeL':\s+'?([\d.]+)'?.*",
    "ROUGELSUM": r".*'rougeLsum':\s+'?([\d.]+)'?.*",
    "GEN_LEN": r".*'gen_len':\s([\d.]+).*",
    "TOKENS_PER_SAMPLE": r".*'tokens_per_sample':\s([\d.]+).*",
    "CLIP_SCORE": r".*'CLIP_SCORE':\s+'?([\d.]+).*",
    "FID_SCORE": r".*'FID_SCORE':\s+'?([\d.]+).*",
    "gsm8k_accuracy": r".*'gsm8k':\s([\d.]+).*",
    "mbxp_accuracy": r".*'mbxp':\s([\d.]+).*",
    "exact_match": r".*'exact_match':\s([\d.]+).*",
}
# ACC_PATTERN of the v4.1 checker (CHK_v4.1:537-555): "acc" and "mAP" anchored at the line start, no quoted
# ROUGE/CLIP/FID values, rnnt's WER.
ACC_PATTERNS_V4 = {
    "acc": r"^accuracy=([\d\.]+).*",
    "AUC": r"^AUC=([\d\.]+).*",
    "mAP": r"^mAP=([\d\.]+).*",
    "bleu": r"^BLEU\:\s*([\d\.]+).*",
    "F1": ACC_PATTERNS_V5["F1"],
    "WER": r"Word Error Rate\:.*, accuracy=([0-9\.]+)%",
    "DICE": ACC_PATTERNS_V5["DICE"],
    "ROUGE1": r".*'rouge1':\s([\d.]+).*",
    "ROUGE2": r".*'rouge2':\s([\d.]+).*",
    "ROUGEL": r".*'rougeL':\s([\d.]+).*",
    "ROUGELSUM": r".*'rougeLsum':\s([\d.]+).*",
    "GEN_LEN": ACC_PATTERNS_V5["GEN_LEN"],
    "TOKENS_PER_SAMPLE": ACC_PATTERNS_V5["TOKENS_PER_SAMPLE"],
    "CLIP_SCORE": r".*'CLIP_SCORE':\s([\d.]+).*",
    "FID_SCORE": r".*'FID_SCORE':\s([\d.]+).*",
    "gsm8k_accuracy": ACC_PATTERNS_V5["gsm8k_accuracy"],
    "mbxp_accuracy": ACC_PATTERNS_V5["mbxp_accuracy"],
}
ACC_PATTERNS_HEAD = {
    **ACC_PATTERNS_V5,
    "DLRM_NE": r".*metric/lifetime_ne/rating:\s*([\d\.]+).*",
    "DLRM_ACC": r".*metric/lifetime_accuracy/rating:\s*([\d\.]+).*",
    "DLRM_AUC": r".*metric/lifetime_gauc/rating:\s*([\d\.]+).*",
    "vbench_score": r".*'vbench_score':\s([\d.]+).*",
    "F1_HIERARCHICAL": r"\{.*\"f1\":\s*([\d\.]+).*\}",
}

RESULT_FIELDS = {
    "Offline": "result_samples_per_second",
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
    "Server": "result_completed_samples_per_sec",
    # Interactive runs are LoadGen Server runs; the checker reads the key of the effective scenario.
    "Interactive": "result_completed_samples_per_sec",
}
UNITS = {
    "SingleStream": "Latency (ms)",
    "MultiStream": "Latency (ms)",
    "Offline": "Samples/s",
    "Server": "Queries/s",
    "Interactive": "Queries/s",
}
POWER_UNITS = {
    "SingleStream": "millijoules",
    "MultiStream": "millijoules",
    "Offline": "Watts",
    "Server": "Watts",
    "Interactive": "Watts",
}

_TOKENS = {"Offline": "result_tokens_per_second", "Server": "result_completed_tokens_per_second"}
_INFERRED_TOKENS = {
    "Offline": "result_inferred_tokens_per_second",
    "Server": "result_inferred_completed_tokens_per_second",
}
# RESULT_FIELD_BENCHMARK_OVERWRITE per checker version key (Interactive added = Server's key).
RESULT_OVERRIDES: dict[str, dict[str, dict[str, str]]] = {
    "v4.1": {
        "llama2-70b-99": _TOKENS,
        "llama2-70b-99.9": _TOKENS,
        "gptj-99": _INFERRED_TOKENS,
        "gptj-99.9": _INFERRED_TOKENS,
        "mixtral-8x7b": _TOKENS,
    },
    "v5.0": {
        "llama2-70b-99": _TOKENS,
        "llama2-70b-99.9": _TOKENS,
        "llama2-70b-interactive-99": _TOKENS,
        "llama2-70b-interactive-99.9": _TOKENS,
        "gptj-99": _INFERRED_TOKENS,
        "gptj-99.9": _INFERRED_TOKENS,
        "mixtral-8x7b": _TOKENS,
        "llama3.1-405b": _TOKENS,
    },
    "v5.1": {
        "llama2-70b-99": _TOKENS,
        "llama2-70b-99.9": _TOKENS,
        "llama3.1-8b": _TOKENS,
        "llama3.1-8b-edge": {
            "Offline": "result_tokens_per_second",
            "SingleStream": "result_90.00_percentile_latency_ns",
        },
        "mixtral-8x7b": _TOKENS,
        "llama3.1-405b": _TOKENS,
        "deepseek-r1": _TOKENS,
        "whisper": {"Offline": "result_tokens_per_second"},
    },
}
RESULT_OVERRIDES["v6.0"] = {**RESULT_OVERRIDES["v5.1"], "gpt-oss-120b": _TOKENS}
RESULT_OVERRIDES["v6.1"] = RESULT_OVERRIDES["v6.0"]

_TOK3 = {"Offline": "Tokens/s", "Server": "Tokens/s", "Interactive": "Tokens/s"}
# special_unit_dict of the v5.1.1 checker (the v5.x rounds).
UNIT_OVERRIDES: dict[str, dict[str, str]] = {
    "llama3.1-8b": {"Offline": "Tokens/s", "Server": "Tokens/s"},  # no Interactive: Queries/s
    "llama3.1-8b-edge": {"Offline": "Tokens/s"},
    "llama2-70b-99": _TOK3,
    "llama2-70b-99.9": _TOK3,
    "mixtral-8x7b": _TOK3,
    "llama3.1-405b": _TOK3,
    "deepseek-r1": _TOK3,
}
# SPECIAL_UNIT_DICT of the HEAD checker (CHK_HEAD:1952-1998), not keyed by version: the v6.x rounds. The HEAD
# checker's results.py looks it up by MlperfModel and the directory scenario (lower-case keys there are the
# same units as the canonical ones).
UNIT_OVERRIDES_HEAD: dict[str, dict[str, str]] = {
    "llama3.1-8b": _TOK3,
    "llama3.1-8b-edge": {"Offline": "Tokens/s"},
    "llama2-70b-99": _TOK3,
    "llama2-70b-99.9": _TOK3,
    "mixtral-8x7b": _TOK3,
    "llama3.1-405b": _TOK3,
    "deepseek-r1": _TOK3,
    "wan-2.2-t2v-a14b": {"SingleStream": "Latency (s)"},
    "gpt-oss-120b": _TOK3,
    "e2e-rag-qna": {"Offline": "Tasks/s"},
}
UNIT_OVERRIDES_CITE = {
    "v5": "CHK_CONST#SPECIAL_UNIT_DICT; CATALOGUE:217",
    "head": "CHK_HEAD:1952-1998; CATALOGUE:217",
}

SDXL_IMAGES: dict[str, tuple[str, ...]] = {
    "v4.1": ("4655", "2569", "1303", "109", "4509", "3009", "2179", "1826", "2094", "3340"),
    "v5.0": ("4459", "4015", "2705", "1682", "4048", "4683", "3757", "1578", "3319", "95"),
    "v5.1": ("2747", "2235", "2165", "1515", "1538", "1367", "2419", "4629", "3657", "4532"),
    "v6.0": ("1311", "2476", "3644", "2188", "4114", "52", "388", "1195", "3427", "2289"),
}

MODEL_MAPPING_V5 = {
    "ssd-resnet34": "retinanet",
    "mobilenet": "resnet",
    "resnet50": "resnet",
    "llama3_1-405b": "llama3.1-405b",
    "llama3_1-8b": "llama3.1-8b",
    "llama3_1-8b-edge": "llama3.1-8b-edge",
}
ALIAS_SUBSTRINGS = (
    ("mobilenet", "resnet"),
    ("efficientnet", "resnet"),
    ("resnet50", "resnet"),
    ("bert-99.9", "bert-99.9"),
    ("bert-99", "bert-99"),
)

# Checker's requested_use_token_latencies list (extra_check_llm / llm_check).
# TEST06 (compliance/TEST06/run_verification.py) per benchmark: EOS ids and the output-id dtype of the reference
# SUT. Benchmarks not listed keep the script's defaults (EOS 2, int32): right for llama2-70b (Llama-2 </s> = 2);
# mixtral-8x7b and deepseek-r1 are not listed because no stored source gives their EOS id.
_LLAMA31_TEST06 = (
    (128001, 128008, 128009),
    "int32",
    "LLAMA31_GENCFG#eos_token_id; LOADGEN_NOTES:168,197-206",
)
TEST06_TOKENS: dict[str, tuple[tuple[int, ...], str, str]] = {
    "llama2-70b-99": ((2,), "int32", "LOADGEN_NOTES:197-206"),
    "llama2-70b-99.9": ((2,), "int32", "LOADGEN_NOTES:197-206"),
    "llama2-70b-interactive-99": ((2,), "int32", "LOADGEN_NOTES:197-206"),
    "llama2-70b-interactive-99.9": ((2,), "int32", "LOADGEN_NOTES:197-206"),
    "llama3.1-8b": _LLAMA31_TEST06,
    "llama3.1-8b-edge": _LLAMA31_TEST06,
    "llama3.1-405b": _LLAMA31_TEST06,
}

TOKEN_LATENCY_MODELS: dict[str, tuple[str, ...]] = {
    "v4": ("llama2-70b-99", "llama2-70b-99.9", "mixtral-8x7b"),  # extra_check_llm (CHK_v4.1:1043-1058,1111-1112)
    "v5": (
        "llama2-70b-99", "llama2-70b-99.9", "llama2-70b-interactive-99",
        "llama2-70b-interactive-99.9", "mixtral-8x7b", "llama3.1-405b", "llama3.1-8b",
        "llama3.1-8b-edge", "deepseek-r1",
    ),
}  # fmt: skip
TOKEN_LATENCY_MODELS["head"] = (*TOKEN_LATENCY_MODELS["v5"], "gpt-oss-120b")

# Model key LoadGen looks up in mlperf.conf (FromConfig(..., model, scenario)).
MLPERF_CONF_MODEL = {
    "resnet": "resnet50",
    "retinanet": "retinanet",
    "bert-99": "bert",
    "bert-99.9": "bert",
    "dlrm-v2-99": "dlrm-v2",
    "dlrm-v2-99.9": "dlrm-v2",
    "3d-unet-99": "3d-unet",
    "3d-unet-99.9": "3d-unet",
    "stable-diffusion-xl": "stable-diffusion-xl",
    "gptj-99": "gptj",
    "gptj-99.9": "gptj",
    "llama2-70b-99": "llama2-70b",
    "llama2-70b-99.9": "llama2-70b",
    "llama2-70b-interactive-99": "llama2-70b-interactive",
    "llama2-70b-interactive-99.9": "llama2-70b-interactive",
    "mixtral-8x7b": "mixtral-8x7b",
    "llama3.1-405b": "llama3_1-405b",
    "llama3.1-8b": "llama3_1-8b",
    "llama3.1-8b-edge": "llama3_1-8b-edge",
    "deepseek-r1": "deepseek-r1",
    "gpt-oss-120b": "gpt-oss-120b",
    "qwen3-vl-235b-a22b": "qwen3-vl-235b-a22b",
    "wan-2.2-t2v-a14b": "wan-2.2-t2v-a14b",
    "rgat": "rgat",
    "pointpainting": "pointpainting",
    "whisper": "whisper",
    "yolo-95": "yolo",
    "yolo-99": "yolo",
}

# Discrepancy ids (facts file `discrepancies`) -> benchmarks and rounds they concern.
# Benchmark "*" = a round-level note.
DISCREPANCY_SCOPE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "D-01": (("gpt-oss-120b",), ("v6.0", "v6.1")),
    "D-02": (("deepseek-r1",), ("v5.1", "v6.0", "v6.1")),
    "D-03": (("3d-unet-99", "3d-unet-99.9"), ("v6.0", "v6.1")),
    "D-04": (("llama3.1-8b",), _SINCE_V5),
    "D-05": (("llama3.1-8b-edge",), _SINCE_V5),
    "D-06": (("mixtral-8x7b",), _SINCE_V5),
    "D-07": (("llama2-70b-99", "llama2-70b-99.9", "llama3.1-8b"), ROUNDS),
    "D-08": (("dlrm-v3",), ("v6.0", "v6.1")),
    "D-09": (("wan-2.2-t2v-a14b",), ("v6.0", "v6.1")),
    "D-10": (("qwen3-vl-235b-a22b",), ("v6.1",)),
    "D-11": (("deepseek-r1",), ("v6.0", "v6.1")),
    "D-12": (("llama2-70b-99.9",), ("v6.1",)),
    "D-13": (("whisper",), _SINCE_V5),
    "D-14": (("deepseek-r1",), ("v5.1",)),
    "D-15": (("*",), _SINCE_V5),
    "D-16": (("*",), _SINCE_V5),
    "D-17": (("*",), ROUNDS),
    "D-18": (("gptj-99", "gptj-99.9", "llama3.1-405b"), ("v5.0",)),
    "D-19": (("*",), ("v6.0", "v6.1")),
    "D-20": (("llama3.1-8b-edge",), _SINCE_V5),
    "D-21": (("qwen3.6-27b",), ("v6.1",)),
    "D-22": (("*",), _SINCE_V5),
    "D-23": (("*",), ("v6.0", "v6.1")),
    "D-24": (("*",), _SINCE_V5),
    "D-25": (("*",), ("v6.1",)),
    "D-26": (("mixtral-8x7b",), _SINCE_V5),
}

# Where a discrepancy's auditor impact names the value to use and the facts' own field holds the
# rules-text value: (round, benchmark) -> field -> (value, cite, discrepancy id).
ENFORCED_OVERRIDES: dict[tuple[str, str], dict[str, tuple[int, str, str]]] = {
    ("v5.1", "deepseek-r1"): {"max_new_tokens": (20000, "REF_DSR1_v5.1.1:8", "D-14")},
}

# The tree layout of each round family, as the official checkers' path constants spell it (one home: the packager
# and every structure/measurement/compliance check read Round.structure.layout).
_RESULT = "{division}/{submitter}/results/{system}/{benchmark}/{scenario}"
_TEST06_FILES = {
    "TEST06": (
        "verify_accuracy.txt",
        "accuracy/mlperf_log_accuracy.json",
        "performance/run_1/mlperf_log_summary.txt",
        "performance/run_1/mlperf_log_detail.txt",
    )
}
# v6.x: TEST07 and TEST09 (gpt-oss-120b, e2e-rag-qna) as run_verification.py writes them; the HEAD checker requires
# verify_accuracy.txt (TEST07) and verify_output_len.txt (TEST09) (CHK_HEAD_compliance dir_exists_check), the READMEs
# list the accuracy log and the performance logs as part of the audit trail (compliance/TEST07/README.md "Part IV")
_PERF_MODE_AUDIT_LOGS = (
    "accuracy/mlperf_log_accuracy.json",
    "performance/run_1/mlperf_log_summary.txt",
    "performance/run_1/mlperf_log_detail.txt",
)
_V6_COMPLIANCE_FILES = {
    **_TEST06_FILES,
    "TEST07": ("verify_accuracy.txt", *_PERF_MODE_AUDIT_LOGS),
    "TEST09": ("verify_output_len.txt", *_PERF_MODE_AUDIT_LOGS),
}
_LAYOUT_V5: dict[str, Any] = {
    "result_dir": _RESULT,
    "measurements_dir": "{division}/{submitter}/measurements/{system}/{benchmark}/{scenario}",
    "measurements_json": "{system}_{scenario}.json",
    "measurements_json_prefix_fallback": True,
    "measurement_optional_files": ["mlperf.conf"],
    "compliance_dir": "{division}/{submitter}/compliance/{system}/{benchmark}/{scenario}",
    "system_file": "{division}/{submitter}/systems/{system}.json",
    "code_dir": "{division}/{submitter}/code/{benchmark}",
    "calibration_file": "{division}/{submitter}/documentation/calibration.md",
    "compliance_files": _TEST06_FILES,
    "result_dir_document_suffixes": [],
}
LAYOUTS: dict[str, dict[str, Any]] = {
    # v4.1: the v5 tree, with mlperf.conf required in the measurement directory (REQUIRED_MEASURE_FILES)
    "v4": {
        **_LAYOUT_V5,
        "measurement_optional_files": [],
        "cite": check_cite("CHK_v4.1:415,1823-1826,1954-1961,2177-2184,2430-2442"),
    },
    "v5": {
        **_LAYOUT_V5,
        "cite": check_cite("CHK_v5.1.1:2572-2580,2797-2800,2985-3052; CATALOGUE:73,118"),
    },
    "v6": {
        "result_dir": _RESULT,
        "measurements_dir": _RESULT,
        "measurements_json": "measurements.json",
        "measurements_json_prefix_fallback": False,
        "measurement_optional_files": ["mlperf.conf"],
        "compliance_dir": _RESULT,
        "system_file": "{division}/{submitter}/systems/{system}.json",
        "code_dir": "{division}/{submitter}/src/{benchmark}",
        "calibration_file": "{division}/{submitter}/documentation/calibration.md",
        "compliance_files": _V6_COMPLIANCE_FILES,
        "result_dir_document_suffixes": [".md", ".adoc", ".pdf", ".txt"],
        "cite": check_cite(
            "CHK_CONST#MEASUREMENTS_PATH; CHK_CONST#COMPLIANCE_PATH; CHK_CONST#SRC_PATH; "
            "CHK_CONST#REQUIRED_MEASURE_FILES; CATALOGUE:73,118"
        ),
    },
}

# TEST07 / TEST09 thresholds and sample counts the reference audit.config files set (v6.x), per benchmark.
COMPLIANCE_THRESHOLDS: dict[str, dict[str, tuple[Any, str]]] = {
    "gpt-oss-120b": {
        "test07_accuracy_threshold": (60.698, "AUDIT_TEST07:37"),
        "test07_score_pattern": ("'exact_match':\\s*([\\d.]+)", "AUDIT_TEST07:37"),
        "test07_sample_count": (990, "AUDIT_TEST07:16-19"),
        "test09_min_output_tokens": (1150.38, "AUDIT_TEST09:40"),
        "test09_max_output_tokens": (1406.02, "AUDIT_TEST09:42"),
        "test09_sample_count": (6396, "AUDIT_TEST09:20"),
    },
    "e2e-rag-qna": {
        "test09_min_output_tokens": (246.43, "AUDIT_TEST09:38"),
        "test09_max_output_tokens": (301.19, "AUDIT_TEST09:40"),
        "test09_sample_count": (824, "AUDIT_TEST09:20"),
    },
}
# The accuracy evaluator family of each benchmark this tool scores (loadgen_sut/scoring/evaluators.py), with the
# reference script it follows. Benchmarks not listed have none here (mixtral-8x7b's GSM8K/MBXP parts, vision...).
EVALUATORS: dict[str, tuple[str, str]] = {
    "llama2-70b-99": ("rouge", "language/llama2-70b/evaluate-accuracy.py"),
    "llama2-70b-99.9": ("rouge", "language/llama2-70b/evaluate-accuracy.py"),
    "llama2-70b-interactive-99": ("rouge", "language/llama2-70b/evaluate-accuracy.py"),
    "llama2-70b-interactive-99.9": ("rouge", "language/llama2-70b/evaluate-accuracy.py"),
    "llama3.1-8b": ("rouge", "language/llama3.1-8b/evaluation.py"),
    "llama3.1-8b-edge": ("rouge", "language/llama3.1-8b/evaluation.py"),
    "llama3.1-405b": ("rouge", "language/llama3.1-405b/evaluate-accuracy.py"),
    "gptj-99": ("rouge", "language/gpt-j/evaluation.py"),
    "gptj-99.9": ("rouge", "language/gpt-j/evaluation.py"),
    "deepseek-r1": ("deepseek-r1", "language/deepseek-r1/eval_accuracy.py"),
    "gpt-oss-120b": ("gpt-oss", "language/gpt-oss-120b/eval_mlperf_accuracy.py"),
    "qwen3-vl-235b-a22b": ("qwen3-vl", "multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/evaluation.py"),
}
# What the reference SUT hands LoadGen as a sample's response (so what the accuracy log holds), where it is not the
# output token ids (Benchmark.accuracy_log_format's default, "token_ids"), with the reference lines that show it.
ACCURACY_LOG_FORMATS: dict[str, tuple[str, str]] = {
    "qwen3-vl-235b-a22b": ("utf8_text", "REF_Q3VL_TASK:329-344,428-458; REF_Q3VL_EVAL:214-220"),
}
# What the hash= line of the reference evaluator's accuracy.txt hashes, where it is not the accuracy log
# (Benchmark.accuracy_txt_hash's default), with the reference lines that show it.
ACCURACY_TXT_HASHES: dict[str, tuple[str, str]] = {
    "qwen3-vl-235b-a22b": ("results_line", "REF_Q3VL_EVAL:403-411"),
}
# benchmarks the HEAD checker accepts as MLPerf Endpoints results (ENDPOINTS_ALLOWED_MODELS)
ENDPOINTS_ALLOWED_MODELS = (
    "wan-2.2-t2v-a14b",
    "qwen3-vl-235b-a22b",
    "qwen3.6-27b",
    "llama3.1-8b",
    "llama3.1-8b-edge",
    "gpt-oss-120b",
    "deepseek-r1",
)

# Where the v4.1 checker (one file, CHK_v4.1) holds what the v5/head families cite elsewhere.
V4_CITES = {
    "model_config": "CHK_v4.1#MODEL_CONFIG",
    "equal_issue": "CHK_v4.1:805-818,2078-2086",
    "token_latencies": "CHK_v4.1:1043-1058,1111-1112",
    "result_overrides": "CHK_v4.1:492-514",
    "sdxl_images": "CHK_v4.1:399-412,2015-2022",
    "min_duration": "CHK_v4.1:424,1249-1258",
    "early_stopping": "CHK_v4.1:800-803,1175-1184",
    "result_fields": "CHK_v4.1:472-478",
    "units": "CHK_v4.1:1593-1604",
    "acc_patterns": "CHK_v4.1:537-555",
    "compliance_delta": "CHK_v4.1:784-797",
    "system": "CHK_v4.1:557-671,2250-2312",
    "structure": "CHK_v4.1:365-430,1468-1473,2344-2371",
    "aliases": "CHK_v4.1:302-307,712-741",
}
# The four LoadGen scenarios (v4.1 has no Interactive).
_LOADGEN_SCENARIOS = ("SingleStream", "MultiStream", "Offline", "Server")

# Per round: checker family, LoadGen series, layout.
ROUND_SETTINGS: dict[str, dict[str, Any]] = {
    "v4.1": {
        # no 4.x release was measured for runs (LOADGEN_SEEDS): this tool checks v4.1 trees, it does not run v4.1
        "family": "v4",
        "checker": "submission_checker.py at inference tag v4.1, --version v4.1",
        "loadgen_versions": ("4.0.", "4.1."),
        "loadgen_cite": "DATA_v4.1#loadgen_version",
        "layout": "v4",
    },
    "v5.0": {
        "loadgen_runs": {
            "releases": [
                "5.0.9",
                "5.0.10",
                "5.0.11",
                "5.0.12",
                "5.0.13",
                "5.0.14",
                "5.0.15",
                "5.0.16",
                "5.0.17",
                "5.0.18",
                "5.0.19",
                "5.0.20",
                "5.0.21",
            ],
            "install": "5.0.21",
            "notes": [],
            "cite": "LOADGEN_SEEDS#5.0.21",
        },
        "family": "v5",
        "checker": "submission_checker.py at inference tag v5.1.1, --version v5.0 "
        "(LLM TTFT/TPOT and compliance lists of tag v5.0.1)",
        "loadgen_versions": ("5.0.",),
        "loadgen_cite": "PYPI_LOADGEN#5.0",
        "layout": "v5",
    },
    "v5.1": {
        "loadgen_runs": {
            "releases": ["5.0.22", "5.0.23", "5.0.24", "5.0.25", "5.1.0", "5.1.1", "5.1.2"],
            "install": "5.1.2",
            "notes": [
                "5.0.22 and 5.1.0 have no llama3_1-8b-interactive conf model (the run's settings probe reports it)"
            ],
            "cite": "LOADGEN_SEEDS#5.1.2",
        },
        "family": "v5",
        "checker": "submission_checker.py at inference tag v5.1.1, --version v5.1",
        "loadgen_versions": ("5.0.", "5.1."),
        "loadgen_cite": "DATA_v5.1#loadgen_version; PYPI_LOADGEN#5.1",
        "layout": "v5",
    },
    "v6.0": {
        "loadgen_runs": {
            "releases": [
                "6.0.5",
                "6.0.6",
                "6.0.7",
                "6.0.8",
                "6.0.9",
                "6.0.10",
                "6.0.11",
                "6.0.12",
                "6.0.13",
                "6.0.14",
                "6.0.15",
            ],
            "install": "6.0.15",
            "notes": ["gpt-oss-120b needs 6.0.6 or later, its Interactive conf model 6.0.10 or later"],
            "cite": "LOADGEN_SEEDS#6.0.15",
        },
        "family": "head",
        "checker": "modular submission_checker (inference HEAD), --version v6.0",
        "loadgen_versions": ("6.0.",),
        "loadgen_cite": "PYPI_LOADGEN#6.0",
        "layout": "v6",
    },
    "v6.1": {
        "loadgen_runs": {
            "releases": ["6.0.16", "6.0.17"],
            "install": "6.0.17",
            "notes": ["no 6.1.x release yet; 6.0.16 and 6.0.17 carry the v6.1 seeds"],
            "cite": "LOADGEN_SEEDS#6.0.17",
        },
        "family": "head",
        "checker": "modular submission_checker (inference HEAD), --version v6.1 (draft round)",
        "loadgen_versions": ("6.0.", "6.1."),
        "loadgen_cite": "PYPI_LOADGEN#6.0",
        "layout": "v6",
    },
}

ROUND_NOTES: dict[str, tuple[str, ...]] = {
    "v4.1": (
        "Published v4.1 results were produced with LoadGen 4.0 and 4.1 (DATA_v4.1 detail logs); both series are "
        "accepted. The official checker does not check the LoadGen version.",
        "Units follow the checker's unit_dict (CHK_v4.1:1593-1604), which has no special units: the LLM results "
        "(tokens/s) are labelled Samples/s and Queries/s.",
        "No Interactive scenario in this round: units, result keys and early stopping cover the four LoadGen "
        "scenarios only.",
    ),
    "v5.0": (
        "Units for llama2-70b-interactive-* and gptj follow the checker's special_unit_dict, "
        "which has no entry for them (Queries/s, Samples/s); not verified against published "
        "v5.0 results.",
        "loadgen_versions is this project's acceptance policy (the official checker does not "
        "check the LoadGen version).",
    ),
    "v5.1": (
        "Published v5.1 results were produced with LoadGen 5.0.21-5.0.25 and 5.1.0 "
        "(DATA_v5.1 detail logs); both series are accepted. The official checker does not "
        "check the LoadGen version (beyond official).",
    ),
    "v6.0": (
        "The HEAD checker does not enforce equal-issue mode (D-22); this data keeps "
        "equal_issue_required from mlperf.conf's sample_concatenate_permutation.",
        "loadgen_versions is this project's acceptance policy (the official checker does not "
        "check the LoadGen version).",
        "SDXL extra accuracy image ids and result-key overrides from CHK_CONST (v6.0 keys).",
    ),
    "v6.1": (
        "Draft round: the checker has no v6.1 entries for RESULT_FIELD_NEW, "
        "RESULT_FIELD_BENCHMARK_OVERWRITE or REQUIRED_ACC_BENCHMARK in CHK_CONST; the v6.0 "
        "values are used (SDXL images: v6.0 ids).",
        "The HEAD checker does not enforce equal-issue mode (D-22); this data keeps "
        "equal_issue_required from mlperf.conf's sample_concatenate_permutation.",
        "loadgen_versions is this project's acceptance policy: v6.1 LoadGen releases were "
        "not yet published; 6.0.x is current.",
    ),
}


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def arith(expr: str | float | int) -> float:
    """Evaluate a checker threshold expression (``44.4312 * 0.99``) with Python float semantics."""
    if isinstance(expr, (int, float)):
        return float(expr)

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            combined: float = _BINOPS[type(node.op)](ev(node.left), ev(node.right))
            return combined
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"unsupported threshold expression {expr!r}")

    return float(ev(ast.parse(str(expr), mode="eval")))


def _seeds(seeds: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "qsl_rng_seed": int(seeds["qsl_rng_seed"]),
        "sample_index_rng_seed": int(seeds["sample_index_rng_seed"]),
        "schedule_rng_seed": int(seeds["schedule_rng_seed"]),
        "cite": _join_cites(seeds.get("cite_checker"), seeds.get("cite_mlperf_conf")),
    }


def _join_cites(*cites: str | None) -> str | None:
    parts = [c for c in cites if c]
    return check_cite("; ".join(parts)) if parts else None


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


# --------------------------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------------------------


def build_benchmark(
    round_name: str, name: str, facts: Mapping[str, Any], discrepancies: list[Mapping[str, Any]]
) -> dict[str, Any]:
    family = ROUND_SETTINGS[round_name]["family"]
    cites: dict[str, str] = {}
    notes: list[str] = []
    b: dict[str, Any] = {"name": name, "categories": list(facts["categories"])}
    if facts.get("categories_note"):
        notes.append(f"categories: {facts['categories_note']}")

    # scenarios per system type
    scenarios: dict[str, dict[str, Any]] = {}
    for systype, sc in facts["scenarios_checker"].items():
        entry: dict[str, Any] = {"required": _scenario_list(sc["required"])}
        if sc.get("optional"):
            entry["optional"] = _scenario_list(sc["optional"])
        if sc.get("one_of"):
            entry["one_of"] = _scenario_list(sc["one_of"])
        entry["cite"] = _join_cites(sc.get("cite"), sc.get("cite_optional"))
        scenarios[systype] = entry
    b["scenarios"] = scenarios

    # sample counts
    counts = facts["sample_counts"]
    for key in ("performance_sample_count", "dataset_size", "offline_min_samples_per_query"):
        if key in counts:
            b[key] = int(counts[key]["value"])
            cites[key] = check_cite(counts[key]["cite"])
    if "accuracy_sample_count" in counts:
        asc = counts["accuracy_sample_count"]
        if isinstance(asc["value"], dict):
            b["accuracy_sample_count_by_scenario"] = {k: int(v) for k, v in asc["value"].items()}
        else:
            b["accuracy_sample_count"] = int(asc["value"])
        cites["accuracy_sample_count"] = check_cite(asc["cite"])
    mqc = facts["min_query_count_checker"]
    b["min_query_count"] = {k: int(v) for k, v in mqc["value"].items()}
    cites["min_query_count"] = check_cite(mqc["cite"])
    md = facts["min_duration_ms"]
    if md.get("value") is None:
        b["min_duration_exempt"] = True
        cites["min_duration_exempt"] = check_cite(md["cite"])
        notes.append(f"min duration: {md.get('note', 'exempt')}")

    # latency
    lat = facts.get("latency", {})
    lc = lat.get("checker_latency_constraint_ns")
    if lc:
        if "Server" in lc["value"]:
            b["server_target_latency_ns"] = int(lc["value"]["Server"])
        if "Interactive" in lc["value"]:
            b["interactive_target_latency_ns"] = int(lc["value"]["Interactive"])
        cites["server_target_latency_ns"] = check_cite(lc["cite"])
    tt = lat.get("checker_ttft_tpot_p99")
    if tt:
        limits: dict[str, dict[str, Any]] = {}
        if "applies_to" in tt:  # v5.0: model-keyed, applies to the only non-Offline scenario
            limits["Server"] = {
                "ttft_ms": float(tt["ttft_ms"]),
                "tpot_ms": float(tt["tpot_ms"]),
                "cite": check_cite(tt["cite"]),
            }
            notes.append(f"TTFT/TPOT limits apply to {tt['applies_to']}")
        for scen in ("Server", "Interactive"):
            if scen in tt:
                limits[scen] = {
                    "ttft_ms": float(tt[scen]["ttft_ms"]),
                    "tpot_ms": float(tt[scen]["tpot_ms"]),
                    "cite": check_cite(tt[scen]["cite"]),
                }
        b["token_latency_limits"] = limits
    conf_lat = lat.get("mlperf_conf", {})
    if conf_lat:
        b["mlperf_conf_target_latency_ms"] = {
            scen: float(v["target_latency_ms"]) for scen, v in conf_lat.items()
        }
        cites["mlperf_conf_target_latency_ms"] = _join_cites(*(v["cite"] for v in conf_lat.values())) or ""
        for scen, v in conf_lat.items():
            key = str(v["conf_key"]).split(".")[0]
            if scen == "Interactive":
                b["mlperf_conf_interactive_model"] = key
            elif scen == "Server":
                b["mlperf_conf_model"] = key
    if "mlperf_conf_model" not in b and name in MLPERF_CONF_MODEL:
        b["mlperf_conf_model"] = MLPERF_CONF_MODEL[name]
    if "mlperf_conf_model" in b:
        psc = counts.get("mlperf_conf_performance_sample_count_override")
        default_cite = V4_CITES["model_config"] if family == "v4" else "CHK_CONST#MODEL_CONFIG"
        cites["mlperf_conf_model"] = check_cite(psc["cite"]) if psc else default_cite

    # accuracy
    acc = facts["accuracy"]
    if "targets" in acc:
        b["accuracy_targets"] = [_target(t) for t in acc["targets"]]
    if "targets_by_scenario" in acc:
        b["accuracy_targets_by_scenario"] = {
            scen: [_target(t) for t in ts] for scen, ts in acc["targets_by_scenario"].items()
        }
        if "accuracy_targets" not in b:
            b["accuracy_targets"] = [_target(t) for t in acc["targets_by_scenario"]["Offline"]]
    if acc.get("upper_limits"):
        b["accuracy_upper_limits"] = [_target(t) for t in acc["upper_limits"]]
    b["accuracy_cite"] = check_cite(acc["comparison_cite"])
    for t in [*acc.get("targets", []), *acc.get("upper_limits", [])]:
        if t.get("note"):
            notes.append(f"accuracy {t['metric']}: {t['note']}")
            break
    if "test01_delta_perc_override" in acc:
        ov = acc["test01_delta_perc_override"]
        b["compliance_delta_pct_overrides"] = {k: float(v) for k, v in ov["value"].items()}
        cites["compliance_delta_pct_overrides"] = check_cite(ov["cite"])

    # flags
    flags = {k: int(v["value"]) for k, v in facts.get("mlperf_conf_flags", {}).items()}
    if flags:
        b["mlperf_conf_flags"] = flags
        cites["mlperf_conf_flags"] = (
            _join_cites(*(v["cite"] for v in facts["mlperf_conf_flags"].values())) or ""
        )
    b["equal_issue_required"] = flags.get("sample_concatenate_permutation") == 1
    if b["equal_issue_required"]:
        scp = facts["mlperf_conf_flags"]["sample_concatenate_permutation"]["cite"]
        chk = {"v4": V4_CITES["equal_issue"], "v5": "CATALOGUE:83; CHK_v5.1.1:1161-1179,1597-1605"}.get(
            family, "CATALOGUE:83"
        )
        cites["equal_issue_required"] = check_cite(f"{scp}; {chk}")
    b["use_token_latencies_required"] = name in TOKEN_LATENCY_MODELS[family]
    if b["use_token_latencies_required"]:
        cites["use_token_latencies_required"] = (
            V4_CITES["token_latencies"] if family == "v4" else "CATALOGUE:93"
        )
    b["is_llm"] = bool(facts.get("decoding_rules")) or b["use_token_latencies_required"]

    # compliance
    comp = facts["compliance_tests"]
    b["compliance_tests"] = list(comp["tests"])
    if _CITE_PART.match(str(comp["cite"]).split(";")[0].strip()):
        b["compliance_cite"] = check_cite(comp["cite"])
    else:
        b["compliance_cite"] = "CHK_HEAD#models_TEST01"
        notes.append(f"compliance: {comp['cite']}")

    if "TEST06" in b["compliance_tests"] and name in TEST06_TOKENS:
        eos_ids, token_dtype, t06_cite = TEST06_TOKENS[name]
        b["test06_eos_token_ids"] = list(eos_ids)
        b["test06_token_dtype"] = token_dtype
        cites["test06_eos_token_ids"] = check_cite(t06_cite)

    if family == "head":
        for field, (value, cite) in COMPLIANCE_THRESHOLDS.get(name, {}).items():
            b[field] = value
            cites[field] = check_cite(cite)

    if name in EVALUATORS:
        b["evaluator"] = EVALUATORS[name][0]
    if name in ACCURACY_LOG_FORMATS:
        b["accuracy_log_format"], log_cite = ACCURACY_LOG_FORMATS[name]
        cites["accuracy_log_format"] = check_cite(log_cite)
    if name in ACCURACY_TXT_HASHES:
        b["accuracy_txt_hash"], hash_cite = ACCURACY_TXT_HASHES[name]
        cites["accuracy_txt_hash"] = check_cite(hash_cite)

    # result keys and units
    overrides = RESULT_OVERRIDES[round_name].get(name)
    if overrides:
        ro = dict(overrides)
        if "Server" in ro and _has_scenario(scenarios, "Interactive"):
            ro["Interactive"] = ro["Server"]
        b["result_field_overrides"] = ro
        cites["result_field_overrides"] = (
            "PARAMS:3-24; CATALOGUE:86"
            if round_name == "v5.1"
            else V4_CITES["result_overrides"]
            if family == "v4"
            else "CHK_CONST#RESULT_FIELD_BENCHMARK_OVERWRITE; CATALOGUE:86"
            if family == "v5"
            else "CHK_HEAD:1592-1734; CATALOGUE:86"
        )
    # v4: the checker's unit_dict has no special units
    units = {"v5": UNIT_OVERRIDES, "head": UNIT_OVERRIDES_HEAD}.get(family, {}).get(name)
    if units:
        b["units_overrides"] = {s: u for s, u in units.items() if _has_scenario(scenarios, s)}
        cites["units_overrides"] = UNIT_OVERRIDES_CITE[family]

    # generation
    params = list(facts.get("inference_parameters_rules", []))
    mx, mx_cite = _int_param(params, "max_new_tokens")
    if mx is None:
        mx, mx_cite = _int_param(params, "max_new_tokens (accuracy)")
        mxp, mxp_cite = _int_param(params, "max_new_tokens (performance)")
        if mxp is not None:
            b["max_new_tokens_performance"] = mxp
            cites["max_new_tokens_performance"] = check_cite(mxp_cite or "")
    if mx is not None:
        b["max_new_tokens"] = mx
        cites["max_new_tokens"] = check_cite(mx_cite or "")
    mn, mn_cite = _int_param(params, "min_new_tokens")
    if mn is not None:
        b["min_new_tokens"] = mn
        cites["min_new_tokens"] = check_cite(mn_cite or "")
    for p in params:
        if p["parameter"] not in (
            "max_new_tokens", "min_new_tokens",
            "max_new_tokens (accuracy)", "max_new_tokens (performance)",
        ):  # fmt: skip
            notes.append(f"inference parameter {p['parameter']} = {p['value']} ({p['cite']})")
    if facts.get("decoding_rules"):
        b["decoding"] = str(facts["decoding_rules"]["algorithm"])
        cites["decoding"] = check_cite(facts["decoding_rules"]["cite"])
    gl = facts.get("generation_length_checker")
    if gl:
        notes.append(
            f"generation length: {gl['metric']} ({gl['unit']}) must lie within the "
            "accuracy lower bound and upper limit"
        )

    # SDXL images
    if name == "stable-diffusion-xl":
        key = round_name if round_name in SDXL_IMAGES else "v6.0"
        b["extra_accuracy_files"] = {"images": list(SDXL_IMAGES[key])}
        cites["extra_accuracy_files"] = (
            "PARAMS:50; CATALOGUE:113"
            if round_name == "v5.1"
            else V4_CITES["sdxl_images"]
            if family == "v4"
            else "CHK_CONST#REQUIRED_ACC_BENCHMARK; CATALOGUE:113"
        )

    if (
        _has_scenario(scenarios, "Interactive")
        and "Interactive" not in b.get("token_latency_limits", {})
        and "interactive_target_latency_ns" not in b
    ):
        notes.append(
            "Interactive: allowed by the checker's scenario table but no Interactive latency "
            "gate is defined for this benchmark in this round (none is enforced)"
        )
    rules_values: dict[str, str] = {}
    for field, (value, cite, disc) in ENFORCED_OVERRIDES.get((round_name, name), {}).items():
        notes.append(f"{field}: rules text says {b.get(field)}, enforced value {value} ({disc})")
        rules_values[field] = str(b.get(field))
        b[field] = value
        cites[field] = check_cite(cite)
    for scen, key in b.get("result_field_overrides", {}).items():
        if "tokens" in key and scen not in b.get("units_overrides", {}):
            unit = UNITS[scen]
            notes.append(
                f"{scen}: the result is {key} but the official summary CSV labels it {unit!r} "
                "(no special_unit_dict entry)"
            )

    # rules text and discrepancies
    rt, rt_cites = _rules_text(facts.get("rules_text", {}))
    rt.update(rules_values)
    disc_ids: list[str] = []
    for d in discrepancies:
        benches, rounds = DISCREPANCY_SCOPE.get(str(d["id"]), ((), ()))
        if name in benches and round_name in rounds:
            disc_ids.append(str(d["id"]))
            notes.append(
                f"{d['id']} ({d['topic']}): {' '.join(str(d['summary']).split())} "
                f"Auditor impact: {' '.join(str(d['auditor_impact']).split())}."
            )
    if disc_ids:
        rt["discrepancies"] = ", ".join(disc_ids)
        b["discrepancies"] = disc_ids
    if rt:
        b["rules_text"] = rt
        if rt_cites:
            cites["rules_text"] = _join_cites(*rt_cites) or ""
    b["notes"] = notes
    b["cites"] = {k: v for k, v in cites.items() if v}
    return b


def _has_scenario(scenarios: Mapping[str, Mapping[str, Any]], scen: str) -> bool:
    return any(scen in s.get("required", []) or scen in s.get("optional", []) for s in scenarios.values())


def build_round(round_name: str, facts: Mapping[str, Any]) -> dict[str, Any]:
    rf = facts["rounds"][round_name]
    settings = ROUND_SETTINGS[round_name]
    family = settings["family"]
    sel = facts["meta"]["round_source_selection"][round_name]
    glob = rf["globals"]
    v4 = family == "v4"
    v5 = family == "v5"

    seeds = glob["seeds"]
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

    benchmarks = {
        name: build_benchmark(round_name, name, bf, facts["discrepancies"])
        for name, bf in rf["benchmarks"].items()
    }
    # per-model percentile overrides in mlperf.conf (pointpainting SingleStream p99.9)
    for scen, d in glob["mlperf_conf_scenario_defaults"].items():
        for key, val in d.items():
            model = key[: -len("_target_latency_percentile")]
            if key.endswith("_target_latency_percentile") and model in benchmarks:
                bench = benchmarks[model]
                bench["target_latency_percentile_overrides"] = {scen: float(val)}
                bench["cites"]["target_latency_percentile_overrides"] = check_cite(d[f"{model}_cite"])
    patterns = ACC_PATTERNS_V4 if v4 else ACC_PATTERNS_V5 if v5 else ACC_PATTERNS_HEAD
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
    notes = [" ".join(str(n).split()) for n in rf.get("notes", [])]
    notes.extend(ROUND_NOTES[round_name])
    for d in facts["discrepancies"]:
        benches, rounds = DISCREPANCY_SCOPE.get(str(d["id"]), ((), ()))
        if "*" in benches and round_name in rounds:
            notes.append(f"{d['id']} ({d['topic']}): {' '.join(str(d['summary']).split())}")

    chk = "CHK_v5.1.1" if v5 else "CHK_HEAD"
    scenarios = _LOADGEN_SCENARIOS if v4 else tuple(RESULT_FIELDS)  # v4.1: no Interactive
    aliases = {k: v for k, v in MODEL_MAPPING_V5.items() if v in benchmarks}
    out: dict[str, Any] = {
        "name": round_name,
        "version": round_name.lstrip("v"),
        "checker": settings["checker"],
        "rules_source": str(sel["rules_text"]),
        "mlperf_conf_source": str(sel["mlperf_conf"]),
        "sources": {},  # filled below from the citations actually used
        "loadgen_versions": list(settings["loadgen_versions"]),
        "loadgen_versions_cite": check_cite(settings["loadgen_cite"]),
        **(
            {
                "loadgen_runs": {
                    **settings["loadgen_runs"],
                    "cite": check_cite(settings["loadgen_runs"]["cite"]),
                }
            }
            if "loadgen_runs" in settings
            else {}
        ),
        **(
            {}
            if family != "head"
            else {
                "endpoints_allowed_models": list(ENDPOINTS_ALLOWED_MODELS),
                "endpoints_cite": "CHK_CONST#ENDPOINTS_ALLOWED_MODELS",
                # accuracy_check.py check_accuracy: an endpoints score is compared only `if self.model ==
                # "qwen3-vl-235b-a22b"` (open: not at all)
                "endpoints_accuracy_checked_models": ["qwen3-vl-235b-a22b"],
                "endpoints_accuracy_cite": "CHK_HEAD_acc:116",
            }
        ),
        "seeds": _seeds(seeds),
        **({"test05_seeds": _seeds(glob["test05_seeds"])} if "test05_seeds" in glob else {}),
        "scenario_defaults": scen_defaults,
        "min_duration_ms": 600000,
        "min_duration_cite": check_cite(
            V4_CITES["min_duration"]
            if v4
            else "CHK_v5.1.1:692; CATALOGUE:92"
            if v5
            else "CHK_HEAD:1495; CHK_HEAD_perf:373-377"
        ),
        "early_stopping_scenarios": [
            s for s in ("SingleStream", "MultiStream", "Server", "Interactive") if s in scenarios
        ],
        "early_stopping_cite": check_cite(
            V4_CITES["early_stopping"]
            if v4
            else "CHK_v5.1.1:1665-1672; CATALOGUE:87"
            if v5
            else "CHK_HEAD_cfg:230-231; CATALOGUE:87"
        ),
        "result_fields": {s: k for s, k in RESULT_FIELDS.items() if s in scenarios},
        "result_fields_cite": check_cite(
            V4_CITES["result_fields"]
            if v4
            else "PARAMS:27; CATALOGUE:86"
            if round_name == "v5.1"
            else "CHK_CONST#RESULT_FIELD_NEW; CATALOGUE:86"
            if v5
            else "CHK_HEAD:1554-1580; CATALOGUE:86"
        ),
        "units": {s: u for s, u in UNITS.items() if s in scenarios},
        "units_cite": V4_CITES["units"]
        if v4
        else "CHK_CONST#UNIT_DICT; CATALOGUE:217"
        if v5
        else "CHK_HEAD:1999-2011; CATALOGUE:217",
        "power_units": {s: u for s, u in POWER_UNITS.items() if s in scenarios},
        "acc_patterns": dict(patterns),
        "acc_patterns_cite": check_cite(
            V4_CITES["acc_patterns"]
            if v4
            else "PARAMS:29-48; CATALOGUE:106"
            if v5
            else "CHK_CONST#ACC_PATTERN; CATALOGUE:106"
        ),
        "compliance_delta_pct": {"99": 1.0, "99.9": 0.1},
        "compliance_delta_pct_cite": V4_CITES["compliance_delta"] if v4 else "CATALOGUE:133",
        "system": {
            "required_fields": list(SYSTEM_REQUIRED_FIELDS),
            "meaningful_fields": list(SYSTEM_MEANINGFUL_FIELDS),
            "network_fields": list(SYSTEM_NETWORK_FIELDS),
            "power_fields": list(SYSTEM_POWER_FIELDS_V4 if v4 else SYSTEM_POWER_FIELDS),
            "valid_status": ["available", "preview", "rdi"],
            "valid_system_types": ["datacenter", "edge", "datacenter,edge", "edge,datacenter"],
            # the HEAD checker (version keys v5.0-v6.1, not v4.1) int()s these for the summary's total_accelerators
            "summary_int_fields": [] if v4 else ["number_of_nodes", "accelerators_per_node"],
            **({} if v4 else {"summary_int_fields_cite": "CHK_HEAD_results:104-105; CHK_HEAD#MODEL_CONFIG"}),
            "cite": check_cite(
                V4_CITES["system"]
                if v4
                else "CATALOGUE:51-60; CHK_v5.1.1:2437-2456,2881-2940"
                if v5
                else "CATALOGUE:51-60; CHK_CONST#SYSTEM_DESC_REQUIRED_FIELDS"
            ),
        },
        "structure": {
            "divisions": ["closed", "open", "network"],
            "file_size_limit_mb": 50,
            "max_accuracy_log_bytes": 10240,
            "measurement_required_files": [*(["mlperf.conf"] if v4 else []), "user.conf", "README.md"],
            "measurement_json_fields": list(MEASUREMENT_JSON_FIELDS),
            "performance_run_files": ["mlperf_log_summary.txt", "mlperf_log_detail.txt"],
            "performance_optional_files": [
                "mlperf_log_accuracy.json",
                "mlperf_log_trace.json",
                "results.json",
                ".gitkeep",
            ],
            "accuracy_files": [
                "mlperf_log_summary.txt",
                "mlperf_log_detail.txt",
                "accuracy.txt",
                "mlperf_log_accuracy.json",
            ],
            "accuracy_optional_files": ["mlperf_log_trace.json", "results.json", ".gitkeep"],
            "ignored_top_level": [".git", ".github", "assets"],
            "root_allowed_suffixes": [".md", ".pdf"],
            "power_run_files": ["spl.txt"],
            "power_dir_files": [
                "client.json",
                "client.log",
                "ptd_logs.txt",
                "server.json",
                "server.log",
            ],
            "power_measure_file_patterns": ["analyzer_table.*", "power_settings.*"],
            "compliance_performance_files": ["mlperf_log_summary.txt", "mlperf_log_detail.txt"],
            "test01_accuracy_files": ["mlperf_log_accuracy.json", "accuracy.txt"],
            "test01_fallback_accuracy_files": [
                "mlperf_log_accuracy.json",
                "accuracy.txt",
                "baseline_accuracy.txt",
                "compliance_accuracy.txt",
            ],
            # v4.1's checker asks for no calibration document
            "calibration_paths": [] if v4 else ["calibration.md", "documentation/calibration.md"],
            "network_sut_name_substring": "Network SUT",
            "layout": LAYOUTS[settings["layout"]],
            "cite": check_cite(
                V4_CITES["structure"]
                if v4
                else "CATALOGUE:29-44,69-73,80,105,110,118,126-133; CHK_v5.1.1:2231-2418"
                if v5
                else "CATALOGUE:29-44,69-73,80,105,110,118,126-133; CHK_CONST#REQUIRED_PERF_FILES"
            ),
        },
        "benchmarks": benchmarks,
        "aliases": aliases,
        "aliases_cite": check_cite(
            V4_CITES["aliases"]
            if v4
            else "PARAMS:52; CATALOGUE:40"
            if round_name == "v5.1"
            else f"{chk}#model_mapping; CATALOGUE:40"
        ),
        "alias_substrings": [list(p) for p in ALIAS_SUBSTRINGS],
        "notes": notes,
    }
    out["sources"] = _used_sources(out, facts["meta"]["sources"])
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


def _used_sources(round_data: dict[str, Any], facts_sources: Mapping[str, Any]) -> dict[str, Any]:
    cites: set[str] = set()
    _collect_cites(round_data, cites)
    for key in ("rules_source", "mlperf_conf_source"):
        cites.add(f"{round_data[key]}:1")
    known = {**facts_sources, **EXTRA_SOURCES}
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
    all_sources = {**facts_sources, **EXTRA_SOURCES}
    out: dict[str, Any] = {}
    for sid in sorted(ids):
        if sid in all_sources:
            src = all_sources[sid]
            out[sid] = {"path": str(src["path"]), "provenance": str(src["provenance"])}
    missing = sorted(i for i in ids if i not in all_sources and not i.startswith("RES"))
    if missing:
        raise ValueError(f"{round_data['name']}: citations name unknown sources {missing}")
    return out


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

HEADER = (
    "# GENERATED by `python -m rules.build_data` from {facts} plus the\n"
    "# checker constants in rules/build_data.py. Do not edit by hand: change the generator or the\n"
    "# facts and regenerate. Citations are SOURCE_ID:line (or SOURCE_ID#SYMBOL) into `sources`.\n"
)


class _Dumper(yaml.SafeDumper):
    pass


def _str_repr(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_repr)


def render_round(round_name: str, facts: Mapping[str, Any]) -> str:
    data = build_round(round_name, facts)
    Round.model_validate(data)  # never write a file the registry cannot load
    body = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )
    facts_file = facts["meta"].get("round_files", {}).get(round_name, "shared/reference/mlperf-facts.yaml")
    return HEADER.format(facts=facts_file) + body


def load_facts(path: Path, sources_dir: Path = SOURCES_DIR) -> dict[str, Any]:
    """The facts file, with the rounds it lacks added from ``sources_dir/<round>.yaml`` (same format)."""
    with path.open(encoding="utf-8") as fh:
        facts = yaml.safe_load(fh)
    if not isinstance(facts, dict) or "rounds" not in facts:
        raise ValueError(f"{path}: not an MLPerf facts file (no 'rounds')")
    for src in sorted(sources_dir.glob("v*.yaml")):
        with src.open(encoding="utf-8") as fh:
            extra = yaml.safe_load(fh)
        for round_name, round_facts in extra["rounds"].items():
            if round_name in facts["rounds"]:
                raise ValueError(f"{src}: round {round_name} is in the facts file too (keep one source)")
            facts["rounds"][round_name] = round_facts
            facts["meta"].setdefault("round_files", {})[round_name] = f"rules/sources/{src.name}"
            facts["meta"]["round_source_selection"][round_name] = extra["meta"]["round_source_selection"][
                round_name
            ]
        for sid, source in extra["meta"]["sources"].items():
            if sid in facts["meta"]["sources"]:
                raise ValueError(f"{src}: source {sid} is in the facts file too")
            facts["meta"]["sources"][sid] = source
    return facts


def render_all(facts_path: Path) -> dict[str, str]:
    facts = load_facts(facts_path)
    return {r: render_round(r, facts) for r in ROUNDS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rules.build_data", description=__doc__.split("\n")[0])
    ap.add_argument("facts", nargs="?", type=Path, default=DEFAULT_FACTS)
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    ap.add_argument("--check", action="store_true", help="compare with the files in --out")
    args = ap.parse_args(argv)
    if not args.facts.is_file():
        print(f"error: facts file not found: {args.facts}", file=sys.stderr)
        return 2
    try:
        rendered = render_all(args.facts)
    except (ValueError, KeyError) as exc:
        print(f"error: {args.facts}: {exc}", file=sys.stderr)
        return 2
    differs = []
    for name, text in rendered.items():
        target = args.out / f"{name}.yaml"
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                differs.append(str(target))
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if differs:
        print("out of date: " + ", ".join(differs), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
