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


def test_an_internal_error_of_any_command_is_exit_3_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 21: a bug of this tool is exit 3 with one sanitised line (the traceback with --debug), in every command,
    never the exit code of a verdict (1)."""
    import checker.cli.table as table_cli
    from loadgen_sut.cli import main

    def boom(args: object) -> int:
        raise RuntimeError("boom \x1b]0;title\x07")

    monkeypatch.setattr(table_cli, "run", boom)
    assert main(["table", "x.json"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (RuntimeError: boom" in err and "--debug" in err
    assert "\x1b" not in err and "\x07" not in err
    assert main(["table", "x.json", "--debug"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "\x1b" not in err
