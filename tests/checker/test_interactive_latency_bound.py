"""v6.1 qwen3-vl-235b-a22b: Interactive is held to its own 1.5 s target latency, Server to 12 s (the official
checker's latency-constraint, CHK_HEAD:256-259; HEAD performance_check.py reads latency-constraint[model][scenario])."""

from __future__ import annotations

import shutil
from pathlib import Path

from checker.engine import check_tree
from rules import load_round

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "official" / "v6.1" / "tree"
QWEN = "closed/InferenceAuditSim/results/simulated_system/qwen3-vl-235b-a22b"


def test_an_interactive_result_is_held_to_the_interactive_bound(tmp_path: Path) -> None:
    # the oracle tree's qwen3-vl Server run (effective_target_latency_ns 12 s, the Server bound) filed as Interactive
    tree = tmp_path / "tree"
    shutil.copytree(ORACLE, tree, symlinks=True)
    shutil.copytree(tree / QWEN / "Server", tree / QWEN / "Interactive", symlinks=True)
    report = check_tree(tree, load_round("v6.1"), workers=1)
    by_scenario = {e.scenario: e for e in report.results if e.benchmark == "qwen3-vl-235b-a22b"}
    server = {f.rule for f in by_scenario["Server"].findings}
    interactive = [f for f in by_scenario["Interactive"].findings if f.rule == "LAT-SERVER-TARGET"]
    assert "LAT-SERVER-TARGET" not in server
    assert len(interactive) == 1
    assert "12000000000 exceeds the qwen3-vl-235b-a22b Interactive bound 1500000000 ns" in interactive[0].message
