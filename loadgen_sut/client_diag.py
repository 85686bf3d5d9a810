"""Client self-diagnostics of one LoadGen test, and the CLIENT-BOUND verdict.

A LoadGen SUT is a client: LoadGen's threads, one event loop (``loadgen_sut.sut``) and the engine's HTTP client, in
one process. When that process cannot keep up (a CPU hog beside it, a loop doing too much per sample, a concurrency
cap), what LoadGen measures is the client, not the system under test. The test process measures, in every test:

- **dispatch lag**, per sample, from the timeline (``sut_timeline.jsonl``): ``dispatched_ns - issued_ns``, LoadGen's
  issue callback to the request's bytes handed to the socket. It holds the hop to the loop thread, the engine's work
  before the write, a TCP connect when no kept-alive connection was free, and the wait for a free concurrency slot
  (``--max-concurrency``). In-process engines (simulated, transformers) have no socket: count 0, not measured.
- **receive lag**, a probe: a Linux ``timerfd`` on the SUT's loop becomes readable every :data:`PROBE_INTERVAL_MS`
  at a known time; the lag is when the loop's reader callback for it ran minus that time. A response chunk readable
  on an engine socket waits in the same epoll set behind the same loop, so this is the delay the SUT adds between
  "bytes readable" and "bytes handled". It is not measured per response: the moment a TCP segment became readable
  is not visible to the event loop's transports. None where ``timerfd`` is not available (not Linux).
- **event-loop lag**, a probe: a timer re-armed every :data:`PROBE_INTERVAL_MS` on the loop; its lateness.
  (uvloop's timers have a 1 ms resolution: a healthy loop shows p99 of about 1 ms.)
- **CPU**: the process's CPU time over the test's wall time (cores' worth), the CPUs it may use, the loop
  thread's CPU time and its time runnable-but-waiting for a CPU (``/proc/self/task/<tid>/schedstat``), the
  process's involuntary context switches, and each usable CPU's busy share from ``/proc/stat`` (any process).

Each probe wakes the loop once per interval (measured: about 40 us of CPU a wake-up on an idle loop; the two
probes, 80 wake-ups a second: about 0.3 % of one core, whatever the load).

:func:`client_bound_reasons` judges them (thresholds below; docs/run.md "Client self-diagnostics" justifies them).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import resource
import sys
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding
from loadgen_sut.record import ClientDiagnostics, LagStats, WorkerDiagnostics
from loadgen_sut.settings import TestSettingsModel
from loadgen_sut.timeline import NOT_MEASURED, TimelineColumns
from rules.models import Scenario

if TYPE_CHECKING:
    from loadgen_sut.client_workers import WorkerPool

# an ERROR of this rule makes the run CLIENT_BOUND, never VALID (loadgen_sut.record.verdict_status)
RULES = register(
    __name__,
    RuleInfo(
        "RUN-CLIENT-BOUND", "-", "the client (this harness on this machine), not the system under test, limited the "
        "measurement: its delays or CPU",
        fix="give the SUT process CPUs of its own (nothing else busy on them), fewer samples per second per "
        "process, or a higher --max-concurrency when dispatch waited for a slot",
    ),
)

PROBE_INTERVAL_MS = 25.0

# --- CLIENT-BOUND thresholds (docs/run.md "Client self-diagnostics" says why) ---
LATENCY_SHARE = 0.05
"""A client delay p99 at or above this share of the scenario's latency limit (the TTFT limit with token latencies,
else the target latency) is CLIENT-BOUND: it is added to LoadGen's TTFT at the tail, where the limit is judged."""
NO_LIMIT_LAG_MS = 100.0
"""The delay limit where the scenario has no latency limit (Offline; SingleStream, whose expected latency is only
LoadGen's hint for sizing the test): 5 % of the 2 s TTFT limit of the Server scenarios of llama2-70b and
llama3.1-8b."""
MIN_LAG_LIMIT_MS = 5.0
"""The delay limit is never below this (five times a healthy loop's p99)."""
LOOP_CPU_SATURATED = 0.90
"""The loop thread busy at least this share of one core over the test: the single-threaded loop was the
bottleneck (at 90 % utilisation a queue's mean wait is 9 service times)."""
MIN_COUNT = 20
"""Dispatch lags over fewer samples than this are reported, not judged (a p99 of under 20 values is their maximum);
the probes are judged when the test lasted this many probe intervals, however few probes ran (a starved loop runs
fewer: each came late)."""
SATURATED_BUSY = 0.95

_CLOCK = time.CLOCK_MONOTONIC


def lag_stats(values_ns: Sequence[int] | np.ndarray) -> LagStats:
    arr = np.asarray(values_ns, dtype=np.float64)
    if arr.size == 0:
        return LagStats()
    p50, p99 = np.percentile(arr, [50, 99])
    return LagStats(p50_ms=float(p50) / 1e6, p99_ms=float(p99) / 1e6, max_ms=float(arr.max()) / 1e6, count=int(arr.size))


def dispatch_lags_ns(columns: TimelineColumns) -> np.ndarray:
    """``dispatched - issued`` of every sample that was dispatched (ns)."""
    issued = np.frombuffer(columns.issued, dtype=np.int64) if len(columns) else np.zeros(0, np.int64)
    dispatched = np.frombuffer(columns.dispatched, dtype=np.int64) if len(columns) else np.zeros(0, np.int64)
    sent = dispatched != NOT_MEASURED
    lags: np.ndarray = dispatched[sent] - issued[sent]
    return lags


# ---------------------------------------------------------------- probes on the loop


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _timespec(ns: int) -> _Timespec:
    return _Timespec(ns // 1_000_000_000, ns % 1_000_000_000)


def _timerfd(first_ns: int, interval_ns: int) -> int | None:
    """A non-blocking CLOCK_MONOTONIC timerfd expiring at ``first_ns`` and every ``interval_ns`` after (None: none)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        create, settime = libc.timerfd_create, libc.timerfd_settime
    except (OSError, AttributeError):
        return None
    fd = int(create(_CLOCK, os.O_NONBLOCK | os.O_CLOEXEC))  # TFD_NONBLOCK, TFD_CLOEXEC share their values
    if fd < 0:
        return None
    spec = _Itimerspec(_timespec(interval_ns), _timespec(first_ns))
    if settime(fd, 1, ctypes.byref(spec), None) != 0:  # 1: TFD_TIMER_ABSTIME
        os.close(fd)
        return None
    return fd


class LoopProbes:
    """The event-loop and receive-lag probes; :meth:`install` and :meth:`remove` run on the loop's thread."""

    def __init__(self, interval_ms: float = PROBE_INTERVAL_MS) -> None:
        self.interval_ns = int(interval_ms * 1e6)
        self.loop_lags_ns = array("q")
        self.receive_lags_ns: array[int] | None = None  # None: no timerfd
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0
        self._fd: int | None = None
        self._first_ns = 0
        self._expired = 0

    def install(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        now = time.clock_gettime_ns(_CLOCK)
        self._due = now + self.interval_ns
        self._handle = loop.call_later(self.interval_ns / 1e9, self._tick)
        self._first_ns = now + self.interval_ns + self.interval_ns // 2  # half a period after the timer's
        self._fd = _timerfd(self._first_ns, self.interval_ns)
        if self._fd is not None:
            self.receive_lags_ns = array("q")
            loop.add_reader(self._fd, self._readable)

    def _tick(self) -> None:
        now = time.clock_gettime_ns(_CLOCK)
        self.loop_lags_ns.append(max(0, now - self._due))
        self._due = now + self.interval_ns
        assert self._loop is not None
        self._handle = self._loop.call_later(self.interval_ns / 1e9, self._tick)

    def _readable(self) -> None:
        now = time.clock_gettime_ns(_CLOCK)
        assert self._fd is not None and self.receive_lags_ns is not None
        try:
            data = os.read(self._fd, 8)
        except (BlockingIOError, InterruptedError):
            return
        due = self._first_ns + self._expired * self.interval_ns  # when the fd became readable: the first unread expiry
        self._expired += int.from_bytes(data, sys.byteorder)
        self.receive_lags_ns.append(max(0, now - due))

    def remove(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._fd is not None:
            if self._loop is not None:
                self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------- CPU


def _cpu_times(cpus: Sequence[int]) -> dict[int, tuple[int, int]] | None:
    """``/proc/stat``: (busy, total) jiffies per CPU of ``cpus`` (None: not readable)."""
    try:
        lines = Path("/proc/stat").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    want = set(cpus)
    out: dict[int, tuple[int, int]] = {}
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        try:
            cpu = int(name[3:])
            vals = [int(v) for v in rest.split()]
        except ValueError:
            continue
        if cpu in want and len(vals) >= 4:
            total = sum(vals[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
            idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
            out[cpu] = (total - idle, total)
    return out


def _thread_sched(tid: int | None) -> tuple[int, int | None] | None:
    """(CPU ns, runnable-waiting ns) of a thread of this process: schedstat, else stat's ticks (no wait)."""
    if tid is None:
        return None
    base = Path(f"/proc/self/task/{tid}")
    try:
        run_ns, wait_ns, _ = (int(v) for v in (base / "schedstat").read_text(encoding="ascii").split()[:3])
        return run_ns, wait_ns
    except (OSError, ValueError):
        pass
    try:
        fields = (base / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    except (OSError, ValueError, IndexError):
        return None
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK"), None


def _usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class CpuSnapshot:
    wall_ns: int
    rusage: Any  # resource.struct_rusage
    loop_thread: tuple[int, int | None] | None
    machine: dict[int, tuple[int, int]] | None
    cpus: tuple[int, ...]

    @classmethod
    def take(cls, loop_tid: int | None) -> CpuSnapshot:
        cpus = tuple(_usable_cpus())
        return cls(
            wall_ns=time.clock_gettime_ns(_CLOCK),
            rusage=resource.getrusage(resource.RUSAGE_SELF),
            loop_thread=_thread_sched(loop_tid),
            machine=_cpu_times(cpus),
            cpus=cpus,
        )


def diagnostics(
    columns: TimelineColumns, probes: LoopProbes, before: CpuSnapshot, after: CpuSnapshot
) -> ClientDiagnostics:
    """The test's :class:`ClientDiagnostics` from its timeline, its probes and two CPU snapshots."""
    wall_s = max(1e-9, (after.wall_ns - before.wall_ns) / 1e9)
    r0, r1 = before.rusage, after.rusage
    cpu_s = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    loop_cpu = loop_wait = None
    if before.loop_thread is not None and after.loop_thread is not None:
        loop_cpu = (after.loop_thread[0] - before.loop_thread[0]) / 1e9 / wall_s
        w0, w1 = before.loop_thread[1], after.loop_thread[1]
        loop_wait = None if w0 is None or w1 is None else (w1 - w0) / 1e9 / wall_s
    busy = _busy_shares(before, after)
    return ClientDiagnostics(
        dispatch_lag=lag_stats(dispatch_lags_ns(columns)),
        receive_lag=None if probes.receive_lags_ns is None else lag_stats(probes.receive_lags_ns),
        loop_lag=lag_stats(probes.loop_lags_ns),
        probe_interval_ms=probes.interval_ns / 1e6,
        wall_s=wall_s,
        process_cpu_s=cpu_s,
        process_cpu_cores=cpu_s / wall_s,
        usable_cpus=len(after.cpus),
        loop_thread_cpu_fraction=loop_cpu,
        loop_thread_wait_fraction=loop_wait,
        involuntary_context_switches=int(r1.ru_nivcsw - r0.ru_nivcsw),
        machine_cpu_busy=busy,
        machine_cpu_saturated=(min(busy) >= SATURATED_BUSY) if busy else None,
    )


def _busy_shares(before: CpuSnapshot, after: CpuSnapshot) -> tuple[float, ...]:
    if before.machine is None or after.machine is None:
        return ()
    shares = []
    for cpu in after.cpus:
        if cpu in before.machine and cpu in after.machine:
            b = after.machine[cpu][0] - before.machine[cpu][0]
            t = after.machine[cpu][1] - before.machine[cpu][1]
            shares.append(round(b / t, 4) if t > 0 else 0.0)
    return tuple(shares)


def pool_diagnostics(pool: WorkerPool, before: CpuSnapshot, after: CpuSnapshot) -> ClientDiagnostics:
    """The test's :class:`ClientDiagnostics` with ``--client-workers``: each worker's (its report and its rows of the
    timeline), and in total: the lags over every worker, the CPU of the LoadGen process and every worker together,
    the loop thread's share that of the busiest worker. ``before``/``after``: the LoadGen process's snapshots, its
    reporter thread watched."""
    wall_s = max(1e-9, (after.wall_ns - before.wall_ns) / 1e9)
    r0, r1 = before.rusage, after.rusage
    lg_cpu_s = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    reporter = None
    if before.loop_thread is not None and after.loop_thread is not None:
        reporter = (after.loop_thread[0] - before.loop_thread[0]) / 1e9 / wall_s
    columns = pool.timeline
    lags = dispatch_lags_ns(columns)
    which = np.frombuffer(pool.timeline_workers, dtype=np.int8) if len(columns) else np.zeros(0, np.int8)
    dispatched = (np.frombuffer(columns.dispatched, dtype=np.int64) != NOT_MEASURED) if len(columns) else which == 0
    lag_worker = which[dispatched]
    workers: list[WorkerDiagnostics] = []
    loop_all: list[int] = []
    receive_all: list[int] = []
    have_receive = False
    cpu_total = lg_cpu_s
    interval_ms = PROBE_INTERVAL_MS
    for w in pool.workers:
        rep = w.report or {}
        receive = rep.get("receive_lags_ns")
        loop_lags = rep.get("loop_lags_ns")
        cpu = rep.get("process_cpu_s")
        if isinstance(cpu, (int, float)):
            cpu_total += cpu
        if isinstance(loop_lags, list):
            loop_all += loop_lags
        if isinstance(receive, list):
            receive_all += receive
            have_receive = True
        if isinstance(rep.get("probe_interval_ms"), (int, float)):
            interval_ms = float(rep["probe_interval_ms"])
        w_wall = rep.get("wall_s")
        workers.append(
            WorkerDiagnostics(
                worker=w.index,
                pid=w.proc.pid,
                samples=w.sent,
                died=w.died,
                dispatch_lag=lag_stats(lags[lag_worker == w.index]),
                receive_lag=lag_stats(receive) if isinstance(receive, list) else None,
                loop_lag=lag_stats(loop_lags) if isinstance(loop_lags, list) else None,
                process_cpu_s=cpu if isinstance(cpu, (int, float)) else None,
                process_cpu_cores=(cpu / w_wall) if isinstance(cpu, (int, float)) and w_wall else None,
                loop_thread_cpu_fraction=rep.get("loop_thread_cpu_fraction"),
                loop_thread_wait_fraction=rep.get("loop_thread_wait_fraction"),
                involuntary_context_switches=rep.get("involuntary_context_switches"),
            )
        )
    loop_cpus = [x.loop_thread_cpu_fraction for x in workers if x.loop_thread_cpu_fraction is not None]
    waits = [x.loop_thread_wait_fraction for x in workers if x.loop_thread_wait_fraction is not None]
    switches = int(r1.ru_nivcsw - r0.ru_nivcsw) + sum(x.involuntary_context_switches or 0 for x in workers)
    busy = _busy_shares(before, after)
    return ClientDiagnostics(
        dispatch_lag=lag_stats(lags),
        receive_lag=lag_stats(receive_all) if have_receive else None,
        loop_lag=lag_stats(loop_all),
        probe_interval_ms=interval_ms,
        wall_s=wall_s,
        process_cpu_s=cpu_total,
        process_cpu_cores=cpu_total / wall_s,
        usable_cpus=len(after.cpus),
        loop_thread_cpu_fraction=max(loop_cpus) if loop_cpus else None,
        loop_thread_wait_fraction=max(waits) if waits else None,
        involuntary_context_switches=switches,
        machine_cpu_busy=busy,
        machine_cpu_saturated=(min(busy) >= SATURATED_BUSY) if busy else None,
        client_workers=len(pool.workers),
        workers=tuple(workers),
        loadgen_process_cpu_s=lg_cpu_s,
        reporter_thread_cpu_fraction=reporter,
    )


# ---------------------------------------------------------------- the verdict


def lag_limit_ms(settings: TestSettingsModel | None) -> tuple[float, str]:
    """(the client delay limit in ms, what it is derived from)."""
    budget_ns = None
    what = ""
    if settings is not None and settings.loadgen_scenario is Scenario.SERVER:
        if settings.use_token_latencies and settings.ttft_latency_ns:
            budget_ns, what = settings.ttft_latency_ns, "TTFT limit"
        elif settings.server_target_latency_ns:
            budget_ns, what = settings.server_target_latency_ns, "target latency"
    if budget_ns is None:
        return NO_LIMIT_LAG_MS, "no latency limit in this scenario"
    limit = max(MIN_LAG_LIMIT_MS, LATENCY_SHARE * budget_ns / 1e6)
    return limit, f"{LATENCY_SHARE:.0%} of the {what} of {budget_ns / 1e6:g} ms"


def client_bound_reasons(diag: ClientDiagnostics, settings: TestSettingsModel | None) -> list[str]:
    """Why the client limited this test (empty: it kept up). ``settings``: the test's read-back LoadGen settings."""
    limit_ms, why = lag_limit_ms(settings)
    reasons: list[str] = []
    judged: list[tuple[str, LagStats | None]] = [("event-loop lag", diag.loop_lag), ("receive lag", diag.receive_lag)]
    # Offline issues every sample in one query: its samples wait for concurrency slots by design
    if settings is None or settings.loadgen_scenario is not Scenario.OFFLINE:
        judged.insert(0, ("dispatch lag", diag.dispatch_lag))
    probe_slots = diag.wall_s * 1000.0 / diag.probe_interval_ms if diag.probe_interval_ms > 0 else 0.0
    for name, lag in judged:
        if lag is None or lag.p99_ms is None:
            continue
        if (lag.count if name == "dispatch lag" else probe_slots) < MIN_COUNT:
            continue
        if lag.p99_ms >= limit_ms:
            reasons.append(f"{name} p99 {lag.p99_ms:.1f} ms (n={lag.count}) >= {limit_ms:.1f} ms ({why})")
    loop_cpu = diag.loop_thread_cpu_fraction
    if loop_cpu is not None and loop_cpu >= LOOP_CPU_SATURATED:
        where = "the busiest client worker's event-loop thread" if diag.client_workers else "the event-loop thread"
        reasons.append(f"{where} was busy {loop_cpu:.0%} of one core (>= {LOOP_CPU_SATURATED:.0%})")
    reporter = diag.reporter_thread_cpu_fraction
    if reporter is not None and reporter >= LOOP_CPU_SATURATED:
        reasons.append(
            f"the LoadGen process's reporting thread was busy {reporter:.0%} of one core (>= {LOOP_CPU_SATURATED:.0%})"
        )
    for w in diag.workers:  # one slow worker's tail can hide in the merged lags
        for name, lag in (("dispatch lag", w.dispatch_lag), ("event-loop lag", w.loop_lag), ("receive lag", w.receive_lag)):
            if name == "dispatch lag" and settings is not None and settings.loadgen_scenario is Scenario.OFFLINE:
                continue
            if lag is None or lag.p99_ms is None or (lag.count if name == "dispatch lag" else probe_slots) < MIN_COUNT:
                continue
            if lag.p99_ms >= limit_ms and not any(r.startswith(name) for r in reasons):
                reasons.append(f"client worker {w.worker}: {name} p99 {lag.p99_ms:.1f} ms (n={lag.count}) >= {limit_ms:.1f} ms")
    return reasons


def client_bound_finding(test: str, diag: ClientDiagnostics | None, settings: TestSettingsModel | None) -> Finding | None:
    """The ``RUN-CLIENT-BOUND`` ERROR of one test, or None (not measured, or the client kept up)."""
    if diag is None:
        return None
    reasons = client_bound_reasons(diag, settings)
    if not reasons:
        return None
    context = [f"process CPU {diag.process_cpu_cores:.2f} of {diag.usable_cpus} usable core(s)"]
    if diag.loop_thread_wait_fraction is not None:
        context.append(f"loop thread waited for a CPU {diag.loop_thread_wait_fraction:.0%} of the time")
    if diag.machine_cpu_saturated:
        context.append("every usable CPU of the machine was saturated")
    return registered_finding(
        rule="RUN-CLIENT-BOUND",
        message=f"{test}: CLIENT-BOUND: {'; '.join(reasons)} ({', '.join(context)}): the client, not the system "
        "under test, limited this measurement",
    )


def summary_line(diag: ClientDiagnostics) -> str:
    """One line of the run's summary."""

    def lag(name: str, s: LagStats | None) -> str:
        if s is None or s.count == 0:
            return f"{name} not measured"
        # a value is None with a count where it was not finite (the record writes such a value as null)
        ms = "/".join(f"{v:.2f}" if v is not None else "n/a" for v in (s.p50_ms, s.p99_ms, s.max_ms))
        return f"{name} p50/p99/max {ms} ms (n={s.count})"

    parts = [lag("dispatch lag", diag.dispatch_lag), lag("receive lag", diag.receive_lag), lag("loop lag", diag.loop_lag)]
    cpu = f"CPU {diag.process_cpu_cores:.2f} of {diag.usable_cpus} core(s)"
    if diag.loop_thread_cpu_fraction is not None:
        cpu += f", loop thread {diag.loop_thread_cpu_fraction:.0%} of a core"
    if diag.loop_thread_wait_fraction is not None:
        cpu += f" (waited for a CPU {diag.loop_thread_wait_fraction:.0%})"
    if diag.machine_cpu_busy:
        cpu += f"; machine CPUs busy {'/'.join(f'{b:.0%}' for b in diag.machine_cpu_busy)}"
    if diag.client_workers:
        lg_cpu = f"{diag.loadgen_process_cpu_s:.2f} s" if diag.loadgen_process_cpu_s is not None else "n/a"
        reporter = diag.reporter_thread_cpu_fraction
        died = [w.worker for w in diag.workers if w.died is not None]
        cpu += (
            f"; {diag.client_workers} client workers (busiest loop above), LoadGen process CPU {lg_cpu}"
            + (f", reporter thread {reporter:.0%} of a core" if reporter is not None else "")
            + (f", worker(s) {', '.join(map(str, died))} DIED" if died else "")
        )
    return "client: " + "; ".join([*parts, cpu])
