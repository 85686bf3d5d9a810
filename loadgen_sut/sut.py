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
  Everything LoadGen is handed is converted and checked *before* the sample leaves the in-flight
  table (token ids must fit the int32 response, counts LoadGen's int64): an output that does not
  convert completes the sample once as failed (kind ``bad_output``), never zero times or twice.
- :meth:`LoadGenSUT.expire` (the test's deadline, from a timer thread) completes every outstanding
  sample as failed (kind ``deadline``) and every later one at once, so LoadGen can finish and write
  its logs instead of waiting for answers that will never come.

Every sample's issue, dispatch (the engine's ``on_dispatch``: the request handed to the socket), first-token and
completion times go to :attr:`LoadGenSUT.timeline` (compact columns, see :mod:`loadgen_sut.timeline`) when it is
completed; :meth:`LoadGenSUT.timeline_columns` adds the samples still outstanding when the test ended.

Response data is what the benchmark's reference SUT hands LoadGen (``response_format``, the rules data's
``Benchmark.accuracy_log_format``), so the accuracy log holds what the reference evaluator reads:

- ``token_ids`` (most): the output token ids as int32 (what the accuracy scripts and TEST06 decode). A failed
  sample is completed with the ids it got (maybe none, and none when they do not convert);
- ``utf8_text`` (qwen3-vl): the UTF-8 bytes of the output text (the engine's own text, e.g. a chat API's
  ``content``; else its ids decoded with the engine's tokenizer), as ``task.py`` encodes the chat completion's
  content (mlcommons/inference multimodal/qwen3-vl, lines 329-344, 445-458); the first token's bytes are its ids
  decoded (the reference sends the first chunk's text, lines 428-440), empty where the engine cannot decode. A
  failed sample is completed empty with 0 tokens, as the reference completes a failed request (lines 345-365).

``n_tokens`` is the engine's own count either way (``usage.completion_tokens``, as the reference reports it):
LoadGen's TPOT and tokens/s. A failed sample makes the run invalid (the runner reports it).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from abc import ABC, abstractmethod
from array import array
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
from loadgen_sut.record import SutCounts
from loadgen_sut.timeline import NOT_MEASURED, TimelineColumns

T = TypeVar("T")

_MAX_FAILURE_EXAMPLES = 20
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_EMPTY = np.zeros(0, dtype=np.int32)
_INT32_CODE = "i" if array("i").itemsize == 4 else "l"  # C int: 4 bytes wherever LoadGen runs

BAD_OUTPUT = "bad_output"  # an engine output LoadGen cannot be handed (ids outside int32, a bad count)
TOKEN_IDS = "token_ids"  # response data: the output ids as int32
UTF8_TEXT = "utf8_text"  # response data: the output text's UTF-8 bytes
RESPONSE_FORMATS = (TOKEN_IDS, UTF8_TEXT)  # rules.models.Benchmark.accuracy_log_format
DEADLINE = "deadline"  # still outstanding when the test's deadline came


class BadOutput(ValueError):
    """An engine output that cannot become a LoadGen response."""


def response_array(token_ids: Sequence[int]) -> np.ndarray:
    """Token ids as LoadGen's response data (int32, contiguous), or ``BadOutput``.

    Each id must be an integer in [0, 2^31 - 1]: no silent wrap-around, truncation of floats, or strings.
    A list or tuple goes through ``array('i')`` first (4 us for 64 ids instead of numpy's 10, twice per sample);
    whatever it refuses, or takes but is not plainly valid, is judged by numpy as before (the same messages).
    """
    if type(token_ids) in (list, tuple):
        try:
            packed = array(_INT32_CODE, token_ids)
        except (TypeError, OverflowError):
            packed = None
        if packed is not None and packed and min(packed) >= 0 and type(token_ids[0]) is not bool:
            return np.frombuffer(packed, dtype=np.int32)
    try:
        arr = np.asarray(token_ids)
    except (TypeError, ValueError, OverflowError) as exc:
        raise BadOutput(f"token ids are not a list of integers: {exc}") from exc
    if arr.size == 0:
        return _EMPTY
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise BadOutput(f"token ids are not a flat list of integers (got {arr.dtype} with shape {arr.shape})")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi > _INT32_MAX:
        bad = lo if lo < 0 else hi
        raise BadOutput(f"token id {bad} does not fit LoadGen's int32 response data")
    return np.ascontiguousarray(arr, dtype=np.int32)


def text_response(text: str) -> np.ndarray:
    """The output text as LoadGen's response data (its UTF-8 bytes, contiguous), or ``BadOutput``."""
    if not isinstance(text, str):
        raise BadOutput(f"the output text is not a string (got {type(text).__name__})")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (a JSON "\ud800" escape in the stream)
        raise BadOutput(f"the output text has no UTF-8 form: {exc}") from exc
    return np.frombuffer(data, dtype=np.uint8) if data else _EMPTY


def token_count(n_tokens: object) -> int:
    """The engine's output token count as LoadGen's int64 ``n_tokens``, or ``BadOutput``."""
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, np.integer)):
        raise BadOutput(f"token count {n_tokens!r} is not an integer")
    n = int(n_tokens)
    if not 0 <= n <= _INT64_MAX:
        raise BadOutput(f"token count {n} is outside LoadGen's range [0, 2^63 - 1]")
    return n


EVENT_LOOP_ENV = "INFERENCE_AUDIT_EVENT_LOOP"


def new_event_loop() -> tuple[asyncio.AbstractEventLoop, str]:
    """(loop, what it is): uvloop's when importable, unless ``INFERENCE_AUDIT_EVENT_LOOP=asyncio``."""
    choice = os.environ.get(EVENT_LOOP_ENV, "auto").strip().lower()
    if choice not in ("auto", "uvloop", "asyncio"):
        raise ValueError(f"{EVENT_LOOP_ENV}={choice!r}: expected auto, uvloop or asyncio")
    if choice != "asyncio" and uvloop is not None:
        return uvloop.new_event_loop(), f"uvloop {getattr(uvloop, '__version__', 'unknown')}"
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

    @property
    def native_id(self) -> int | None:
        """The loop thread's OS thread id (for its CPU accounting in ``/proc/self/task``)."""
        return self._thread.native_id

    def call(self, fn: Callable[[], Any], timeout_s: float | None = None) -> Any:
        """``fn()`` on the loop thread; its result."""

        async def _call() -> Any:
            return fn()

        return self.run(_call(), timeout_s)

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

    def count_failure(self, idx: int, kind: str, message: str, endpoint: str | None) -> None:
        """One failed sample (every failure is counted; the first few are kept as examples)."""
        self.failed += 1
        self.failures_by_kind[kind] += 1
        if len(self.failure_examples) < _MAX_FAILURE_EXAMPLES:
            self.failure_examples.append(
                {"sample_index": idx, "kind": kind, "message": message[:300], "endpoint": endpoint}
            )

    def count_output(self, n_tokens: int, ft_ns: int, done_ns: int, retokenized: bool) -> None:
        """One completed sample's output: its tokens, and its TPOT as LoadGen computes it."""
        self.output_tokens += n_tokens
        self.output_lengths.append(n_tokens)
        if n_tokens == 1:
            self.single_token_outputs += 1
        elif n_tokens > 1:
            self.tpot_ms.append((done_ns - ft_ns) / 1e6 / (n_tokens - 1))
        if retokenized:
            self.retokenized += 1

    def counts(self) -> SutCounts:
        """The counts as the run record holds them (``TestRecord.sut``)."""
        return SutCounts(
            issued=self.issued,
            completed=self.completed,
            failed=self.failed,
            failures_by_kind=dict(self.failures_by_kind),
            failure_examples=tuple(self.failure_examples),
            single_token_outputs=self.single_token_outputs,
            retokenized_outputs=self.retokenized,
            output_tokens=self.output_tokens,
            duplicate_completions=self.duplicate_completions,
        )

    def as_dict(self) -> dict[str, Any]:
        return {**self.counts().model_dump(mode="json"), "first_tokens": self.first_tokens}


def percentile_with_count(values: Sequence[float], pct: float) -> tuple[float | None, int]:
    """(p, n): the percentile of a snapshot, None when there are no values."""
    n = len(values)
    if n == 0:
        return None, 0
    return float(np.percentile(np.asarray(values[:n], dtype=np.float64), pct)), n


class SutBase(ABC):
    """What LoadGen and the runner see of either client (:class:`LoadGenSUT` in process,
    :class:`loadgen_sut.client_workers.WorkerPool` with workers): LoadGen's SUT handle over :meth:`issue`, the
    counts, the timeline and the deadline's state."""

    def __init__(self) -> None:
        self.stats = SutStats()
        self.timeline = TimelineColumns()  # one row per sample, appended when it is completed
        self.expired: str | None = None  # why the outstanding samples were completed as failed
        self.expired_samples = 0
        self._handle: Any = None

    @abstractmethod
    def issue(self, ids: list[int], indices: list[int]) -> None:
        """LoadGen's issue callback (on LoadGen's issue thread)."""

    def construct(self) -> Any:
        self._handle = lg.ConstructFastSUT(self.issue, self.flush)
        return self._handle

    def destroy(self) -> None:
        if self._handle is not None:
            lg.DestroyFastSUT(self._handle)
            self._handle = None

    def flush(self) -> None:
        return None


class LoadGenSUT(SutBase):
    """Owns the loop thread, the engine and the bookkeeping of one LoadGen test."""

    def __init__(
        self,
        engine: Engine,
        make_request: Callable[[int], GenerationRequest],
        *,
        report_first_token: bool,
        loop_thread: LoopThread | None,
        response_format: str = TOKEN_IDS,
    ) -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response format {response_format!r}: expected one of {', '.join(RESPONSE_FORMATS)}")
        super().__init__()
        self.engine = engine
        self._make_request = make_request
        self._report_ft = report_first_token
        self.response_format = response_format
        self._text = response_format == UTF8_TEXT
        self._lt = loop_thread
        # in-flight samples by query id: LoadGen reuses ids across runs (find-peak runs many in one test)
        self._inflight: dict[int, _Sample] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ LoadGen side

    def issue(self, ids: list[int], indices: list[int]) -> None:
        """LoadGen issue thread: hand over and return at once."""
        assert self._lt is not None, "issue() needs the loop thread (a client worker calls _start_batch on its loop)"
        self._lt.loop.call_soon_threadsafe(self._start_batch, ids, indices, time.perf_counter_ns())

    def expire(self, reason: str, timeout_s: float = 10.0) -> int:
        """From any thread but the loop's: complete every outstanding sample as failed (kind ``deadline``), and
        every sample issued from now on at once. Returns how many were outstanding."""
        assert self._lt is not None, "expire() needs the loop thread (a client worker calls _expire on its loop)"
        fut: Future[int] = Future()

        def _do() -> None:
            try:
                fut.set_result(self._expire(reason))
            except BaseException as exc:  # pragma: no cover - reported to the caller
                fut.set_exception(exc)

        self._lt.loop.call_soon_threadsafe(_do)
        return fut.result(timeout_s)

    def _expire(self, reason: str) -> int:
        if self.expired is None:
            self.expired = reason
        outstanding = list(self._inflight.values())
        for sample in outstanding:
            self._fail_sample(sample, DEADLINE, reason)
        self.expired_samples += len(outstanding)
        for task in list(self._tasks):  # their requests can only be wasted now: free the engine's slots
            task.cancel()
        return len(outstanding)

    # ------------------------------------------------------------------ loop side

    def _start_batch(self, ids: list[int], indices: list[int], issued_ns: int) -> None:
        loop = asyncio.get_running_loop()
        self.stats.issued += len(ids)
        for qid, idx in zip(ids, indices, strict=True):
            sample = _Sample(qid, idx, issued_ns)
            self._inflight[qid] = sample
            if self.expired is not None:  # past the deadline: LoadGen must be able to finish
                self._fail_sample(sample, DEADLINE, self.expired)
                self.expired_samples += 1
                continue
            try:  # may send the request right here (see Engine.generate)
                events = self.engine.generate_timed(
                    self._make_request(idx), partial(self._on_first_token, sample), sample.dispatched
                )
            except Exception as exc:  # an engine bug must not hang LoadGen: fail the sample visibly
                events = single_event(
                    Failed(error=EngineError(kind=ErrorKind.ENGINE, message=f"{type(exc).__name__}: {exc}"))
                )
            task = loop.create_task(self._run_sample(sample, events))
            self._tasks.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(self._tasks.discard)

    def _on_first_token(self, sample: _Sample, token_ids: Sequence[int]) -> None:
        """The engine's on_first_token callback, and the FirstToken event's handler: the first call counts."""
        if sample.ft_sent or sample.done:
            return
        sample.ft_sent = True
        sample.ft_ns = time.perf_counter_ns()
        if self._text:  # only its timing and bytes matter (a text response's ids are not logged)
            arr = self._first_text(token_ids) if self._report_ft else _EMPTY
        else:
            try:
                arr = response_array(token_ids)
            except BadOutput as exc:  # reported (empty) all the same; the sample fails when it ends
                arr = _EMPTY
                sample.bad_output = f"first token: {exc}"
        sample.partial = token_ids if sample.bad_output is None else ()
        if self._report_ft:
            self._send_first_token(sample, arr)
        self.stats.first_tokens += 1
        self.stats.ttft_ms.append((sample.ft_ns - sample.issued_ns) / 1e6)

    def _decode(self, token_ids: Sequence[int]) -> str | None:
        """The engine's tokenizer's text of ``token_ids``; None when it has none (or cannot decode them)."""
        try:
            return self.engine.detokenize(tuple(token_ids))
        except Exception:  # NotImplementedError: no tokenizer; anything else: ids it does not know
            return None

    def _first_text(self, token_ids: Sequence[int]) -> np.ndarray:
        """A text response's first-token bytes: the first ids decoded; empty where they cannot be."""
        text = self._decode(token_ids) if token_ids else None
        try:
            return text_response(text) if text is not None else _EMPTY
        except BadOutput:
            return _EMPTY

    def _output(self, ev: Finished) -> np.ndarray:
        """A finished sample's response data in the SUT's format (``BadOutput`` when it cannot be made)."""
        if not self._text:
            return response_array(ev.token_ids)
        text = ev.text if ev.text is not None else self._decode(ev.token_ids)
        if text is None:
            raise BadOutput("the engine returned no output text and cannot decode its ids (a text response needs one)")
        return text_response(text)

    def _send_first_token(self, sample: _Sample, arr: np.ndarray) -> None:
        """Hand LoadGen the first token (a client worker process overrides it: the event goes to the LoadGen process)."""
        ptr = arr.ctypes.data if arr.size else 0
        lg.FirstTokenComplete([lg.QuerySampleResponse(sample.qid, ptr, arr.nbytes)])

    def _hand_over(self, sample: _Sample, arr: np.ndarray, n_tokens: int, ok: bool, now_ns: int) -> None:
        """Hand LoadGen the completed sample (a client worker process overrides it, as :meth:`_send_first_token`)."""
        ptr = arr.ctypes.data if arr.size else 0
        try:
            lg.QuerySamplesComplete([lg.QuerySampleResponse(sample.qid, ptr, arr.nbytes, n_tokens)])
        except Exception:  # pragma: no cover - converted above; never leave LoadGen waiting
            lg.QuerySamplesComplete([lg.QuerySampleResponse(sample.qid, 0, 0, 0)])

    def _complete(self, sample: _Sample, arr: np.ndarray, n_tokens: int, ok: bool, now_ns: int) -> bool:
        """Hand LoadGen the (already converted) response, once: False when the sample was done already.

        ``now_ns``: when the completion reached the SUT (its timeline's ``completed_ns``); ``ok``: not a failure.
        """
        if sample.done:
            return False
        sample.done = True
        known = self._inflight.get(sample.qid) is sample  # False: LoadGen does not know this sample (any more)
        self.timeline.append(
            sample.idx,
            sample.issued_ns,
            sample.dispatched_ns,
            sample.ft_ns,
            now_ns,
            n_tokens if ok else NOT_MEASURED,
            ok and known,
        )
        if not known:
            self.stats.duplicate_completions += 1
            return False
        del self._inflight[sample.qid]
        self._hand_over(sample, arr, n_tokens, ok, now_ns)
        self.stats.completed += 1
        return True

    def _record_failure(self, sample: _Sample, err: EngineError) -> None:
        self._count_failure(sample, err.kind.value, err.message, err.endpoint)

    def _count_failure(self, sample: _Sample, kind: str, message: str, endpoint: str | None = None) -> None:
        if sample.failure is None:
            sample.failure = (kind, message, endpoint)
        self.stats.count_failure(sample.idx, kind, message, endpoint)

    async def _run_sample(self, sample: _Sample, events: AsyncIterator[GenerationEvent]) -> None:
        try:
            async for ev in events:
                if sample.done:  # completed meanwhile (the deadline): nothing more to hand LoadGen
                    break
                if isinstance(ev, FirstToken):
                    self._on_first_token(sample, ev.token_ids)
                elif isinstance(ev, Finished):
                    self._finish(sample, ev)
                    break
                elif isinstance(ev, Failed):
                    if not sample.done:
                        self._record_failure(sample, ev.error)
                        self._fail_complete(sample, ev.partial_token_ids or sample.partial)
                    break
        except asyncio.CancelledError:
            if not sample.done:
                self._record_failure(sample, EngineError(kind=ErrorKind.ENGINE, message="cancelled at shutdown"))
                self._fail_complete(sample, sample.partial)
            raise
        except Exception as exc:  # an engine bug must not hang LoadGen: fail the sample visibly
            if not sample.done:
                self._record_failure(sample, EngineError(kind=ErrorKind.ENGINE, message=f"{type(exc).__name__}: {exc}"))
                self._fail_complete(sample, sample.partial)
        finally:
            if not sample.done:
                self._record_failure(
                    sample, EngineError(kind=ErrorKind.TRUNCATED, message="engine stream ended without a terminal event")
                )
                self._fail_complete(sample, sample.partial)

    def _finish(self, sample: _Sample, ev: Finished) -> None:
        """A Finished event: convert and check everything first; a bad output fails the sample (once)."""
        if sample.done:
            return
        if not sample.ft_sent:  # an engine that skipped the first-token event
            self._on_first_token(sample, ev.token_ids[:1])
        try:
            if sample.bad_output is not None:
                raise BadOutput(sample.bad_output)
            arr = self._output(ev)
            n_tokens = token_count(ev.n_tokens)
        except BadOutput as exc:
            self._fail_sample(sample, BAD_OUTPUT, str(exc))
            return
        now_ns = time.perf_counter_ns()
        sample.retokenized = not ev.ids_from_engine
        if self._complete(sample, arr, n_tokens, True, now_ns):
            self.stats.count_output(n_tokens, sample.ft_ns, now_ns, not ev.ids_from_engine)

    def _fail_sample(self, sample: _Sample, kind: str, message: str) -> None:
        """Count a failure of ``kind`` and complete the sample with what it got (nothing when that is unusable)."""
        if sample.done:
            return
        self._count_failure(sample, kind, message)
        self._fail_complete(sample, sample.partial)

    def _fail_complete(self, sample: _Sample, partial: Sequence[int]) -> None:
        """Complete a failed sample with what it got (LoadGen still needs its first token first).

        Ids that do not convert are dropped (the failure is already counted): the sample completes empty. A text
        response completes empty (0 tokens), as the reference SUT completes a failed request.
        """
        if sample.done:
            return
        try:
            arr = _EMPTY if self._text else response_array(partial)
        except BadOutput:
            arr = _EMPTY
        if not sample.ft_sent:
            sample.ft_sent = True
            if self._report_ft:
                self._send_first_token(sample, arr[:1])
        self._complete(sample, arr, int(arr.size), False, time.perf_counter_ns())

    def timeline_columns(self) -> TimelineColumns:
        """The test's timeline, with a row (not completed, not ok) for each sample still outstanding.

        Call it once, after LoadGen returned and the loop thread stopped (it reads the in-flight table)."""
        for sample in self._inflight.values():
            if not sample.done:
                sample.done = True
                self.timeline.append(
                    sample.idx, sample.issued_ns, sample.dispatched_ns, sample.ft_ns, NOT_MEASURED, NOT_MEASURED, False
                )
        return self.timeline


class _Sample:
    """One issued sample's state on the loop thread (times: ``perf_counter_ns``, ``NOT_MEASURED`` until known)."""

    __slots__ = (
        "bad_output",
        "dispatched_ns",
        "done",
        "failure",
        "ft_ns",
        "ft_sent",
        "idx",
        "issued_ns",
        "partial",
        "qid",
        "retokenized",
    )

    def __init__(self, qid: int, idx: int, issued_ns: int) -> None:
        self.qid = qid
        self.idx = idx
        self.issued_ns = issued_ns
        self.dispatched_ns = NOT_MEASURED  # the engine's on_dispatch: the request handed to the socket
        self.ft_sent = False
        self.ft_ns = NOT_MEASURED  # the first token reached the SUT
        self.partial: Sequence[int] = ()
        self.done = False  # completed to LoadGen (exactly once)
        self.bad_output: str | None = None
        self.failure: tuple[str, str, str | None] | None = None  # the first failure counted: (kind, message, endpoint)
        self.retokenized = False  # its ids are the tokenizer's, not the engine's

    def dispatched(self) -> None:
        """The engine's ``on_dispatch`` callback (the last call counts: a request re-sent on a fresh connection)."""
        self.dispatched_ns = time.perf_counter_ns()
