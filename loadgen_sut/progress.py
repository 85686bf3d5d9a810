"""Live progress of one LoadGen test: issued/completed, current QPS, TTFT/TPOT p99 so far.

Latencies here are client-side (from LoadGen's issue callback to the engine's first token /
completion), shown with their sample counts; LoadGen's own numbers (measured from the scheduled
time) are in ``mlperf_log_summary.txt`` at the end. One line every ``interval_s`` — on a terminal
the line is rewritten in place.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from loadgen_sut.sut import SutStats, percentile_with_count


def _fmt_ms(value: float | None, n: int) -> str:
    return "n/a (n=0)" if value is None else f"{value:.1f} ms (n={n})"


def progress_line(label: str, stats: SutStats, now_ns: int, window: tuple[int, int]) -> str:
    """One status line; ``window`` = (completed, time_ns) at the previous line for the current QPS."""
    elapsed_s = (now_ns - stats.started_ns) / 1e9
    prev_done, prev_ns = window
    dt = (now_ns - prev_ns) / 1e9
    qps = (stats.completed - prev_done) / dt if dt > 0 else 0.0
    ttft, n_ttft = percentile_with_count(stats.ttft_ms, 99)
    tpot, n_tpot = percentile_with_count(stats.tpot_ms, 99)
    failed = f" FAILED {stats.failed}" if stats.failed else ""
    return (
        f"[{label}] {elapsed_s:6.1f}s issued {stats.issued} completed {stats.completed}{failed} | "
        f"{qps:.1f} QPS | TTFT p99 {_fmt_ms(ttft, n_ttft)} | TPOT p99 {_fmt_ms(tpot, n_tpot)}"
    )


class Progress:
    def __init__(self, label: str, stats: SutStats, interval_s: float = 5.0, stream: TextIO | None = None) -> None:
        self._label = label
        self._stats = stats
        self._interval = interval_s
        self._stream = stream or sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
        self._window = (0, time.perf_counter_ns())

    def start(self) -> None:
        if self._interval > 0:
            self._thread.start()

    def _emit(self, final: bool = False) -> None:
        now = time.perf_counter_ns()
        line = progress_line(self._label, self._stats, now, self._window)
        self._window = (self._stats.completed, now)
        if self._tty and not final:
            self._stream.write("\r" + line + "\x1b[K")
        else:
            self._stream.write(("\r" if self._tty else "") + line + "\n")
        self._stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._emit()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self._interval > 0:
            self._window = (0, self._stats.started_ns)
            self._emit(final=True)
