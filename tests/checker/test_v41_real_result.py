"""A real v4.1 result (tests/fixtures/checker/v4.1-cisco-gptj-server, copied from the published v4.1 tree) under
the v4.1 rules: the round is detected from its LoadGen version, its value is the official CSV's, and equal-issue mode,
which its LoadGen does not log, is read where the v4.1 checker reads it (the measurement directory's conf files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from checker.checks.context import FileCache, ResultContext, SubmitterContext
from checker.engine import check_tree
from checker.findings import Severity
from checker.round_detection import detect_round
from checker.run_conf import measured_conf_setting
from checker.safe_io import SafeTree
from checker.tree import ResultDir, walk_submitter
from rules import Scenario, load_round

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "checker" / "v4.1-cisco-gptj-server"
RESULT = "closed/Cisco/results/X210c_L40SX2_TRT/gptj-99/Server"
MEAS = "closed/Cisco/measurements/X210c_L40SX2_TRT/gptj-99/Server"
V41 = load_round("v4.1")


def test_round_is_detected_from_loadgen_4_1() -> None:
    det = detect_round(ROOT)
    assert det.round.name == "v4.1" and det.clear
    assert det.loadgen_versions == {"4.1": 1}


def test_value_unit_and_seeds_as_the_official_v41_checker() -> None:
    rep = check_tree(ROOT, V41, workers=1)
    (entry,) = rep.results
    assert entry.path == RESULT and entry.mlperf_model == "gptj-99"
    assert entry.summary is not None
    # the official v4.1 summary CSV row of this result: 1725.98, Queries/s, accuracy 43.0605
    assert entry.summary.values["Result"] == "1725.98"
    assert entry.summary.values["Units"] == "Queries/s"
    # the v4.1 checker writes the first metric only (check_accuracy_dir result_acc, CHK_v4.1:1000-1001), ours the
    # v5.x "METRIC: value" list, whose first value is the same
    assert entry.summary.values["Accuracy"].startswith("ROUGE1: 43.0605 ")
    rules = {f.rule for f in entry.findings}
    assert not rules & {"PERF-SEEDS", "MEAS-FILES", "ACC-TARGET", "TREE-CALIBRATION"}, rules


def _context() -> ResultContext:
    """The result's check context, built as the engine builds it (checker/engine.py check_submitter)."""
    sub = walk_submitter(ROOT, ROOT, "closed", "Cisco")
    tree = SafeTree(ROOT, confine=ROOT)
    tree.register_walk(sub.path, frozenset(link.path for link in sub.symlinks), sub.file_ids)
    sctx = SubmitterContext(round=V41, tree=tree, sub=sub, files=FileCache(tree))
    rd = ResultDir("closed", "Cisco", "X210c_L40SX2_TRT", "gptj-99", "Server")
    return ResultContext(sctx, rd, "gptj-99", V41.benchmarks["gptj-99"], Scenario.SERVER, None)


def test_equal_issue_mode_is_read_from_the_measurement_conf_files() -> None:
    ctx = _context()
    assert ctx.scenario is Scenario.SERVER
    got = measured_conf_setting(ctx, "sample_concatenate_permutation")
    assert got is not None
    assert (got.path, got.entry.line, got.entry.value) == (f"{MEAS}/mlperf.conf", 44, "1")
    assert got.entry.text == "gptj.*.sample_concatenate_permutation = 1"
    assert measured_conf_setting(ctx, "no_such_key") is None


def test_the_result_is_valid_as_the_official_v41_checker_says() -> None:
    rep = check_tree(ROOT, V41, workers=1)
    (entry,) = rep.results
    assert [f.rule for f in entry.findings if f.severity is Severity.ERROR] == []


def test_a_count_no_v41_checker_converts_is_no_crash_value_there(tmp_path: Path) -> None:
    """accelerators_per_node 'N/A' (published in v4.1 by a CPU-only system, closed/Quanta_Cloud_Technology): the v4.1
    checker writes it with str() and accepts it; only the HEAD checker, whose versions start at v5.0, int()s it."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT, root)
    system = root / "closed/Cisco/systems/X210c_L40SX2_TRT.json"
    desc = json.loads(system.read_text(encoding="utf-8"))
    desc["accelerators_per_node"] = "N/A"
    system.write_text(json.dumps(desc), encoding="utf-8")

    def field_type(rnd_name: str) -> list[str]:
        rep = check_tree(root, load_round(rnd_name), workers=1)
        found = list(rep.findings) + [f for e in rep.results for f in e.findings]
        return [f.message for f in found if f.rule == "SYS-FIELD-TYPE"]

    assert field_type("v4.1") == []
    assert any("accelerators_per_node 'N/A' is not a whole number" in m for m in field_type("v5.1"))
