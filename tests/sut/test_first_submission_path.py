"""The documented first submission (docs/run.md, "Your server → a trial tree → its check") runs as written.

The commands are read from that section's console block exactly as ``tests/test_readme_commands.py`` reads them
(continuation lines joined, ``$`` prompts stripped), and run one by one in a scratch directory laid out like a fresh
clone, the token server in the background as the page shows it (``&``). Each command must exit as the page says, and
the output lines the page shows (``...`` skips lines, ``…`` skips text within a line) must come in that order, the
last one last. The whole path must take under 5 minutes (it takes about one on 2 cores).

``examples/token-server-tokenizer`` (the path's tokenizer) must be what ``bench/peers/make_tokenizer.py`` writes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fresh_clone import link_fresh_clone
from tests.test_readme_commands import REPO, doc_commands

DOC = REPO / "docs" / "run.md"
HEADING = "## Your server → a trial tree → its check"
PATH_BUDGET_S = 300.0  # the goal: a checked trial tree in <= 5 minutes on 2 cores
SERVER_PORT = 8011  # bench/token_server.py's default, which the page's --endpoint uses


def path_block() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown after it) for each ``$`` line of the section's console block."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(HEADING)
    match = re.search(r"```console\n(.*?)```", text[start:], re.S)
    assert match, f"{DOC}: no console block under {HEADING!r}"
    steps: list[tuple[str, list[str]]] = []
    cont = False
    for line in match.group(1).splitlines():
        if cont:
            steps[-1] = (steps[-1][0][:-1] + " " + line.strip(), [])
        elif line.startswith("$ "):
            steps.append((line[2:].rstrip(), []))
        else:
            steps[-1][1].append(line)
        cont = steps[-1][0].endswith("\\")
    return steps


def _line_pattern(shown: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in shown.split("…")))


def _shown_in_order(shown: list[str], output: str) -> str | None:
    """None when the shown lines (``...``: any lines) appear in ``output`` in order, the last shown line last; else
    the first line that does not."""
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip()]
    at = 0
    for i, want in enumerate(shown):
        if want == "...":
            continue
        pattern = _line_pattern(want)
        last = i == len(shown) - 1
        candidates = [len(lines) - 1] if last else range(at, len(lines))
        found = next((k for k in candidates if k >= at and pattern.fullmatch(lines[k])), None)
        if found is None:
            return want
        at = found + 1
    return None


def _exit_shown(shown: list[str]) -> int:
    """The exit code the page gives in a command's last shown line (``(exit N)``); 0 when it shows none."""
    tail = next((ln for ln in reversed(shown) if ln != "..."), "")
    m = re.search(r"\(exit (\d+)\)$", tail)
    return int(m.group(1)) if m else 0


def test_the_path_is_the_commands_the_readme_test_reads() -> None:
    """Both tests read the same commands from the page (tests/test_readme_commands.py classifies each)."""
    commands = [cmd for cmd, _ in path_block()]
    assert commands[0] == "python3 bench/token_server.py &"
    read = doc_commands(DOC)
    positions = [read.index(c) for c in commands]
    assert positions == sorted(positions), "the README test reads the path's commands in another order"
    assert any(c.startswith("inference-audit run ") and "--mode submission-trial" in c for c in commands)
    assert commands[-1].startswith("check-submission ")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_documented_first_submission_path_runs_as_written(tmp_path: Path) -> None:
    if not _port_free(SERVER_PORT):
        pytest.fail(f"port {SERVER_PORT} is taken: the documented path starts bench/token_server.py on it")
    work = tmp_path / "checkout"
    work.mkdir()
    link_fresh_clone(work)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    background: list[subprocess.Popen[bytes]] = []
    began = time.monotonic()
    timings: list[str] = []
    try:
        for cmd, shown in path_block():
            t0 = time.monotonic()
            if cmd.endswith(" &"):
                background.append(
                    subprocess.Popen(
                        ["bash", "-c", cmd.removesuffix("&").strip()],
                        cwd=work,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
                continue
            proc = subprocess.run(
                ["bash", "-c", cmd],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=PATH_BUDGET_S,
                check=False,
            )
            out = proc.stdout
            timings.append(f"{time.monotonic() - t0:.1f}s {cmd[:60]}")
            assert "Traceback" not in out, f"{cmd}\n{out[-3000:]}"
            want = _exit_shown(shown)
            assert proc.returncode == want, (
                f"{cmd}\n exited {proc.returncode}, the page says {want}:\n{out[-3000:]}"
            )
            missing = _shown_in_order(shown, out)
            assert missing is None, (
                f"{cmd}\n does not print {missing!r} where the page shows it:\n{out[-3000:]}"
            )
    finally:
        for server in background:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(10)
    elapsed = time.monotonic() - began
    assert elapsed < PATH_BUDGET_S, f"the path took {elapsed:.0f} s: " + "; ".join(timings)
    print(f"documented first-submission path: {elapsed:.1f} s ({'; '.join(timings)})")
    assert list((work / "first-trial" / "trial-submission").rglob("accuracy.txt"))


def test_committed_tokenizer_is_what_make_tokenizer_writes(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    made = tmp_path / "tok"
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "peers" / "make_tokenizer.py"), str(made)],
        check=True,
        capture_output=True,
    )
    committed = REPO / "examples" / "token-server-tokenizer"
    names = sorted(p.name for p in committed.iterdir())
    assert names == sorted(p.name for p in made.iterdir())
    for name in names:
        assert json.loads((committed / name).read_text()) == json.loads((made / name).read_text()), name


def test_token_server_help_shows_defaults_and_its_model() -> None:
    help_text = subprocess.run(
        [sys.executable, str(REPO / "bench" / "token_server.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "1000"},  # one line per option: no word broken at a hyphen
    ).stdout
    assert "(default: token-server)" in help_text and "(default: 8011)" in help_text
    assert "model id 'token-server'" in help_text and "examples/token-server-tokenizer" in help_text
