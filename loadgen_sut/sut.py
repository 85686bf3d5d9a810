"""LoadGen callbacks <-> an engine, on one dedicated asyncio loop thread.

Threading (see loadgen-notes §1, §3):

- LoadGen's issue thread calls :meth:`LoadGenSUT.issue` (a ``ConstructFastSUT`` callback); it only
  hands the ids to the loop with one ``call_soon_threadsafe`` per batch and returns — no blocking,
  no per-sample Python work on LoadGen's threads.
- The loop is uvloop's when it is installed (a default dependency on Linux and macOS), else asyncio's;
  ``INFERENCE_AUDIT_EVENT_LOOP=asyncio`` forces the latter. Measured against the recording token server
  at 50 req/s (``bench/sut_fidelity.py``): uvloop halves the client's CPU per query and its TTFT error.
- In that loop callback each sample's engine request starts at once (:meth:`Engine.generate` may send
  before returning), then one task per sample follows its events. The engine's ``on_first_token``
  callback reports the first token from inside the I/O callback that received it; the task's
  FirstToken event is the fallback. ``FirstTokenComplete`` and ``QuerySamplesComplete`` are both
  called from the loop thread, so LoadGen never sees a completion before its first token.
- Exactly one completion per sample, whatever happens: the task's ``finally`` completes a sample
  the engine did not finish (engine bug, cancellation), and failures are counted, never hidden.

Response data is the output token ids as int32 (what the accuracy scripts and TEST06 decode);
``n_tokens`` is the engine's own count. A failed sample is completed with the ids it got (maybe
none); the run is then reported invalid by the runner.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

import mlperf_loadgen as lg
import numpy as np

try:
    import uvloop
except ImportError:  # pragma: no cover - Windows, or installed without it
    uvloop = None  # type: ignore[assignment]

from loadgen_sut.engines.base import (
    Engine,
    EngineError,
    ErrorKind,
    Failed,
    Finished,
    FirstToken,
    GenerationEvent,
    GenerationRequest,
    single_event,
)

T = TypeVar("T")

_MAX_FAILURE_EXAMPLES = 20


EVENT_LOOP_ENV = "INFERENCE_AUDIT_EVENT_LOOP"


def new_event_loop() -> tuple[asyncio.AbstractEventLoop, str]:
    """(loop, what it is): uvloop's when importable, unless ``INFERENCE_AUDIT_EVENT_LOOP=asyncio``."""
    choice = os.environ.get(EVENT_LOOP_ENV, "auto").strip().lower()
    if choice not in ("auto", "uvloop", "asyncio"):
        raise ValueError(f"{EVENT_LOOP_ENV}={choice!r}: expected auto, uvloop or asyncio")
    if choice != "asyncio" and uvloop is not None:
        return uvloop.new_event_loop(), f"uvloop {uvloop.__version__}"
    if choice == "uvloop":
        raise ValueError(f"{EVENT_LOOP_ENV}=uvloop but uvloop is not installed (pip install uvloop)")
    return asyncio.new_event_loop(), "asyncio"


class LoopThread:
    """An event loop (uvloop or asyncio, see :func:`new_event_loop`) running in its own daemon thread."""

    def __init__(self, name: str = "sut-loop") -> None:
        self.loop, self.kind = new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Any, timeout_s: float | None = None) -> Any:
        fut: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout_s)

    def stop(self) -> None:
        if self.loop.is_closed():
            return

        async def _drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.run(_drain(), timeout_s=10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
            if not self._thread.is_alive():
                self.loop.close()


class SutStats:
    """Counters and client-side latency samples; written on the loop thread, read by progress."""

    def __init__(self) -> None:
        self.started_ns = time.perf_counter_ns()
        self.issued = 0
        self.first_tokens = 0
        self.completed = 0
        self.failed = 0
        self.failures_by_kind: Counter[str] = Counter()
        self.failure_examples: list[dict[str, Any]] = []
        self.single_token_outputs = 0
        self.retokenized = 0
        self.output_tokens = 0
        self.output_lengths: list[int] = []
        self.ttft_ms: list[float] = []  # client side: from the issue callback to the first token
        self.tpot_ms: list[float] = []
        self.duplicate_completions = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "issued": self.issued,
            "first_tokens": self.first_tokens,
            "completed": self.completed,
            "failed": self.failed,
            "failures_by_kind": dict(self.failures_by_kind),
            "failure_examples": self.failure_examples,
            "single_token_outputs": self.single_token_outputs,
            "retokenized_outputs": self.retokenized,
            "output_tokens": self.output_tokens,
            "duplicate_completions": self.duplicate_completions,
        }


def percentile_with_count(values: Sequence[float], pct: float) -> tuple[float | None, int]:
    """(p, n): the percentile of a snapshot, None when there are no values."""
    n = len(values)
    if n == 0:
        return None, 0
    return float(np.percentile(np.asarray(values[:n], dtype=np.float64), pct)), n


class LoadGenSUT:
    """Owns the loop thread, the engine and the bookkeeping of one LoadGen test."""

    def __init__(
        self,
        engine: Engine,
        make_request: Callable[[int], GenerationRequest],
        *,
        report_first_token: bool,
        loop_thread: LoopThread,
    ) -> None:
        self.engine = engine
        self._make_request = make_request
        self._report_ft = report_first_token
        self._lt = loop_thread
        self.stats = SutStats()
        # in-flight query ids: LoadGen reuses ids across runs (find-peak runs many in one test)
        self._inflight: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._handle: Any = None

    # ------------------------------------------------------------------ LoadGen side

    def construct(self) -> Any:
        self._handle = lg.ConstructFastSUT(self.issue, self.flush)
        return self._handle

    def destroy(self) -> None:
        if self._handle is not None:
            lg.DestroyFastSUT(self._handle)
            self._handle = None

    def issue(self, ids: list[int], indices: list[int]) -> None:
        """LoadGen issue thread: hand over and return at once."""
        self._lt.loop.call_soon_threadsafe(self._start_batch, ids, indices, time.perf_counter_ns())

    def flush(self) -> None:
        return None

    # ------------------------------------------------------------------ loop side

    def _start_batch(self, ids: list[int], indices: list[int], issued_ns: int) -> None:
        loop = self._lt.loop
        self.stats.issued += len(ids)
        self._inflight.update(ids)
        for qid, idx in zip(ids, indices, strict=True):
            sample = _Sample(qid, idx, issued_ns)
            try:  # may send the request right here (see Engine.generate)
                events = self.engine.generate(self._make_request(idx), partial(self._on_first_token, sample))
            except Exception as exc:  # an engine bug must not hang LoadGen: fail the sample visibly
                events = single_event(
                    Failed(error=EngineError(kind=ErrorKind.ENGINE, message=f"{type(exc).__name__}: {exc}"))
                )
            task = loop.create_task(self._run_sample(sample, events))
            self._tasks.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(self._tasks.discard)

    def _on_first_token(self, sample: _Sample, token_ids: Sequence[int]) -> None:
        """The engine's on_first_token callback, and the FirstToken event's handler: the first call counts."""
        if sample.ft_sent:
            return
        sample.ft_sent = True
        sample.ft_ns = time.perf_counter_ns()
        sample.partial = token_ids
        if self._report_ft:
            self._first_token(sample.qid, token_ids)
        self.stats.first_tokens += 1
        self.stats.ttft_ms.append((sample.ft_ns - sample.issued_ns) / 1e6)

    def _first_token(self, qid: int, token_ids: Sequence[int]) -> None:
        arr = np.asarray(token_ids, dtype=np.int32)
        ptr = arr.ctypes.data if arr.size else 0
        lg.FirstTokenComplete([lg.QuerySampleResponse(qid, ptr, arr.nbytes)])

    def _complete(self, qid: int, token_ids: Sequence[int], n_tokens: int) -> None:
        if qid not in self._inflight:
            self.stats.duplicate_completions += 1
            return
        self._inflight.discard(qid)
        arr = np.asarray(token_ids, dtype=np.int32)
        ptr = arr.ctypes.data if arr.size else 0
        lg.QuerySamplesComplete([lg.QuerySampleResponse(qid, ptr, arr.nbytes, n_tokens)])
        self.stats.completed += 1

    def _record_failure(self, idx: int, err: EngineError) -> None:
        s = self.stats
        s.failed += 1
        s.failures_by_kind[err.kind.value] += 1
        if len(s.failure_examples) < _MAX_FAILURE_EXAMPLES:
            s.failure_examples.append(
                {"sample_index": idx, "kind": err.kind.value, "message": err.message[:300], "endpoint": err.endpoint}
            )

    async def _run_sample(self, sample: _Sample, events: AsyncIterator[GenerationEvent]) -> None:
        qid, idx = sample.qid, sample.idx
        completed = False
        try:
            async for ev in events:
                if isinstance(ev, FirstToken):
                    self._on_first_token(sample, ev.token_ids)
                elif isinstance(ev, Finished):
                    if not sample.ft_sent:  # an engine that skipped the first-token event
                        self._on_first_token(sample, ev.token_ids[:1])
                    self._complete(qid, ev.token_ids, ev.n_tokens)
                    completed = True
                    s = self.stats
                    s.output_tokens += ev.n_tokens
                    s.output_lengths.append(ev.n_tokens)
                    if ev.n_tokens == 1:
                        s.single_token_outputs += 1
                    elif ev.n_tokens > 1:
                        s.tpot_ms.append((time.perf_counter_ns() - sample.ft_ns) / 1e6 / (ev.n_tokens - 1))
                    if not ev.ids_from_engine:
                        s.retokenized += 1
                    break
                elif isinstance(ev, Failed):
                    self._record_failure(idx, ev.error)
                    self._fail_complete(sample, ev.partial_token_ids or sample.partial)
                    completed = True
                    break
        except asyncio.CancelledError:
            if not completed:
                self._record_failure(idx, EngineError(kind=ErrorKind.ENGINE, message="cancelled at shutdown"))
                self._fail_complete(sample, sample.partial)
                completed = True
            raise
        except Exception as exc:  # an engine bug must not hang LoadGen: fail the sample visibly
            if not completed:
                self._record_failure(idx, EngineError(kind=ErrorKind.ENGINE, message=f"{type(exc).__name__}: {exc}"))
                self._fail_complete(sample, sample.partial)
                completed = True
        finally:
            if not completed:
                self._record_failure(
                    idx, EngineError(kind=ErrorKind.TRUNCATED, message="engine stream ended without a terminal event")
                )
                self._fail_complete(sample, sample.partial)

    def _fail_complete(self, sample: _Sample, partial: Sequence[int]) -> None:
        """Complete a failed sample with what it got (LoadGen still needs its first token first)."""
        if not sample.ft_sent and self._report_ft:
            self._first_token(sample.qid, partial[:1])
        self._complete(sample.qid, partial, len(partial))


class _Sample:
    """One issued sample's state on the loop thread."""

    __slots__ = ("ft_ns", "ft_sent", "idx", "issued_ns", "partial", "qid")

    def __init__(self, qid: int, idx: int, issued_ns: int) -> None:
        self.qid = qid
        self.idx = idx
        self.issued_ns = issued_ns
        self.ft_sent = False
        self.ft_ns = 0
        self.partial: Sequence[int] = ()
