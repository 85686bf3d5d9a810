"""The system description record (checker/parsers/system_desc.py) and the checks that read it.

The parser: typed fields from a real v5.1 file, None for a field that is absent or of the wrong type, the official
readings (status lower-cased, not stripped; counts as whole numbers; is_network ``.lower() == "true"``), the raw
mapping kept read-only, and bad input (not an object, malformed, too deep, too long a number, not UTF-8) returned as
a problem, never raised. The checks: SYS-* findings, ``ResultContext.system_type_key`` and the summary row, all
computed from the record.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from checker.checks.context import FileCache, SubmitterContext
from checker.checks.system import check_system
from checker.engine import check_tree
from checker.parsers.system_desc import (
    NOT_AN_OBJECT,
    SystemDesc,
    parse_system_desc,
    system_desc_from,
    whole_number,
)
from checker.safe_io import SafeTree
from checker.tree import walk_submitter
from rules import load_round
from tests.checker.fixture_cases import FIXTURES, materialize

SYSTEM = "closed/RedHat/systems/XE8640_4xH100_vLLM.json"
RESULTS = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b"
BASE_TEXT = (FIXTURES / "base" / "llm" / SYSTEM).read_text(encoding="utf-8")


def _desc(**changes: Any) -> SystemDesc:
    doc = json.loads(BASE_TEXT)
    for k, v in changes.items():
        if v is _DELETE:
            del doc[k]
        else:
            doc[k] = v
    text = json.dumps(doc, indent=1)
    read = parse_system_desc(SYSTEM, text)
    assert read.problem is None and read.desc is not None
    return read.desc


_DELETE = object()


def test_real_file_typed_fields() -> None:
    read = parse_system_desc(SYSTEM, BASE_TEXT)
    assert read.problem is None
    d = read.desc
    assert d is not None
    assert (d.submitter, d.division, d.status, d.availability) == ("RedHat", "closed", "available", "available")
    assert (d.system_type, d.system_type_key) == ("datacenter", "datacenter")
    assert d.system_name == "Dell PowerEdge XE8640 (1xH100-SXM-80GB, vLLM)"
    # counts written as strings ("1", "2", "64") are whole numbers
    assert (d.number_of_nodes, d.accelerators_per_node) == (1, 1)
    assert (d.host_processors_per_node, d.host_processor_core_count) == (2, 64)
    # the published file separates words with narrow no-break spaces (U+202F): kept as written
    assert d.host_processor_model_name == "Intel\u202fXeon\u202f6448Y 2.1GHz(2x 32 cores each)"
    assert d.accelerator_model_name == "NVIDIA H100-SXM-80GB"
    assert (d.framework, d.operating_system) == ("vLLM 0.10.0, RHEL 9.6", "VM OS: Red Hat Enterprise Linux 9.6")
    assert d.hw_notes is not None and d.hw_notes.startswith("Dell PowerEdge XE8640")
    assert d.sw_notes is not None and "OCP version" in d.sw_notes
    # not in the file: not given
    assert d.is_network is None and d.system_power_only is None and not d.power_only
    # the raw mapping keeps every field, nested ones too, and a summary shows str() of the value
    assert d.raw["other_software_stack"]["vllm"] == "0.10.0"
    assert d.raw["host_memory_capacity"] == "128 GB"
    assert d.shown("number_of_nodes") == "1" and d.shown("is_network") == "None" and d.shown("x", "") == ""
    assert d.line_of("status") == 4 and d.line_of("sw_notes") == 41 and d.line_of("missing_field") is None


def test_record_and_raw_are_read_only() -> None:
    d = _desc()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.status = "preview"  # type: ignore[misc]
    with pytest.raises(TypeError):
        d.raw["status"] = "preview"  # type: ignore[index]
    # the record is a copy: changing the parsed dict afterwards changes nothing
    obj: dict[str, Any] = {"status": "available"}
    rec = system_desc_from(obj, "s.json")
    obj["status"] = "rdi"
    assert rec.status == "available" and rec.raw["status"] == "available"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (8, 8),
        ("8", 8),
        (8.0, 8),
        (" 8 ", 8),  # int() accepts surrounding spaces
        ("0", 0),
        (-1, -1),
        (8.5, None),
        ("8.0", None),  # int("8.0") raises: HEAD's summary would stop
        (True, None),  # a flag is not a count
        (None, None),
        ([], None),
        ("x", None),
        ("1,2", None),
        (math.inf, None),
        (math.nan, None),
        ("9" * 5000, None),  # over Python's int conversion limit: refused, not raised
    ],
)
def test_whole_number(value: Any, expected: int | None) -> None:
    assert whole_number(value) == expected


def test_wrong_types_are_not_given_and_raw_keeps_them() -> None:
    d = _desc(
        status=5,
        system_type=["edge"],
        submitter=None,
        division=1,
        hw_notes=5,
        sw_notes=["x"],
        framework={},
        number_of_nodes=True,
        accelerators_per_node="eight",
    )
    assert d.status is None and d.availability is None
    assert d.system_type is None and d.system_type_key is None
    assert (d.submitter, d.division, d.hw_notes, d.sw_notes, d.framework) == (None,) * 5
    assert d.number_of_nodes is None and d.accelerators_per_node is None
    assert d.raw["status"] == 5 and d.raw["system_type"] == ["edge"] and d.raw["submitter"] is None
    assert d.given("submitter") and not d.filled("submitter")  # null: present, empty
    assert d.shown("status") == "5" and d.shown("submitter") == "None" and d.shown("sw_notes") == "['x']"
    assert d.text_of("status") is None and d.text_of("cooling") == "NA"
    absent = _desc(status=_DELETE, number_of_nodes=_DELETE)
    assert absent.status is None and not absent.given("status") and absent.shown("status", "") == ""
    assert absent.number_of_nodes is None


def test_official_readings() -> None:
    # status: compared lower-cased, never stripped
    assert _desc(status="Available").availability == "available"
    assert _desc(status=" available").availability == " available"
    # system_type: kept exactly as written; the scenario-table key is looked up leniently
    d = _desc(system_type="Datacenter")
    assert d.system_type == "Datacenter" and d.system_type_key == "datacenter"
    assert _desc(system_type="edge,datacenter").system_type_key == "datacenter+edge"
    assert _desc(system_type="datacenter, edge").system_type_key is None
    # is_network: .lower() == "true" (no strip); a JSON boolean as it is; another type is not given
    assert [_desc(is_network=v).is_network for v in ("True", "TRUE ", "false", True, False, 1)] == [
        True,
        False,
        False,
        True,
        False,
        None,
    ]
    # system_power_only: the official get_boolean (v5.1.1 L1323-1335): "true" in any case, no strip; bool; int as bool(n)
    spo = ["TRUE", "yes", " TRUE", "1", 1, True, 2, 0, "false", False, 2.5, [], None]
    assert [_desc(system_power_only=v).system_power_only for v in spo] == [
        True,
        False,
        False,
        False,
        True,
        True,
        True,
        False,
        False,
        False,
        None,
        None,
        None,
    ]
    assert _desc(system_power_only="true").power_only and not _desc(system_power_only=2.5).power_only
    # filled: JSON truthiness, as the official `if not value`
    assert [_desc(cooling=v).filled("cooling") for v in ("", 0, "0", [], "x", False)] == [
        False,
        False,
        True,
        False,
        True,
        False,
    ]


@pytest.mark.parametrize(
    ("text", "kind", "line"),
    [
        ("[]", NOT_AN_OBJECT, None),
        ("42", NOT_AN_OBJECT, None),
        ('"x"', NOT_AN_OBJECT, None),
        ("null", NOT_AN_OBJECT, None),
        ("{\n  \"status\": ", "invalid-json", 2),
        ('{"a": 1, "a": }', "invalid-json", 1),
        ("[" * 5000 + "]" * 5000, "invalid-json", 1),
        ('{\n"status": "available",\n"number_of_nodes": ' + "9" * 5000 + "}", "invalid-json", 3),
    ],
)
def test_bad_input_is_a_problem(text: str, kind: str, line: int | None) -> None:
    read = parse_system_desc(SYSTEM, text)
    assert read.desc is None and read.problem is not None
    assert read.problem.kind == kind and read.problem.path == SYSTEM and read.problem.line == line
    assert read.problem.message


def test_nan_and_duplicates_parse() -> None:
    # NaN is valid for Python's json (the checks judge it); a repeated key keeps its last value, as json.load
    d = parse_system_desc(SYSTEM, '{"number_of_nodes": NaN, "status": "x", "status": "rdi"}').desc
    assert d is not None and d.number_of_nodes is None and d.status == "rdi"


def _sctx(root: Path) -> SubmitterContext:
    sub = walk_submitter(root, root, "closed", "RedHat")
    tree = SafeTree(root, confine=root)
    tree.register_walk(sub.path, frozenset(link.path for link in sub.symlinks), sub.file_ids)
    return SubmitterContext(round=load_round("v5.1"), tree=tree, sub=sub, files=FileCache(tree))


def _tree(tmp_path: Path, **changes: Any) -> Path:
    muts = [{"op": "json_set", "path": SYSTEM, "key": k, "value": v} for k, v in changes.items()]
    return materialize({"base": "llm", "mutations": muts}, tmp_path / "tree")


def test_context_parses_once_and_reports_unreadable(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    sctx = _sctx(root)
    first = sctx.system_read("XE8640_4xH100_vLLM")
    assert first is sctx.system_read("XE8640_4xH100_vLLM")  # parsed once per submitter
    assert first.desc is not None and sctx.system_desc("XE8640_4xH100_vLLM") is first.desc
    (root / SYSTEM).write_bytes(b'{"status": "\xff\xfe"}')  # not UTF-8: the safe reader refuses it
    read = _sctx(root).system_read("XE8640_4xH100_vLLM")
    assert read.desc is None and read.problem is not None and read.problem.kind == "not-utf8"
    missing = _sctx(root).system_read("no_such_system")
    assert missing.desc is None and missing.problem is not None and missing.problem.kind == "missing"


def test_check_system_reads_the_record(tmp_path: Path) -> None:
    root = _tree(tmp_path, number_of_nodes="8", accelerators_per_node="1.0", status="Preview")
    found = check_system(_sctx(root), "XE8640_4xH100_vLLM")
    rules = {(f.rule, f.line) for f in found}
    # "8" is a whole number; "1.0" is not (int("1.0") raises), reported on its line of the file
    types = [f for f in found if f.rule == "SYS-FIELD-TYPE"]
    assert len(types) == 1 and "accelerators_per_node '1.0'" in types[0].message
    assert types[0].line == _line(root, "accelerators_per_node")
    assert not any(r == "SYS-STATUS" for r, _ in rules)  # "Preview".lower() is a valid status


def test_check_system_not_an_object(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / SYSTEM).write_text("[1, 2]", encoding="utf-8")
    found = check_system(_sctx(root), "XE8640_4xH100_vLLM")
    assert [(f.rule, f.message, f.path) for f in found] == [
        ("SYS-JSON", "system description is not a JSON object", SYSTEM)
    ]


def _line(root: Path, key: str) -> int:
    lines = (root / SYSTEM).read_text(encoding="utf-8").split("\n")
    return next(i + 1 for i, ln in enumerate(lines) if f'"{key}"' in ln)


def test_summary_row_and_scenarios_from_the_record(tmp_path: Path) -> None:
    root = _tree(tmp_path, number_of_nodes=8.0, status="Available", hw_notes="", sw_notes="sw", framework=None)
    rep = check_tree(root, load_round("v5.1"), workers=1)
    rows = {e.scenario: e.summary for e in rep.results}
    assert set(rows) == {"Offline", "Server"}
    row = rows["Offline"]
    assert row is not None
    v = row.values
    # str() of the JSON value, as the official log_result writes it: 8.0 stays 8.0, null is None
    assert (v["number_of_nodes"], v["Availability"], v["SystemType"]) == ("8.0", "available", "datacenter")
    assert (v["notes"], v["framework"], v["accelerators_per_node"]) == ("sw", "None", "1")
    # system_type from the record picks the benchmark's datacenter scenario table: Offline and Server are allowed
    assert not any(f.rule == "TREE-SCENARIO" for e in rep.results for f in e.findings)


def test_edge_system_type_key_reaches_the_result_checks(tmp_path: Path) -> None:
    root = _tree(tmp_path, system_type="edge")
    rep = check_tree(root, load_round("v5.1"), workers=1)
    # llama3.1-8b Server on an edge system: not a scenario of the edge table (TREE-SCENARIO, from the record)
    server = next(e for e in rep.results if e.scenario == "Server")
    assert any(f.rule == "TREE-SCENARIO" for f in server.findings), [f.rule for f in server.findings]
    assert server.summary is not None and server.summary.values["SystemType"] == "edge"
