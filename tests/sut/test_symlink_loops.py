"""A path that is a loop of symbolic links is unusable input of `run`, exit 2 naming it (Path.resolve raises
RuntimeError for a loop: it was exit 3)."""

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
