"""What one LoadGen test will issue and how long it should take (:func:`planned_load`), and its live progress:
issued/completed against the plan, an ETA, current QPS, TTFT/TPOT p99 so far.

The plan comes from the effective LoadGen settings (read back from LoadGen, with a compliance test's audit.config
on top): the minimum duration, the rate LoadGen schedules at (Server ``target_qps``, Offline ``expected_qps``,
SingleStream's expected latency), ``min_query_count`` and the data set's size. The runner prints it before each test
and the whole run's sum before the first; the test process uses the same function for the progress line's ETA.

Latencies here are client-side (from LoadGen's issue callback to the engine's first token /
completion), shown with their sample counts; LoadGen's own numbers (measured from the scheduled
time) are in ``mlperf_log_summary.txt`` at the end. One line every ``interval_s``: on a terminal
the line is rewritten in place (``\\r``); anywhere else (a log file, CI) each is a plain line of its own, with no
carriage return or escape sequence.

The line is written here rather than with a progress-bar library (tqdm, rich): it is read from another thread's
counters every few seconds, its fields (p99s with their counts, the current rate) are not a bar's, and off a
terminal those libraries either write carriage returns into the log or nothing at all.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TextIO

from loadgen_sut.settings import TestMode, TestSettingsModel
from loadgen_sut.sut import SutStats, percentile_with_count
from rules.models import Scenario

FIND_PEAK_RUNS = 10  # find-peak runs LoadGen's test several times (a binary search)
OFFLINE_MARGIN = 1.1  # LoadGen sizes the Offline query from min_duration x expected QPS x 1.1


@dataclass(frozen=True)
class PlannedLoad:
    """What one LoadGen test will issue, the engine keeping up with the rate LoadGen schedules."""

    test: str
    mode: TestMode
    scenario: Scenario  # LoadGen's scenario (Interactive runs as Server)
    label: str  # the round's scenario as the plan names it ("Interactive (LoadGen Server)")
    rate_qps: float  # the rate LoadGen's schedule assumes
    rate_source: str  # where it comes from ("target_qps", "expected_qps", "expected latency", or the fallback)
    min_duration_s: float
    min_query_count: int
    samples: int | None  # samples it issues (Server/SingleStream: about, the schedule is random); None: not known
    duration_s: float  # how long it should take
    audit: bool  # min_duration and min_query_count are the compliance test's audit.config's

    @property
    def paced(self) -> bool:
        """LoadGen issues on a schedule (Server, SingleStream) rather than all at once (Offline)."""
        return self.scenario is not Scenario.OFFLINE

    def describe(self) -> str:
        """One line: the rate and its source, the minimums, the query count and the estimated time."""
        rate = f"{self.rate_qps:g} quer{'y' if self.rate_qps == 1 else 'ies'}/s ({self.rate_source})"
        estimate = f"{about(self.duration_s)} at that rate"
        if self.mode is TestMode.ACCURACY_ONLY:
            return f"{self.label}: every one of the {self.samples} samples once at {rate}: {estimate}"
        if self.mode is TestMode.FIND_PEAK_PERFORMANCE:
            return f"{self.label}: up to {FIND_PEAK_RUNS} LoadGen runs from {rate}: up to {format_duration(self.duration_s)} at that rate"
        where = " (its audit.config)" if self.audit else ""
        minimums = f"min_duration {self.min_duration_s:g} s, min_query_count {self.min_query_count}{where}"
        if self.scenario is Scenario.OFFLINE:
            return f"Offline at {rate}, {minimums}: one query of {self.samples} samples, {estimate}"
        return f"{self.label} at {rate}, {minimums}: ~{self.samples} queries, {estimate}"


def format_duration(seconds: float) -> str:
    """``42 s``, ``10 min``, ``12 min 5 s``, ``3 h 43 min`` (under a second: ``under 1 s``)."""
    if seconds < 1:
        return "under 1 s"
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    if m:
        return f"{m} min {sec} s" if sec else f"{m} min"
    return f"{sec} s"


def about(seconds: float) -> str:
    """An estimate in words: ``about 10 min``, ``under 1 s``."""
    return format_duration(seconds) if seconds < 1 else f"about {format_duration(seconds)}"


def audit_overrides(text: str) -> dict[str, str]:
    """The ``*.*.key = value`` lines of an audit.config, by key (a compliance test's settings over the user.conf)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        key = key.strip()
        if sep and key.startswith("*.*.") and not key.startswith("#"):
            out[key[len("*.*.") :]] = value.strip()
    return out


def _rate(settings: TestSettingsModel) -> tuple[float, str]:
    """The rate LoadGen schedules at, and where it comes from; an unusable one counts as 1 query/s."""
    scn = settings.loadgen_scenario
    if scn is Scenario.SERVER:
        value, source = settings.server_target_qps, "target_qps"
    elif scn is Scenario.OFFLINE:
        value, source = settings.offline_expected_qps, "expected_qps"
    else:
        lat = settings.single_stream_expected_latency_ns
        value, source = (1e9 / lat if lat else None), "1 / expected latency"
    if value is None or not math.isfinite(value) or value <= 0:
        return 1.0, f"{source} not set: counted as 1"
    return value, source


def planned_load(
    settings: TestSettingsModel, n_samples: int, audit: Mapping[str, str] | None = None, test: str = ""
) -> PlannedLoad:
    """The plan of one LoadGen test with these (read-back) settings on a data set of ``n_samples``.

    Accuracy: every sample once at the scenario's rate. Performance: the longer of the minimum duration and the
    minimum query count at that rate; Offline sizes its one query from min_duration x expected QPS x 1.1.
    ``audit`` (:func:`audit_overrides`): a compliance test's min_duration / min_query_count. find-peak runs the test
    up to :data:`FIND_PEAK_RUNS` times.
    """
    audit = audit or {}
    qps, source = _rate(settings)
    min_s = float(audit.get("min_duration", settings.min_duration_ms)) / 1000.0
    queries = int(audit.get("min_query_count", settings.min_query_count))
    scn = settings.loadgen_scenario
    base = PlannedLoad(
        test=test,
        mode=settings.mode,
        scenario=scn,
        label=settings.scenario.value + ("" if settings.scenario is scn else f" (LoadGen {scn.value})"),
        rate_qps=qps,
        rate_source=source,
        min_duration_s=min_s,
        min_query_count=queries,
        samples=None,
        duration_s=0.0,
        audit=bool({"min_duration", "min_query_count"} & set(audit)),
    )
    if settings.mode is TestMode.ACCURACY_ONLY:
        samples = settings.accuracy_sample_count or n_samples
        return replace(base, samples=samples, duration_s=samples / qps)
    if scn is Scenario.OFFLINE:
        samples = max(queries, math.ceil(min_s * qps * OFFLINE_MARGIN))
        expected = max(min_s * OFFLINE_MARGIN, samples / qps)
    else:
        samples = max(queries, math.ceil(min_s * qps))
        expected = max(min_s, samples / qps)
    if settings.max_duration_ms:
        expected = min(expected, settings.max_duration_ms / 1000.0)
    if settings.mode is TestMode.FIND_PEAK_PERFORMANCE:
        return replace(base, duration_s=expected * FIND_PEAK_RUNS)
    return replace(base, samples=samples, duration_s=expected)


def eta_s(plan: PlannedLoad, completed: int, elapsed_s: float) -> float | None:
    """Seconds left: the longer of what the schedule has left (Server, SingleStream) and the remaining samples at
    the rate they have completed so far; None when neither is known yet (Offline before its first completion)."""
    if plan.samples is None:
        return None
    left = max(0, plan.samples - completed)
    by_count = left * elapsed_s / completed if completed and elapsed_s > 0 else None
    by_time = max(0.0, plan.duration_s - elapsed_s) if plan.paced else None
    known = [x for x in (by_count, by_time) if x is not None]
    return max(known) if known else None


def _fmt_ms(value: float | None, n: int) -> str:
    return "n/a (n=0)" if value is None else f"{value:.1f} ms (n={n})"


def _against_plan(plan: PlannedLoad | None, completed: int, elapsed_s: float) -> str:
    if plan is None or plan.samples is None:
        return ""
    pct = min(100, round(100 * completed / plan.samples)) if plan.samples else 100
    eta = eta_s(plan, completed, elapsed_s)
    return f" of {'~' if plan.paced else ''}{plan.samples} ({pct}%), ETA {'?' if eta is None else format_duration(eta)}"


def progress_line(
    label: str, stats: SutStats, now_ns: int, window: tuple[int, int], plan: PlannedLoad | None = None
) -> str:
    """One status line; ``window`` = (completed, time_ns) at the previous line for the current QPS."""
    elapsed_s = (now_ns - stats.started_ns) / 1e9
    prev_done, prev_ns = window
    dt = (now_ns - prev_ns) / 1e9
    qps = (stats.completed - prev_done) / dt if dt > 0 else 0.0
    ttft, n_ttft = percentile_with_count(stats.ttft_ms, 99)
    tpot, n_tpot = percentile_with_count(stats.tpot_ms, 99)
    failed = f" FAILED {stats.failed}" if stats.failed else ""
    return (
        f"[{label}] {elapsed_s:6.1f}s issued {stats.issued} completed {stats.completed}"
        f"{_against_plan(plan, stats.completed, elapsed_s)}{failed} | "
        f"{qps:.1f} QPS | TTFT p99 {_fmt_ms(ttft, n_ttft)} | TPOT p99 {_fmt_ms(tpot, n_tpot)}"
    )


class Progress:
    def __init__(
        self,
        label: str,
        stats: SutStats,
        interval_s: float = 5.0,
        stream: TextIO | None = None,
        plan: PlannedLoad | None = None,
    ) -> None:
        self._label = label
        self._stats = stats
        self._interval = interval_s
        self._plan = plan
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
        line = progress_line(self._label, self._stats, now, self._window, None if final else self._plan)
        self._window = (self._stats.completed, now)
        if self._tty and not final:
            self._stream.write("\r" + line + "\x1b[K")
        else:
            self._stream.write(("\r" + line + "\x1b[K\n") if self._tty else (line + "\n"))
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
