"""Round auto-detection from the LoadGen versions in the performance logs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from checker.cli import check as cli
from checker.round_detection import detect_round, sample_loadgen_versions
from rules.registry import latest_round


def _copy_with_version(v51_tree: Path, dest: Path, version: str | None) -> Path:
    """A copy of closed/RedHat whose detail logs claim LoadGen ``version`` (None: the line removed)."""
    root = dest / "tree"
    shutil.copytree(v51_tree / "closed" / "RedHat", root / "closed" / "RedHat")
    for log in root.rglob("mlperf_log_detail.txt"):
        text = log.read_text(encoding="utf-8")
        if version is None:
            text = "\n".join(ln for ln in text.split("\n") if '"loadgen_version"' not in ln)
        else:
            text = re.sub(
                r'("key": "loadgen_version", "value": ")[^"]*', rf"\g<1>{version} @ 0123456789", text
            )
        log.write_text(text, encoding="utf-8")
    return root


def test_real_v51_tree_is_detected_as_v51(v51_tree: Path) -> None:
    d = detect_round(v51_tree)
    assert d.round.name == "v5.1" and d.clear
    assert set(d.loadgen_versions) == {"5.0", "5.1"}  # v5.1 submissions used 5.0.x and 5.1.x LoadGen
    assert "detected from LoadGen" in d.note


def test_compliance_logs_are_not_sampled(v51_tree: Path) -> None:
    seen = sample_loadgen_versions(v51_tree / "closed" / "RedHat", max_logs=1000)
    assert sum(seen.values()) == 4  # the four performance runs, not the TEST06 or accuracy logs


def test_versions_fitting_several_rounds_choose_the_latest_and_say_so(v51_tree: Path, tmp_path: Path) -> None:
    # 6.0.3 is a 6.0.x series release (v6.0 and v6.1 accept the series) that is no round's run release
    root = _copy_with_version(v51_tree, tmp_path, "6.0.3")
    d = detect_round(root)
    assert not d.clear
    assert d.round.name == "v6.1" and "v6.0, v6.1" in d.note and "--round" in d.note


def test_the_exact_release_decides_between_rounds_of_one_series(v51_tree: Path, tmp_path: Path) -> None:
    d = detect_round(_copy_with_version(v51_tree, tmp_path / "a", "6.0.15"))
    assert d.clear and d.round.name == "v6.0" and "6.0.15" in d.note
    d = detect_round(_copy_with_version(v51_tree, tmp_path / "b", "6.0.17"))
    assert d.clear and d.round.name == "v6.1"


def test_no_version_falls_back_to_the_latest_round(
    v51_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_with_version(v51_tree, tmp_path, None)
    d = detect_round(root)
    assert d.round.name == latest_round() and not d.clear and "no LoadGen version" in d.note
    code = cli.main([str(root)])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert f"round: {latest_round()} (no LoadGen version found" in out


def test_explicit_round_wins(v51_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy_with_version(v51_tree, tmp_path, "6.0.17")
    assert cli.main([str(root), "--round", "5.1", "--quiet"]) in (0, 1)
    capsys.readouterr()
    assert cli.main([str(root), "--round", "v5.1"]) in (0, 1)
    out = capsys.readouterr().out
    assert "round v5.1" in out and "round: " not in out
