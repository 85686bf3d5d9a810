"""System and implementation descriptions: what crashes or misleads the official checkers is refused.

The schemas (``schemas/system-description.json``, ``schemas/measurements.json``) refuse each value with the
field named, yet accept every published file here (v5.1, v6.1 and the official v6 layout sample); the checker
(``checker/checks/system.py``) reports the same values on a real tree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.engine import check_tree
from checker.findings import Finding, Severity
from rules import load_round
from schemas import schema_errors
from tests.checker.fixture_cases import materialize

TREES = ("mlperf-inference-v5.1", "mlperf-inference-v6.1", "official-layout-sample-v6")
SYSTEM = "closed/RedHat/systems/XE8640_4xH100_vLLM.json"


def _real_systems(shared: Path) -> list[Path]:
    return sorted(f for t in TREES for f in (shared / "data" / t).glob("*/*/systems/*.json"))


def _real_measurements(shared: Path) -> list[Path]:
    data = shared / "data"
    files = sorted(data.joinpath(TREES[0]).glob("*/*/measurements/*/*/*/*.json"))
    for t in TREES[1:]:
        files += sorted(data.joinpath(t).glob("*/*/results/*/*/*/measurements.json"))
    return files


def test_every_published_system_description_passes(shared_dir: Path) -> None:
    files = _real_systems(shared_dir)
    assert len(files) >= 27
    for f in files:
        assert schema_errors(json.loads(f.read_text(encoding="utf-8")), "system-description") == [], f


def test_every_published_implementation_description_passes(shared_dir: Path) -> None:
    files = _real_measurements(shared_dir)
    assert len(files) >= 86
    assert any(f.name == "measurements.json" for f in files)
    for f in files:
        assert schema_errors(json.loads(f.read_text(encoding="utf-8")), "measurements") == [], f


@pytest.fixture
def real_system(shared_dir: Path) -> dict[str, Any]:
    path = shared_dir / "data" / TREES[0] / SYSTEM
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# (field, value, words the message must hold): each crashes or misleads an official checker
CRASHES = [
    ("is_network", True, "STRING"),  # .lower() on a bool: v5.1.1 L1991-1995, HEAD system_check.py:131-136
    ("is_network", False, "STRING"),
    ("is_network", 1, "STRING"),
    ("is_network", " true", "STRING"),  # .lower() == "true" is False: read as not networked
    ("accelerators_per_node", "1.0", "int("),  # HEAD results.py:104-105 int("1.0")
    ("accelerators_per_node", "", "int("),
    ("accelerators_per_node", "N/A", "int("),
    ("accelerators_per_node", 1.5, "int("),  # truncated
    ("accelerators_per_node", 0, "empty"),  # `not 0`: both checkers call it empty
    ("accelerators_per_node", True, "int("),
    ("accelerators_per_node", None, "int("),
    ("number_of_nodes", "1.0", "int("),
    ("number_of_nodes", "0", "int("),
    ("number_of_nodes", [1], "int("),
    ("status", 5, "JSON string"),  # v5.1.1 L2445 .lower(): the whole run stops
    ("status", None, "JSON string"),
    ("status", "coming soon", "available"),
    ("status", " available", "available"),
    ("system_type", "Datacenter", "exactly"),  # HEAD loader -> set_type ValueError
    ("system_type", "datacenter, edge", "exactly"),
    ("system_type", ["datacenter"], "exactly"),
    ("division", "Closed", "lower case"),
    ("division", 1, "lower case"),
    ("submitter", None, "JSON string"),  # v5.1.1 L2925 .lower()
    ("system_name", 7, "JSON string"),  # v5.1.1 log_result '"' + system_name + '"'
    ("system_name", 'X1 "fast"', "double quote"),
    ("host_processor_model_name", None, "JSON string"),
    ("accelerator_model_name", 8, "JSON string"),
    ("framework", {"vllm": "0.10"}, "JSON string"),
    ("operating_system", None, "JSON string"),
    ("hw_notes", None, "JSON string"),  # notes concatenation
    ("sw_notes", ["a"], "JSON string"),
    ("hw_notes", 'say "hi"', "double quote"),
    ("host_processor_core_count", "64,96", "unquoted"),  # v5.1.1 writes it into the CSV unquoted
    ("host_processors_per_node", "", "unquoted"),
    ("host_processor_core_count", 0, "unquoted"),
    ("other_software_stack", {}, "non-empty"),
    ("cooling", "", "meaningful"),
    ("cooling", 3, "JSON string"),
    ("system_power_only", 1.5, "get_boolean"),
    ("system_power_only", [], "get_boolean"),
    ("host_storage_type", "<FILL IN: storage type>", "placeholder"),
]


@pytest.mark.parametrize(("field", "value", "words"), CRASHES, ids=[f"{c[0]}={c[1]!r}" for c in CRASHES])
def test_schema_refuses_crash_values_naming_the_field(
    real_system: dict[str, Any], field: str, value: Any, words: str
) -> None:
    assert schema_errors(real_system, "system-description") == []
    real_system[field] = value
    errors = schema_errors(real_system, "system-description")
    assert errors, f"{field}={value!r} accepted"
    assert all(e.startswith(f"{field}: ") for e in errors), errors
    assert any(words in e for e in errors), errors


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("accelerators_per_node", "0"),  # truthy for the checkers, int("0") for HEAD: a CPU-only system
        ("accelerators_per_node", "8"),
        ("accelerators_per_node", 8),
        ("number_of_nodes", "18"),
        ("host_processor_core_count", "N/A"),  # published in v5.1
        ("host_processor_core_count", "64(AMD EPYC 9534) and 96(AMD EPYC 9655)"),
        ("status", "Preview"),  # .lower() in both
        ("system_type", "edge,datacenter"),
        ("is_network", "false"),
        ("is_network", "FALSE"),
        ("is_network", None),  # .get() is None: treated as absent by both
        ("other_software_stack", {"CUDA": "12.8"}),
        ("system_power_only", "false"),
        ("system_power_only", False),
        ("hw_notes", ""),
        ("system_name", "QuantaGrid D74A-7U "),  # published with a trailing space
    ],
)
def test_schema_accepts_what_the_checkers_read_fine(
    real_system: dict[str, Any], field: str, value: Any
) -> None:
    real_system[field] = value
    assert schema_errors(real_system, "system-description") == []


def test_network_true_string_requires_network_fields_but_a_boolean_is_refused(
    real_system: dict[str, Any],
) -> None:
    real_system["is_network"] = "True"
    errors = schema_errors(real_system, "system-description")
    assert any("'network_topology' is a required property" in e for e in errors)
    real_system["is_network"] = True
    errors = schema_errors(real_system, "system-description")
    assert errors and all(e.startswith("is_network: ") for e in errors)


IMPL = {
    "input_data_types": "int32",
    "retraining": "no",
    "starting_weights_filename": "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
    "weight_data_types": "fp8",
    "weight_transformations": "quantization",
}


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("weight_data_types", None, "non-empty text"),  # v5.1.1 L3057 j["weight_data_types"] then the CSV
        ("weight_data_types", "", "non-empty text"),
        ("weight_data_types", 8, "non-empty text"),
        ("weight_data_types", 'fp8 "e4m3"', "double quotes"),  # HEAD results.py:148 unescaped
        ("weight_data_types", {}, "non-empty"),
        ("weight_data_types", {"unet": "it's"}, "without quotes"),
        ("input_data_types", "", "meaningful"),
        ("retraining", False, "JSON string"),
        ("starting_weights_filename", "<FILL IN: checkpoint>", "placeholder"),
        ("weight_transformations", None, "JSON string"),
    ],
)
def test_implementation_schema_refuses_naming_the_field(field: str, value: Any, words: str) -> None:
    assert schema_errors(IMPL, "measurements") == []
    impl = {**IMPL, field: value}
    errors = schema_errors(impl, "measurements")
    assert errors and all(e.startswith(f"{field}: ") for e in errors), errors
    assert any(words in e for e in errors), errors


def test_implementation_schema_missing_weight_data_types_is_named() -> None:
    impl = {k: v for k, v in IMPL.items() if k != "weight_data_types"}
    assert schema_errors(impl, "measurements") == ["(top level): 'weight_data_types' is a required property"]


def test_implementation_schema_accepts_the_published_object_form() -> None:
    impl = {**IMPL, "weight_data_types": {"clip1": "fp32", "clip2": "fp32", "unet": "fp8", "vae": "fp32"}}
    assert schema_errors(impl, "measurements") == []


# --- the checker reports the same values on a real tree ------------------------------------------------------

V51 = load_round("v5.1")
V61 = load_round("v6.1")


def _system_findings(tmp_path: Path, key: str, value: Any, delete: bool = False) -> list[Finding]:
    op: dict[str, Any] = (
        {"op": "json_delete", "path": SYSTEM, "key": key}
        if delete
        else {
            "op": "json_set",
            "path": SYSTEM,
            "key": key,
            "value": value,
        }
    )
    root = materialize({"base": "llm", "mutations": [op]}, tmp_path / "tree")
    rep = check_tree(root, V51, workers=1)
    found = list(rep.findings) + [f for e in rep.results for f in e.findings]
    # the base system has one unknown field of its own (host_processor_vcpu_count)
    return [
        f for f in found if f.rule.startswith("SYS-") and f.path == SYSTEM and f.rule != "SYS-UNKNOWN-FIELD"
    ]


@pytest.mark.parametrize(
    ("key", "value", "rule", "severity", "words"),
    [
        ("is_network", False, "SYS-NETWORK", Severity.ERROR, "is_system_over_network L1991-1995"),
        ("accelerators_per_node", "1.0", "SYS-FIELD-TYPE", Severity.ERROR, "results.py:104-105"),
        ("number_of_nodes", 2.5, "SYS-FIELD-TYPE", Severity.ERROR, "results.py:104-105"),
        ("accelerators_per_node", 0, "SYS-EMPTY-FIELDS", Severity.ERROR, "L2903-2915"),
        ("status", 1, "SYS-STATUS", Severity.ERROR, "L2445"),
        ("status", " available", "SYS-STATUS", Severity.ERROR, "L2445-2451"),
        ("system_type", "Datacenter", "SYS-TYPE", Severity.ERROR, "configuration.py:62-75"),
        ("submitter", None, "SYS-SUBMITTER", Severity.ERROR, "system_check.py:197"),
        ("host_processor_model_name", 5, "SYS-FIELD-TYPE", Severity.ERROR, "L2176/L2210"),
        ("hw_notes", 5, "SYS-FIELD-TYPE", Severity.ERROR, "L2099-2102"),  # (None is fine: sw_notes is set)
        ("sw_notes", 3, "SYS-FIELD-TYPE", Severity.ERROR, "L2099-2102"),
        ("system_name", 'X "1"', "SYS-FIELD-TYPE", Severity.WARNING, "results.py:148"),
        ("host_processor_core_count", "64, 96", "SYS-FIELD-TYPE", Severity.WARNING, "L2175-2178"),
        ("system_power_only", [1], "SYS-FIELD-TYPE", Severity.WARNING, "get_boolean"),
        ("is_network", "false", "SYS-FIELDS", Severity.WARNING, "system_check.py:159-161"),
    ],
)
def test_checker_reports_crash_values(
    tmp_path: Path, key: str, value: Any, rule: str, severity: Severity, words: str
) -> None:
    found = _system_findings(tmp_path, key, value)
    hits = [f for f in found if f.rule == rule and f.severity is severity and words in f.source]
    assert hits, [(f.rule, f.severity, f.message, f.source) for f in found]
    if rule == "SYS-FIELD-TYPE":
        assert key in hits[0].message and hits[0].line is not None


def test_checker_is_silent_on_values_the_checkers_read_fine(tmp_path: Path) -> None:
    assert _system_findings(tmp_path / "a", "accelerators_per_node", "0") == []
    assert _system_findings(tmp_path / "b", "status", "Available") == []
    assert [f.rule for f in _system_findings(tmp_path / "c", "is_network", "false")] == ["SYS-FIELDS"]
    assert _system_findings(tmp_path / "d", "is_network", None) == []


def test_is_network_false_without_network_fields_is_an_error_under_the_head_checker() -> None:
    assert "HEAD" in (V61.checker or "")
    assert "HEAD" not in (V51.checker or "")
