"""A run told to stop by a signal sent to its command alone (a batch scheduler's SIGTERM, ``kill PID``, an OOM kill):
it keeps a record of what ran and never leaves its LoadGen test process behind (loadgen_sut/interrupts.py).

Each test starts ``inference-audit run`` in a session of its own, so that only the command's process gets the
signal, as from a scheduler (Ctrl-C, which reaches the whole process group, is test_run_findings'), and waits until
the LoadGen test process runs under it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadgen_sut.record import RECORD_FILE


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_run(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A 60-second simulated Server trial; returns it and its LoadGen test process, once that runs."""
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Server.target_qps = 20\n*.Server.min_duration = 60000\n")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "simulated", "--benchmark", "llama3.1-8b",
           "--scenario", "Server", "--round", "v6.1", "--user-conf", str(conf), "--sim-ttft-ms", "5",
           "--sim-tpot-ms", "1", "--out", str(tmp_path / "out")]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for child in _children(proc.pid):
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes() if _alive(child) else b""
            if b"loadgen_sut.lgtest" in cmdline:
                time.sleep(3)  # past the test process's start: LoadGen runs
                return proc, child
        assert proc.poll() is None, "the run ended before its test process started"
        time.sleep(0.1)
    proc.kill()
    pytest.fail("no LoadGen test process started within 120 s")


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow  # a test process's start and stop: about 10 s on 2 cores
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_to_the_command_writes_the_record_and_stops_the_test(tmp_path: Path) -> None:
    proc, test_pid = _start_run(tmp_path)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(90) == 128 + signal.SIGTERM
    assert _gone_within(test_pid, 5), "the LoadGen test process outlived the run"
    (record,) = (tmp_path / "out" / "runs").glob("*/" + RECORD_FILE)
    verdict = json.loads(record.read_text())["verdict"]
    assert verdict["status"] == "INCOMPLETE"
    (stopped,) = [f for f in verdict["findings"] if f["rule"] == "RUN-INTERRUPTED"]
    assert stopped["message"] == "interrupted (SIGTERM) before every test finished"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_the_test_process_ends_when_the_command_is_killed(tmp_path: Path) -> None:
    proc, test_pid = _start_run(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)  # no handler sees this: the kernel tells the test process
    proc.wait(10)
    try:
        assert _gone_within(test_pid, 30), "the LoadGen test process outlived its killed runner"
    finally:
        if _alive(test_pid):
            os.kill(test_pid, signal.SIGKILL)
