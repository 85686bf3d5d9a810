"""``inference-audit check`` is ``check-submission``: same options, same reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from checker.cli import check as cli
from loadgen_sut import cli as top_cli


@pytest.fixture(scope="module")
def redhat(v51_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("redhat") / "tree"
    shutil.copytree(v51_tree / "closed" / "RedHat", root / "closed" / "RedHat")
    return root


def test_inference_audit_check_is_the_same_command(
    redhat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert top_cli.main(["check", str(redhat), "--round", "v5.1", "--json", str(tmp_path / "a.json")]) == 0
    assert cli.main([str(redhat), "--round", "v5.1", "--json", str(tmp_path / "b.json")]) == 0
    capsys.readouterr()
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert a == b
