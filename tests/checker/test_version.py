"""Every report names the installed inference-audit version, from checker.version."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from checker.engine import check_tree
from checker.version import UNKNOWN_VERSION, tool_version
from rules.registry import load_round


def test_tool_version_is_the_installed_distribution() -> None:
    try:
        expected = metadata.version("inference-audit")
    except metadata.PackageNotFoundError:
        expected = UNKNOWN_VERSION
    assert tool_version() == expected


def test_check_report_carries_it(tmp_path: Path) -> None:
    (tmp_path / "closed").mkdir()
    report = check_tree(tmp_path, load_round("v5.1"), workers=1)
    assert report.tool_version == tool_version()
