"""CPU time of a process tree over a wall-clock window, sampled from /proc (Linux).

A background thread samples, every ``interval_s``, the summed user+system time of a process and all its live
descendants (threads included; children that exited and were reaped count through the parent's cutime/cstime).
:meth:`TreeCpuSampler.cpu_s_between` interpolates the samples at two wall-clock instants, so a client's CPU can
be charged for exactly the interval in which the server saw its requests, without its start-up and shut-down.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from pathlib import Path

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _stat_cpu_s(pid: int) -> float:
    """utime + stime + cutime + cstime of one process in seconds; 0 when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = raw[raw.rfind(")") + 2 :].split()
    # fields[0] is the state (field 3 of proc(5)); utime..cstime are fields 14..17
    return sum(int(f) for f in fields[11:15]) * _TICK_S


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
        except OSError:
            continue
        out.extend(int(c) for c in text.split())
    return out


def tree_cpu_s(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants."""
    total = 0.0
    stack = [root]
    seen: set[int] = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _stat_cpu_s(pid)
        stack.extend(_children(pid))
    return total


class TreeCpuSampler:
    """Samples ``tree_cpu_s(pid)`` with wall-clock timestamps until stopped."""

    def __init__(self, pid: int, interval_s: float = 0.25) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.times_ns: list[int] = []
        self.cpu_s: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"cpu-sampler-{pid}", daemon=True)

    def start(self) -> TreeCpuSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            value = tree_cpu_s(self.pid)
            self.times_ns.append(time.time_ns())
            self.cpu_s.append(value)
            if self._stop.wait(self.interval_s):
                return

    def _at(self, t_ns: int) -> float | None:
        times = self.times_ns
        if not times or t_ns < times[0] or t_ns > times[-1]:
            return None
        i = bisect_left(times, t_ns)
        if times[i] == t_ns or i == 0:
            return self.cpu_s[i]
        t0, t1 = times[i - 1], times[i]
        c0, c1 = self.cpu_s[i - 1], self.cpu_s[i]
        return c0 + (c1 - c0) * (t_ns - t0) / (t1 - t0)

    def cpu_s_between(self, start_ns: int, end_ns: int) -> float | None:
        """Interpolated CPU seconds spent between two wall-clock instants; None when not covered by samples."""
        a = self._at(start_ns)
        b = self._at(end_ns)
        if a is None or b is None:
            return None
        return max(0.0, b - a)
