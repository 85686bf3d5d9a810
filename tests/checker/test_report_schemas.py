"""The shipped JSON Schemas accept every real v5.1 file they describe, and reject broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas import load_schema, schema_errors


def _json_files(tree: Path, pattern: str) -> list[Path]:
    files = sorted(tree.glob(pattern))
    assert files, f"no files match {pattern} under {tree}"
    return files


@pytest.mark.parametrize("name", ["system-description", "measurements", "check-report"])
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"].endswith("2020-12/schema")


def test_every_real_system_description_validates(v51_tree: Path) -> None:
    files = _json_files(v51_tree, "*/*/systems/*.json")
    assert len(files) >= 20
    for f in files:
        assert schema_errors(json.loads(f.read_text(encoding="utf-8")), "system-description") == [], f


def test_every_real_measurements_json_validates(v51_tree: Path) -> None:
    files = _json_files(v51_tree, "*/*/measurements/*/*/*/*.json")
    assert len(files) >= 60
    for f in files:
        assert schema_errors(json.loads(f.read_text(encoding="utf-8")), "measurements") == [], f


def test_system_description_requires_the_35_official_fields(v51_tree: Path) -> None:
    schema = load_schema("system-description")
    assert len(schema["required"]) == 35
    real = json.loads(next(iter(sorted(v51_tree.glob("closed/RedHat/systems/*.json")))).read_text())
    broken = dict(real)
    del broken["host_processor_core_count"]
    errors = schema_errors(broken, "system-description")
    assert any("host_processor_core_count" in e for e in errors)


def test_system_description_allows_extra_fields_and_numeric_strings(v51_tree: Path) -> None:
    real = json.loads(next(iter(sorted(v51_tree.glob("closed/AMD/systems/*.json")))).read_text())
    real["some_vendor_field"] = {"anything": [1, 2]}
    real["number_of_nodes"] = "1"
    real["accelerators_per_node"] = 8
    assert schema_errors(real, "system-description") == []
    real["accelerators_per_node"] = [8]
    assert schema_errors(real, "system-description") != []


def test_network_system_needs_network_fields(v51_tree: Path) -> None:
    real = json.loads(next(iter(sorted(v51_tree.glob("closed/AMD/systems/*.json")))).read_text())
    real["is_network"] = "false"
    assert schema_errors(real, "system-description") == []
    real["is_network"] = "true"
    errors = schema_errors(real, "system-description")
    assert any("network_topology" in e for e in errors)


def test_measurements_json_rejects_empty_required_field(v51_tree: Path) -> None:
    f = _json_files(v51_tree, "closed/RedHat/measurements/*/*/*/*.json")[0]
    data = json.loads(f.read_text())
    data["weight_data_types"] = ""
    assert any(e.startswith("weight_data_types") for e in schema_errors(data, "measurements"))
