"""How a command stops when it is told to: SIGTERM unwinds as Ctrl-C does, and a test process ends with its runner.

A batch scheduler, ``kill PID`` or a container's stop sends SIGTERM to the command's process alone. Left to its
default, SIGTERM would end the runner at once: no run record, and the LoadGen test process it started left running
until its own deadline (for the README's 3-second trial, 22 minutes later). As an interrupt it stops the test
process and keeps a record of what ran, as Ctrl-C does; the command then exits 143 (128 + SIGTERM), not 130.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterator

PARENT_ENV = "INFERENCE_AUDIT_RUNNER_PID"  # the runner's pid, for the test process's end_with_runner
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be: every handler of an interrupt handles it."""


def how_stopped(exc: KeyboardInterrupt) -> str:
    """What stopped the command, for its messages and its run record: ``SIGTERM`` or ``Ctrl-C``."""
    return "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"


def exit_status(exc: KeyboardInterrupt) -> int:
    return 128 + signal.SIGTERM if isinstance(exc, Terminated) else 130


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread; outside it, the handler before."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def end_with_runner() -> None:
    """In a LoadGen test process: SIGTERM stops it as SIGINT does, and on Linux so does its runner's death (a
    SIGKILL or an out-of-memory kill, which no handler of the runner sees), so that it never outlives the run.

    The kernel sends the parent-death signal when the thread that started this process ends; the runner starts
    tests from its main thread, which lives as long as the command."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0) != 0:
            return
    runner = os.environ.get(PARENT_ENV, "")
    if runner.isdigit() and os.getppid() != int(runner):  # the runner died before the signal was set
        raise KeyboardInterrupt
