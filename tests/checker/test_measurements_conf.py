"""MEAS-MLPERF-CONF on real published files: a measurements mlperf.conf that is not the round's (a warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.findings import Severity
from rules import load_round


@pytest.mark.shared
def test_a_copy_with_another_rounds_seeds_is_named(shared_dir: Path) -> None:
    root = shared_dir / "data" / "mlperf-inference-v5.1" / "closed" / "AMD"
    report = check_tree(root, load_round("v5.1"), workers=1)
    hits = [f for r in report.results for f in r.findings if f.rule == "MEAS-MLPERF-CONF"]
    assert hits and all(f.severity is Severity.WARNING for f in hits)
    sdxl = next(f for f in hits if "stable-diffusion-xl/Offline" in (f.path or ""))
    assert sdxl.line == 22 and "qsl_rng_seed = 3066443479025735752" in sdxl.message
    assert "1780908523862526354" in sdxl.message  # the round's seed, named


@pytest.mark.shared
def test_the_rounds_own_copy_is_silent(shared_dir: Path) -> None:
    root = shared_dir / "data" / "mlperf-inference-v5.1" / "closed" / "RedHat"
    report = check_tree(root, load_round("v5.1"), workers=1)
    assert not [f for r in report.results for f in r.findings if f.rule == "MEAS-MLPERF-CONF"]


def test_our_own_trees_carry_the_rounds_mlperf_conf() -> None:
    tree = Path(__file__).resolve().parents[1] / "fixtures" / "official" / "v6.1" / "tree"
    report = check_tree(tree, load_round("v6.1"), workers=1)
    assert not [f for r in report.results for f in r.findings if f.rule == "MEAS-MLPERF-CONF"]
