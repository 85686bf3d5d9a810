"""Linux timer slack for the thread that runs LoadGen's Server issue loop.

LoadGen issues each Server query with ``std::this_thread::sleep_until(scheduled_time)`` on the thread that
called ``StartTest`` (``issue_query_controller.cc``, ``QueryScheduler<Server>::Wait``), and TTFT is measured
from the scheduled time. Linux lets a sleeping thread wake up to its *timer slack* late (50 µs by default) so
that wake-ups can be batched; every query then starts up to that much late. Measured here with a Python SUT
that reports the first token inside the issue callback (``bench/loadgen_floor.py``, 50 req/s): TTFT p50
0.26-0.35 ms with the default slack, 0.22 ms with 1 ns. Best effort: other systems keep their default.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_TIMERSLACK = 29  # <linux/prctl.h>
PR_GET_TIMERSLACK = 30


def _prctl(option: int, arg: int = 0) -> int | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def tighten_timer_slack(slack_ns: int = 1) -> bool:
    """Set the calling thread's timer slack; True when the kernel took it."""
    return _prctl(PR_SET_TIMERSLACK, slack_ns) == 0


def timer_slack_ns() -> int | None:
    """The calling thread's timer slack, None where it cannot be read."""
    value = _prctl(PR_GET_TIMERSLACK)
    return value if value is not None and value >= 0 else None
