"""Paths `run` cannot use are refused before any work, exit 2 naming them: a loop of symbolic links (Path.resolve raises
RuntimeError for a loop: it was exit 3), an --out that is a file or a device (refused only after the data set was read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loadgen_sut.cli import main

RUN = ["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--round", "v6.1"]


@pytest.mark.parametrize("option", ["--out", "--user-conf", "--tokenizer"])
def test_a_symlink_loop_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    monkeypatch.chdir(tmp_path)
    os.symlink("loop", "loop")
    argv = [*RUN, option, "loop"] + ([] if option == "--out" else ["--out", "out"])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "loop: cannot resolve the path" in err and "internal error" not in err
    assert not Path("out").exists()


@pytest.mark.parametrize("out", ["afile", "/dev/null"])
def test_an_out_that_is_no_directory_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("mine\n")
    assert main([*RUN, "--out", out]) == 2
    captured = capsys.readouterr()
    assert "--out must be a directory or a new name; it is a " in captured.err
    assert captured.out == ""  # before the settings and the data set are read and echoed
    assert Path("afile").read_text() == "mine\n"
