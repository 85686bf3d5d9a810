"""One layout per round (``Round.structure.layout``), read by the packager and the checker alike.

The v6.x layout follows the HEAD checker's path constants (MEASUREMENTS_PATH, COMPLIANCE_PATH, SRC_PATH) and the
official repository's own sample tree (``shared/data/official-layout-sample-v6``); v5.x keeps the v5.1.1 checker's
``measurements/`` and ``compliance/`` trees.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.tree import WALK_LAYOUT
from rules import load_round
from rules.models import ResultLocation

LOC = ResultLocation("closed", "Org", "box", "llama3.1-8b", "Offline")
# findings that are about where files are (not about what the logs say): none may fire on the official sample
LAYOUT_RULES = ("MEAS-DIR", "MEAS-FILES", "MEAS-JSON", "MEAS-CODE", "TREE-UNKNOWN-ENTRY", "TREE-OTHER-LAYOUT", "COMPL-DIR", "COMPL-TEST-DIR", "SYS-MISSING")


@pytest.mark.parametrize("name", ["v5.0", "v5.1"])
def test_v5_layout_paths(name: str) -> None:
    lay = load_round(name).structure.layout
    assert lay.measurements_json_path(LOC) == "closed/Org/measurements/box/llama3.1-8b/Offline/box_Offline.json"
    assert lay.compliance_path(LOC) == "closed/Org/compliance/box/llama3.1-8b/Offline"
    assert lay.code_path(LOC) == "closed/Org/code/llama3.1-8b" and lay.code_root == "code"
    assert lay.has_measurements_tree and not lay.measurements_in_result_dir and not lay.compliance_in_result_dir


@pytest.mark.parametrize("name", ["v4.1", "v5.0", "v5.1", "v6.0", "v6.1"])
def test_paths_above_a_result_come_from_the_same_templates(name: str) -> None:
    """The system file, the benchmark directory and the measurements system directory the checker names (the
    submitter-, system- and benchmark-level findings) are the layout's, as a result's own paths are."""
    lay = load_round(name).structure.layout
    assert lay.system_file_of("closed", "Org", "box") == lay.system_path(LOC) == "closed/Org/systems/box.json"
    assert lay.benchmark_path("closed", "Org", "box", "llama3.1-8b") == lay.result_path(LOC).rsplit("/", 1)[0]
    assert lay.benchmark_path("closed", "Org", "box", "llama3.1-8b") == "closed/Org/results/box/llama3.1-8b"
    if lay.has_measurements_tree:
        assert lay.measurements_system_path("closed", "Org", "box") == "closed/Org/measurements/box"
    # the walk lists these before a round applies (checker.tree.WALK_LAYOUT): the same in every round
    assert lay.results_root("closed", "Org") == WALK_LAYOUT.results_root("closed", "Org") == "closed/Org/results"
    assert lay.systems_root("closed", "Org") == WALK_LAYOUT.systems_root("closed", "Org") == "closed/Org/systems"
    assert lay.result_path(LOC) == WALK_LAYOUT.result_path(LOC)
    if lay.has_measurements_tree:
        assert lay.measurements_root("closed", "Org") == WALK_LAYOUT.measurements_root("closed", "Org")


@pytest.mark.parametrize("name", ["v6.0", "v6.1"])
def test_v6_layout_paths(name: str) -> None:
    lay = load_round(name).structure.layout
    res = "closed/Org/results/box/llama3.1-8b/Offline"
    assert lay.result_path(LOC) == res
    assert lay.measurements_json_path(LOC) == f"{res}/measurements.json"
    assert lay.compliance_path(LOC) == res
    assert lay.code_path(LOC) == "closed/Org/src/llama3.1-8b" and lay.code_root == "src"
    assert lay.measurements_in_result_dir and lay.compliance_in_result_dir and not lay.has_measurements_tree
    assert not lay.measurements_json_prefix_fallback
    assert lay.system_path(LOC) == "closed/Org/systems/box.json"


def _layout_findings(root: Path, round_name: str) -> list[str]:
    report = check_tree(root, load_round(round_name), workers=1)
    found = list(report.findings) + [f for r in report.results for f in r.findings]
    return sorted({f"{f.rule} {f.path}" for f in found if f.rule.startswith(LAYOUT_RULES)})


@pytest.mark.shared
@pytest.mark.parametrize("name", ["v6.0", "v6.1"])
def test_official_v6_sample_has_no_layout_finding(shared_dir: Path, name: str) -> None:
    assert _layout_findings(shared_dir / "data" / "official-layout-sample-v6", name) == []


@pytest.mark.shared
def test_v5_layout_in_a_v6_round_is_named(shared_dir: Path, tmp_path: Path) -> None:
    """The sample moved back into the v5.x layout: the v6.x checker would find no measurements; so do we, and we say
    which directory it did not read."""
    src = shared_dir / "data" / "official-layout-sample-v6" / "open" / "NVIDIA"
    sub = tmp_path / "open" / "NVIDIA"
    shutil.copytree(src, sub)
    res = sub / "results" / "Jetson-Thor_TRT" / "llama3.1-8b-edge" / "SingleStream"
    meas = sub / "measurements" / "Jetson-Thor_TRT" / "llama3.1-8b-edge" / "SingleStream"
    meas.mkdir(parents=True)
    for name in ("user.conf", "README.md", "mlperf.conf"):
        shutil.move(str(res / name), str(meas / name))
    shutil.move(str(res / "measurements.json"), str(meas / "Jetson-Thor_TRT_SingleStream.json"))
    found = _layout_findings(tmp_path, "v6.1")
    assert "TREE-OTHER-LAYOUT open/NVIDIA/measurements" in found
    assert f"MEAS-JSON {res.relative_to(tmp_path)}" in found
    assert f"MEAS-FILES {res.relative_to(tmp_path)}/user.conf" in found
    # the same files in the v5.1 layout: no measurement finding for that result
    v5 = _layout_findings(tmp_path, "v5.1")
    assert not [f for f in v5 if "SingleStream" in f and f.startswith("MEAS-")], v5


def test_rules_layout_command(capsys: pytest.CaptureFixture[str]) -> None:
    from loadgen_sut.cli import main

    assert main(["rules", "layout", "--round", "v6.1"]) == 0
    text = capsys.readouterr().out
    assert "{division}/{submitter}/results/{system}/{benchmark}/{scenario}/measurements.json" in text
    assert main(["rules", "layout", "--round", "v5.1", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["layout"]["measurements_json"] == "{system}_{scenario}.json"
