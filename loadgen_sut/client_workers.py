"""HTTP client workers: LoadGen's process does only LoadGen, the HTTP streams run in N worker processes.

``inference-audit run --client-workers N`` (``docs/client-workers.md``). The LoadGen process keeps LoadGen and
:class:`WorkerPool`, which does as little as it can per sample:

- LoadGen's issue callback gives each sample a sequence number (LoadGen reuses its query ids; the numbers are never
  reused, so an answer that comes late can never complete another sample), picks the next live worker (round robin:
  each worker holds an equal share of ``--max-concurrency`` and of the endpoints) and writes one frame to its socket
  (:mod:`loadgen_sut.worker_wire`). No event loop, no task, no conversion in this process.
- ONE thread, the reporter, reads every worker's socket (one poll set) and hands LoadGen what came, in the order it came:
  ``FirstTokenComplete`` and ``QuerySamplesComplete`` are only ever called from it, so a sample's first token still
  comes before its completion, and a sample leaves the in-flight table (and is completed) exactly once. The response
  bytes are handed to LoadGen straight from the receive buffer (converted and checked by the worker). The deadline
  (``expire``) and a worker's death are commands run on that thread too.
- A worker that dies (its socket's end of file) is a counted failure, never a hang: its in-flight samples complete as
  failed (kind ``client_worker_died``), then the test ends: every other outstanding sample and every later one
  completes at once as failed (kind ``run_ended``), so LoadGen finishes and writes its logs; the test's status is
  ``client_worker_died``.

Times: each worker's ``perf_counter_ns`` is ``CLOCK_MONOTONIC`` on Linux, the clock of every process of the machine;
the LoadGen process's issue times and the workers' dispatch, first-token and completion times go into one timeline
unconverted (``sut_timeline.jsonl``, relative to the LoadGen process's t0).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlperf_loadgen as lg
import numpy as np

from loadgen_sut import worker_wire as wire
from loadgen_sut.engines.base import EngineInfo
from loadgen_sut.sut import DEADLINE, SutBase
from loadgen_sut.timeline import NOT_MEASURED, TimelineColumns

if TYPE_CHECKING:
    from loadgen_sut.lgtest import TestSpec

WORKER_DIED = "client_worker_died"  # a failure kind: the sample was in flight in a worker that died
RUN_ENDED = "run_ended"  # a failure kind: outstanding (or issued) after a worker died, so the test ended
MAX_DEFAULT_WORKERS = 8
_BUF_BYTES = 1 << 22
_SOCK_BUF_BYTES = 1 << 22
_ONE_SAMPLE_HEAD = wire.HEAD.pack(wire.SAMPLE.size, wire.SAMPLES)


def default_client_workers(usable_cpus: int) -> int:
    """``--client-workers`` when not given: one worker per core beside LoadGen's, at most 8; 0 (the in-process
    client) where that leaves fewer than 2 (a worker process pays a hop per event that one core cannot win back)."""
    n = min(usable_cpus - 1, MAX_DEFAULT_WORKERS)
    return n if n >= 2 else 0


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_shares(endpoints: tuple[str, ...], max_concurrency: int, n: int) -> list[tuple[tuple[str, ...], int]]:
    """(endpoints, concurrency) of each of ``n`` workers: the endpoints dealt out (each worker at least one), the
    concurrency split as evenly as it goes (every worker at least one: the caller keeps ``n <= max_concurrency``)."""
    out = []
    for i in range(n):
        eps = endpoints[i::n] if len(endpoints) >= n else (endpoints[i % len(endpoints)],) if endpoints else ()
        out.append((eps, max_concurrency // n + (1 if i < max_concurrency % n else 0)))
    return out


class WorkerStartError(Exception):
    """A worker could not start its engine: ``status`` is the test's (``engine_unavailable``, ``setup_error``)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Remote:
    """One issued sample in the LoadGen process (times: ``perf_counter_ns``; ``NOT_MEASURED`` until known)."""

    __slots__ = ("ft_sent", "idx", "issued_ns", "qid", "worker")

    def __init__(self, qid: int, idx: int, issued_ns: int, worker: int) -> None:
        self.qid = qid
        self.idx = idx
        self.issued_ns = issued_ns
        self.worker = worker
        self.ft_sent = False


class _Worker:
    def __init__(self, index: int, proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.index = index
        self.proc = proc
        self.sock = sock
        self.lock = threading.Lock()  # frames from the issue, reporter and main threads never interleave
        self.buf = np.empty(_BUF_BYTES, dtype=np.uint8)
        self.mv = memoryview(self.buf)  # type: ignore[arg-type]
        self.base = int(self.buf.ctypes.data)
        self.start = 0
        self.end = 0
        self.sent = 0  # samples handed to it
        self.report: dict[str, Any] | None = None
        self.died: str | None = None

    def send(self, data: bytes) -> None:
        with self.lock:
            self.sock.sendall(data)

    def grow(self, need: int) -> None:
        """Room for a frame of ``need`` bytes from ``start`` (the buffer moves: pointers into it change)."""
        used = self.end - self.start
        if need > len(self.buf):
            buf = np.empty(max(need, 2 * len(self.buf)), dtype=np.uint8)
            buf[:used] = self.buf[self.start : self.end]
            self.buf = buf
            self.mv = memoryview(buf)  # type: ignore[arg-type]
            self.base = int(buf.ctypes.data)
        else:
            self.buf[:used] = self.buf[self.start : self.end]
        self.start, self.end = 0, used


class WorkerPool(SutBase):
    """The SUT LoadGen sees when the client runs in worker processes (see the module docstring)."""

    def __init__(self, spec: TestSpec, *, report_first_token: bool) -> None:
        n = spec.engine.client_workers
        if n < 1:
            raise ValueError(f"{n} client workers: at least 1")
        super().__init__()
        self._spec = spec
        self._spec_file: Path | None = None
        self._n = min(n, spec.engine.max_concurrency)
        self._shares = worker_shares(spec.engine.endpoints, spec.engine.max_concurrency, self._n)
        self._report_ft = report_first_token
        self.timeline_workers = array("b")  # the worker of each timeline row (-1: none)
        self._inflight: dict[int, _Remote] = {}
        self._seq = 0
        self._rr = 0
        self.workers: list[_Worker] = []
        self._live: list[_Worker] = []
        self._ended: tuple[str, str] | None = None  # (failure kind, why) of samples issued once the test ended
        self.died: str | None = None  # the first worker death, for the test's error
        self._orphans: deque[tuple[int, str, str]] = deque()  # (seq, kind, message): to fail on the reporter thread
        self._commands: deque[Callable[[], None]] = deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)
        self._closing = False
        self._reported = threading.Event()
        self._thread: threading.Thread | None = None
        self.count_checks: Counter[str] = Counter()
        self.ids_available = True

    # ------------------------------------------------------------------ life cycle (the main thread)

    def start(self, timeout_s: float) -> None:
        """Start the workers and wait for each to say READY (its engine started); raises :class:`WorkerStartError`."""
        fd, name = tempfile.mkstemp(prefix="inference-audit-test-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self._spec.model_dump_json())
        self._spec_file = Path(name)
        for i, (eps, conc) in enumerate(self._shares):
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            for s in (mine, theirs):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCK_BUF_BYTES)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SOCK_BUF_BYTES)
            cfg = wire.WorkerConfig(
                spec_path=name,
                worker=i,
                endpoints=eps,
                max_concurrency=conc,
                report_first_token=self._report_ft,
                start_timeout_s=timeout_s,
            )
            proc = subprocess.Popen(
                [sys.executable, "-m", "loadgen_sut.client_worker", str(theirs.fileno()), cfg.model_dump_json()],
                pass_fds=(theirs.fileno(),),
            )
            theirs.close()
            self.workers.append(_Worker(i, proc, mine))
        deadline = time.monotonic() + timeout_s + 30.0  # the worker's own engine start timeout, plus its loading
        try:
            for w in self.workers:
                ready = self._read_ready(w, deadline)
                if not ready.get("ok"):
                    raise WorkerStartError(str(ready.get("status", "setup_error")), str(ready.get("error", "")))
                self.ids_available = self.ids_available and bool(ready.get("ids_available", True))
        except BaseException:
            self.close()
            raise
        self._live = list(self.workers)
        self._thread = threading.Thread(target=self._report_loop, name="sut-reporter", daemon=True)
        self._thread.start()

    def _read_ready(self, w: _Worker, deadline: float) -> dict[str, Any]:
        head = wire.HEAD.size
        data = b""
        while True:
            if len(data) >= head:
                size, kind = wire.HEAD.unpack_from(data)
                if len(data) >= head + size:
                    if kind != wire.READY:
                        raise WorkerStartError("setup_error", f"client worker {w.index}: frame {kind} before READY")
                    rest = data[head + size :]
                    if rest:  # nothing comes before the first sample: keep it all the same
                        w.buf[: len(rest)] = np.frombuffer(rest, dtype=np.uint8)
                        w.end = len(rest)
                    ready: dict[str, Any] = json.loads(data[head : head + size])
                    return ready
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerStartError("engine_unavailable", f"client worker {w.index} did not start in time")
            w.sock.settimeout(left)
            try:
                chunk = w.sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                code = w.proc.wait(timeout=10)
                raise WorkerStartError("setup_error", f"client worker {w.index} exited before it was ready ({_exit_text(code)})")
            data += chunk

    def begin(self) -> None:
        """The test starts: each worker installs its probes and takes its first CPU snapshot."""
        for w in self._live:
            self._send_or_lose(w, wire.frame(wire.BEGIN))

    def finish(self, timeout_s: float) -> None:
        """The test ended (LoadGen returned): each live worker reports its diagnostics and engine info."""
        live = [w for w in self._live if w.died is None]
        self._reported.clear()
        for w in live:
            self._send_or_lose(w, wire.frame(wire.END))
        if live:
            self._reported.wait(timeout_s)

    def close(self) -> None:
        """Stop the reporter thread, then the workers (their sockets' end of file: they close their engines)."""
        self._closing = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for w in self.workers:
            w.sock.close()
        for w in self.workers:
            try:
                w.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait(timeout=5)
        self._wake_r.close()
        self._wake_w.close()
        if self._spec_file is not None:
            self._spec_file.unlink(missing_ok=True)
            self._spec_file = None

    @property
    def reporter_native_id(self) -> int | None:
        return self._thread.native_id if self._thread is not None else None

    # ------------------------------------------------------------------ LoadGen's threads

    def issue(self, ids: list[int], indices: list[int]) -> None:
        """LoadGen's issue thread: one frame per worker touched, and return."""
        now = time.perf_counter_ns()
        inflight = self._inflight
        live = self._live
        self.stats.issued += len(ids)  # only this thread writes it
        if self._ended is not None or not live:
            kind, why = self._ended or (RUN_ENDED, "no client worker is alive")
            for qid, idx in zip(ids, indices, strict=True):
                seq = self._seq
                self._seq = seq + 1
                inflight[seq] = _Remote(qid, idx, now, -1)
                self._orphans.append((seq, kind, why))
            self._wake()
            return
        n = len(live)
        if len(ids) == 1:  # Server and SingleStream: one sample per call
            seq = self._seq
            self._seq = seq + 1
            w = live[self._rr % n]
            self._rr += 1
            inflight[seq] = _Remote(ids[0], indices[0], now, w.index)
            w.sent += 1
            self._send_samples(w, _ONE_SAMPLE_HEAD + wire.SAMPLE.pack(seq, indices[0]), (seq,))
            return
        parts: list[list[bytes]] = [[] for _ in range(n)]
        seqs: list[list[int]] = [[] for _ in range(n)]
        pack = wire.SAMPLE.pack
        for qid, idx in zip(ids, indices, strict=True):
            seq = self._seq
            self._seq = seq + 1
            k = self._rr % n
            self._rr += 1
            inflight[seq] = _Remote(qid, idx, now, live[k].index)
            parts[k].append(pack(seq, idx))
            seqs[k].append(seq)
        for k, w in enumerate(live):
            if parts[k]:
                w.sent += len(parts[k])
                body = b"".join(parts[k])
                self._send_samples(w, wire.HEAD.pack(len(body), wire.SAMPLES) + body, seqs[k])

    def _send_samples(self, w: _Worker, data: bytes, seqs: tuple[int, ...] | list[int]) -> None:
        try:
            w.send(data)
        except OSError as exc:  # the worker is gone: the reporter fails them (and handles the end of file)
            for seq in seqs:
                self._orphans.append((seq, WORKER_DIED, f"client worker {w.index} is gone ({exc})"))
            self._wake()

    def _send_or_lose(self, w: _Worker, data: bytes) -> None:
        try:
            w.send(data)
        except OSError:
            return  # its end of file tells the reporter

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"!")
        except (BlockingIOError, OSError):
            return  # already woken (its buffer is full) or closed

    def expire(self, reason: str, timeout_s: float = 10.0) -> int:
        """From any thread but the reporter's: the test's deadline (as :meth:`LoadGenSUT.expire`)."""
        fut: Future[int] = Future()

        def _do() -> None:
            if self.expired is None:
                self.expired = reason
            n = self._end_run(DEADLINE, reason)
            self.expired_samples += n
            fut.set_result(n)

        self._commands.append(_do)
        self._wake()
        return fut.result(timeout_s)

    # ------------------------------------------------------------------ the reporter thread

    def _report_loop(self) -> None:
        # select.poll, not selectors: each wake-up of this thread costs about 35 us of CPU here (the kernel's), and
        # selectors' Python layer adds 13-16 us to each (measured: 37-51 vs 50-63 us); every event wakes it once
        poller = select.poll()
        wake_fd = self._wake_r.fileno()
        poller.register(wake_fd, select.POLLIN)
        by_fd: dict[int, _Worker] = {}
        for w in self.workers:
            w.sock.setblocking(False)
            by_fd[w.sock.fileno()] = w
            poller.register(w.sock.fileno(), select.POLLIN)
        while not self._closing:
            for fd, _ in poller.poll(1000):
                if fd == wake_fd:
                    self._on_wake()
                    continue
                w = by_fd[fd]
                if not self._receive(w):
                    poller.unregister(fd)
                    self._worker_died(w)

    def _on_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                self._wake_r.setblocking(False)
        except (BlockingIOError, OSError):
            pass
        while self._commands:
            self._commands.popleft()()
        while self._orphans:
            seq, kind, why = self._orphans.popleft()
            r = self._inflight.pop(seq, None)
            if r is not None:
                self._fail(r, kind, why)

    def _receive(self, w: _Worker) -> bool:
        """Read what ``w`` sent and hand it to LoadGen; False at its end of file."""
        if len(w.buf) - w.end < 1 << 16:
            w.grow(w.end - w.start + (1 << 16))
        try:
            got = w.sock.recv_into(w.mv[w.end :])
        except BlockingIOError:
            return True
        except OSError:
            got = 0
        if got == 0:
            return False
        w.end += got
        self._frames(w)
        return True

    def _frames(self, w: _Worker) -> None:
        """Hand LoadGen what the frames received from ``w`` say: one ``FirstTokenComplete`` with every first token
        among them, then one ``QuerySamplesComplete`` with every completion (a sample's first token is in the first
        call or an earlier one, never after its completion). The responses point into ``w``'s buffer, which does not
        move before both calls returned."""
        mv = w.mv
        pos, end = w.start, w.end
        base = w.base
        inflight = self._inflight
        stats = self.stats
        head = wire.HEAD
        hs = head.size
        fts: list[Any] = []
        dones: list[Any] = []
        response = lg.QuerySampleResponse
        while end - pos >= hs:
            size, kind = head.unpack_from(mv, pos)
            if end - pos - hs < size:
                if hs + size > len(w.buf):
                    self._hand_to_loadgen(fts, dones)
                    w.start = pos
                    w.grow(hs + size)
                    return
                break
            body = pos + hs
            pos = body + size
            if kind == wire.FIRST_TOKEN:
                seq, ft_ns = wire.FIRST.unpack_from(mv, body)
                r = inflight.get(seq)
                if r is not None and not r.ft_sent:
                    r.ft_sent = True
                    n = size - wire.FIRST.size
                    fts.append(response(r.qid, base + body + wire.FIRST.size if n else 0, n))
            elif kind == wire.COMPLETE:
                seq, disp, ft_ns, done_ns, n_tokens, flags, n = wire.DONE.unpack_from(mv, body)
                r = inflight.pop(seq, None)
                if r is None:  # completed already (the deadline, the test's end): nothing more to hand LoadGen
                    continue
                data = body + wire.DONE.size
                ok = bool(flags & wire.OK)
                if self._report_ft and not r.ft_sent:  # LoadGen needs a first token before the completion
                    r.ft_sent = True
                    fts.append(response(r.qid, 0, 0))
                dones.append(response(r.qid, base + data if n else 0, n, n_tokens))
                stats.completed += 1
                self._done(r, disp, ft_ns, done_ns, n_tokens if ok else NOT_MEASURED, ok)
                if ft_ns != NOT_MEASURED:
                    stats.first_tokens += 1
                    stats.ttft_ms.append((ft_ns - r.issued_ns) / 1e6)
                if ok:
                    stats.count_output(n_tokens, ft_ns, done_ns, bool(flags & wire.RETOKENIZED))
                else:
                    stats.count_failure(r.idx, *wire.parse_failure(bytes(mv[data + n : pos])))
            elif kind == wire.REPORT:
                w.report = json.loads(bytes(mv[body:pos]))
                self._check_reported()
        self._hand_to_loadgen(fts, dones)
        if pos == end:
            w.start = w.end = 0
        else:
            w.start = pos

    @staticmethod
    def _hand_to_loadgen(fts: list[Any], dones: list[Any]) -> None:
        if fts:
            lg.FirstTokenComplete(fts)
        if dones:
            lg.QuerySamplesComplete(dones)

    def _check_reported(self) -> None:
        if all(w.report is not None or w.died is not None for w in self.workers):
            self._reported.set()

    def _done(self, r: _Remote, disp: int, ft_ns: int, done_ns: int, n_tokens: int, ok: bool) -> None:
        self.timeline.append(r.idx, r.issued_ns, disp, ft_ns, done_ns, n_tokens, ok)
        self.timeline_workers.append(r.worker)

    def _fail(self, r: _Remote, kind: str, message: str) -> None:
        """Complete a sample this process took back (already out of the in-flight table) as failed, once."""
        self.stats.count_failure(r.idx, kind, message, None)
        if self._report_ft and not r.ft_sent:
            r.ft_sent = True
            lg.FirstTokenComplete([lg.QuerySampleResponse(r.qid, 0, 0)])
        lg.QuerySamplesComplete([lg.QuerySampleResponse(r.qid, 0, 0, 0)])
        self.stats.completed += 1
        self._done(r, NOT_MEASURED, NOT_MEASURED, time.perf_counter_ns(), NOT_MEASURED, False)

    def _end_run(self, kind: str, why: str) -> int:
        """Fail every outstanding sample and, from now on, every issued one; tell the workers. Returns how many."""
        if self._ended is None:
            self._ended = (kind, why)
        n = 0
        for seq, r in list(self._inflight.items()):
            if self._inflight.pop(seq, None) is r:
                self._fail(r, kind, why)
                n += 1
        for w in self._live:
            self._send_or_lose(w, wire.frame(wire.CANCEL))
        return n

    def _worker_died(self, w: _Worker) -> None:
        self._live = [x for x in self._live if x is not w]  # a new list: the issue thread reads it without a lock
        if self._closing or w.report is not None:  # the test was over for it
            return
        try:
            code = w.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        msg = f"client worker {w.index} (pid {w.proc.pid}) died ({_exit_text(code)})"
        w.died = msg
        lost = 0
        for seq, r in list(self._inflight.items()):
            if r.worker == w.index and self._inflight.pop(seq, None) is r:
                self._fail(r, WORKER_DIED, msg)
                lost += 1
        others = self._end_run(RUN_ENDED, f"{msg}: the test ends")
        if self.died is None:
            self.died = (
                f"{msg}: its {lost} in-flight sample(s) failed ({WORKER_DIED}), {others} other outstanding sample(s) "
                f"and every later one were completed as failed ({RUN_ENDED}) so that LoadGen could finish"
            )
        self._check_reported()

    # ------------------------------------------------------------------ after the test

    def timeline_columns(self) -> TimelineColumns:
        """The timeline with a row for each sample still outstanding (call after :meth:`close`)."""
        for r in self._inflight.values():
            self.timeline.append(r.idx, r.issued_ns, NOT_MEASURED, NOT_MEASURED, NOT_MEASURED, NOT_MEASURED, False)
            self.timeline_workers.append(r.worker)
        self._inflight.clear()
        return self.timeline

    def engine_info(self) -> EngineInfo | None:
        """The engine as the workers ran it: the first report's, its token count checks summed over all workers."""
        reports = [w.report for w in self.workers if w.report is not None]
        if not reports:
            return None
        info = EngineInfo.model_validate(reports[0]["engine"])
        checks: Counter[str] = Counter()
        endpoints: list[str] = []
        for rep in reports:
            e = rep["engine"]
            for ep in e.get("endpoints", ()):
                if ep not in endpoints:
                    endpoints.append(ep)
            for part in str(e.get("parameters", {}).get("token_count_checks", "none")).split(", "):
                name, sep, count = part.partition("=")
                if sep and count.isdigit():
                    checks[name] += int(count)
        params = dict(info.parameters)
        if "token_count_checks" in params:
            params["token_count_checks"] = ", ".join(f"{k}={v}" for k, v in sorted(checks.items())) or "none"
        params["client_workers"] = str(len(self.workers))
        params["max_concurrency_per_worker"] = ",".join(str(c) for _, c in self._shares)
        return info.model_copy(update={"parameters": params, "endpoints": tuple(endpoints) or info.endpoints})

    def event_loop(self) -> str | None:
        kinds = sorted({str(w.report.get("event_loop")) for w in self.workers if w.report is not None})
        return f"{', '.join(kinds)} in {len(self.workers)} client worker process(es)" if kinds else None


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running, its socket closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
