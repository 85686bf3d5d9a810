"""One HTTP client worker process of a LoadGen test: ``python -m loadgen_sut.client_worker FD CONFIG_JSON``.

Started by :class:`loadgen_sut.client_workers.WorkerPool` with its end of a socketpair as ``FD``. The worker builds the
test's engine from the test's spec (its share of the endpoints and of ``--max-concurrency``), starts it, encodes every
request, says ``READY``, then runs the samples the LoadGen process hands it on its own event loop (uvloop when
installed), in this process's main thread: the same :class:`loadgen_sut.sut.LoadGenSUT` bookkeeping as the
in-process client (first token before completion, one completion per sample, outputs converted and checked here),
except that what it would hand LoadGen goes to the LoadGen process as frames (:mod:`loadgen_sut.worker_wire`).

Outgoing frames are gathered while the loop handles one batch of I/O callbacks and written together by one
``call_soon`` (a send per loop pass, not per event). A worker whose LoadGen process went away (its socket's end of
file) stops at once.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from checker.findings import UnusableInput
from loadgen_sut import worker_wire as wire
from loadgen_sut.client_diag import CpuSnapshot, LoopProbes
from loadgen_sut.engines.base import Engine, EngineUnavailable, GenerationRequest
from loadgen_sut.lgtest import TestSpec, load_engine, requests_of
from loadgen_sut.sut import LoadGenSUT, _Sample, new_event_loop

_RECV_BYTES = 1 << 16


class WorkerSUT(LoadGenSUT):
    """:class:`LoadGenSUT` on the worker's loop: what it hands LoadGen becomes frames to the LoadGen process."""

    def __init__(
        self,
        engine: Engine,
        make_request: Callable[[int], GenerationRequest],
        *,
        report_first_token: bool,
        response_format: str,
        sock: socket.socket,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(
            engine, make_request, report_first_token=report_first_token, loop_thread=None, response_format=response_format
        )
        self._sock = sock
        self._loop = loop
        self._out = bytearray()
        self._flush_due = False
        self._writing = False
        self.lost = asyncio.Event()  # the LoadGen process went away

    def put(self, data: bytes) -> None:
        self._out += data
        if not self._flush_due and not self._writing:
            self._flush_due = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        out = self._out
        try:
            n = self._sock.send(out)
        except BlockingIOError:
            n = 0
        except OSError:
            out.clear()
            self.lost.set()
            return
        del out[:n]
        if out and not self._writing:
            self._writing = True
            self._loop.add_writer(self._sock.fileno(), self._writable)

    def _writable(self) -> None:
        out = self._out
        try:
            n = self._sock.send(out)
        except BlockingIOError:
            return
        except OSError:
            out.clear()
            n = 0
        del out[:n]
        if not out:
            self._writing = False
            self._loop.remove_writer(self._sock.fileno())

    def _send_first_token(self, sample: _Sample, arr: np.ndarray) -> None:
        self.put(wire.first_frame(sample.qid, sample.ft_ns, arr.tobytes()))

    def _hand_over(self, sample: _Sample, arr: np.ndarray, n_tokens: int, ok: bool, now_ns: int) -> None:
        flags = (wire.OK if ok else 0) | (wire.RETOKENIZED if sample.retokenized else 0)
        self.put(
            wire.done_frame(
                sample.qid,
                sample.dispatched_ns,
                sample.ft_ns,
                now_ns,
                n_tokens,
                flags,
                arr.tobytes(),
                None if ok else (sample.failure or ("engine", "failed", None)),
            )
        )


class _Session:
    """The worker's side of the socket: frames in, the test's probes and CPU snapshots."""

    def __init__(self, sut: WorkerSUT, sock: socket.socket, cfg: wire.WorkerConfig, loop_kind: str) -> None:
        self.sut = sut
        self.sock = sock
        self.cfg = cfg
        self.loop_kind = loop_kind
        self.rx = bytearray()
        self.probes: LoopProbes | None = None
        self.before: CpuSnapshot | None = None
        self.samples = 0

    def readable(self) -> None:
        try:
            data = self.sock.recv(_RECV_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.sut.lost.set()
            return
        rx = self.rx
        rx += data
        pos = 0
        head = wire.HEAD
        while len(rx) - pos >= head.size:
            size, kind = head.unpack_from(rx, pos)
            if len(rx) - pos - head.size < size:
                break
            body = pos + head.size
            pos = body + size
            if kind == wire.SAMPLES:
                n = size // wire.SAMPLE.size
                seqs = [0] * n
                idxs = [0] * n
                for i in range(n):
                    seqs[i], idxs[i] = wire.SAMPLE.unpack_from(rx, body + i * wire.SAMPLE.size)
                self.samples += n
                self.sut._start_batch(seqs, idxs, time.perf_counter_ns())
            elif kind == wire.BEGIN:
                self.probes = LoopProbes()
                self.probes.install()
                self.before = CpuSnapshot.take(threading.get_native_id())
            elif kind == wire.END:
                self.sut.put(wire.json_frame(wire.REPORT, self.report()))
            elif kind == wire.CANCEL:
                self.sut._expire("the LoadGen process ended the test")
        del rx[:pos]

    def report(self) -> dict[str, Any]:
        after = CpuSnapshot.take(threading.get_native_id())
        probes = self.probes
        if probes is not None:
            probes.remove()
        before = self.before or after
        r0, r1 = before.rusage, after.rusage
        loop_cpu = loop_wait = None
        if before.loop_thread is not None and after.loop_thread is not None:
            wall_ns = max(1, after.wall_ns - before.wall_ns)
            loop_cpu = (after.loop_thread[0] - before.loop_thread[0]) / wall_ns
            w0, w1 = before.loop_thread[1], after.loop_thread[1]
            loop_wait = None if w0 is None or w1 is None else (w1 - w0) / wall_ns
        info = self.sut.engine.info()
        return {
            "worker": self.cfg.worker,
            "pid": os.getpid(),
            "event_loop": self.loop_kind,
            "samples": self.samples,
            "wall_s": (after.wall_ns - before.wall_ns) / 1e9,
            "process_cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
            "loop_thread_cpu_fraction": loop_cpu,
            "loop_thread_wait_fraction": loop_wait,
            "involuntary_context_switches": int(r1.ru_nivcsw - r0.ru_nivcsw),
            "loop_lags_ns": list(probes.loop_lags_ns) if probes is not None else [],
            "receive_lags_ns": (
                list(probes.receive_lags_ns) if probes is not None and probes.receive_lags_ns is not None else None
            ),
            "probe_interval_ms": probes.interval_ns / 1e6 if probes is not None else None,
            "duplicate_completions": self.sut.stats.duplicate_completions,
            "engine": info.model_dump(mode="json"),
        }


async def _serve(cfg: wire.WorkerConfig, sock: socket.socket, loop_kind: str) -> int:
    loop = asyncio.get_running_loop()
    try:
        spec = TestSpec.model_validate_json(Path(cfg.spec_path).read_text(encoding="utf-8"))
        engine_spec = spec.engine.model_copy(
            update={"endpoints": cfg.endpoints or spec.engine.endpoints, "max_concurrency": cfg.max_concurrency}
        )
        dataset, engine = load_engine(spec, engine_spec)
    except (UnusableInput, OSError, ValueError) as exc:
        sock.sendall(wire.json_frame(wire.READY, {"ok": False, "status": "setup_error", "error": str(exc)}))
        return 4
    requests = requests_of(dataset, spec.generation)
    try:
        await asyncio.wait_for(engine.start(), cfg.start_timeout_s)
    except (EngineUnavailable, asyncio.TimeoutError) as exc:
        msg = str(exc) or f"engine did not start within {cfg.start_timeout_s:g} s"
        sock.sendall(wire.json_frame(wire.READY, {"ok": False, "status": "engine_unavailable", "error": msg}))
        await engine.close()
        return 3
    engine.prepare(requests)
    sock.setblocking(False)
    sut = WorkerSUT(
        engine,
        requests.__getitem__,
        report_first_token=cfg.report_first_token,
        response_format=spec.generation.response_format,
        sock=sock,
        loop=loop,
    )
    session = _Session(sut, sock, cfg, loop_kind)
    gc.collect()
    gc.freeze()  # as the in-process client: the test's data out of the cyclic GC's reach (lgtest.run_test)
    sut.put(wire.json_frame(wire.READY, {"ok": True, "ids_available": engine.ids_available, "pid": os.getpid()}))
    loop.add_reader(sock.fileno(), session.readable)
    try:
        await sut.lost.wait()  # the LoadGen process closed its end: the test is over
    finally:
        loop.remove_reader(sock.fileno())
        sut._expire("the LoadGen process closed the connection")
        await engine.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m loadgen_sut.client_worker FD CONFIG_JSON", file=sys.stderr)
        return 2
    cfg = wire.WorkerConfig.model_validate_json(args[1])
    sock = socket.socket(fileno=int(args[0]))
    sys.setswitchinterval(0.0005)
    # Ctrl-C reaches the test's whole process group: the LoadGen process handles it and exits, and this worker
    # stops at its socket's end of file (a KeyboardInterrupt here would only print a traceback from a callback)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    loop, kind = new_event_loop()
    try:
        return loop.run_until_complete(_serve(cfg, sock, kind))
    finally:
        loop.close()
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
