"""One LoadGen test in one process: ``python -m loadgen_sut.lgtest SPEC.json``.

LoadGen keeps process-wide state (its compiled mlperf.conf is applied only on the first
``FromConfig`` of a process; the logger is a singleton), so the runner starts a fresh process
for every test, in the test's own working directory (where an ``audit.config`` is present only
for a compliance test). This module writes ``sut_result.json`` next to LoadGen's logs.

Exit codes: 0 test ran (validity is judged from the logs), 3 engine unavailable, 4 setup error.

Deadline (``TestSpec.deadline_s``, from the runner): the runner stops this process when it passes
(SIGINT, then SIGKILL). Shortly before (:func:`deadline_margins`), a watchdog thread here completes
every outstanding sample as failed and every later one at once, so LoadGen finishes and writes its
logs; the test is then recorded with status ``deadline``.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg
from pydantic import BaseModel, ConfigDict, Field, model_validator

from checker.findings import Finding, UnusableInput
from checker.printable import printable
from checker.report.atomic import write_atomic
from loadgen_sut.client_diag import CpuSnapshot, LoopProbes, diagnostics, pool_diagnostics
from loadgen_sut.client_workers import WorkerPool, WorkerStartError
from loadgen_sut.datasets import Dataset, load_dataset
from loadgen_sut.engines.base import Engine, EngineUnavailable, GenerationRequest
from loadgen_sut.engines.factory import EngineSpec, build_engine, build_tokenizer
from loadgen_sut.engines.simulated import simulated_answers, simulated_vocabulary
from loadgen_sut.engines.tokenizers import Tokenizer
from loadgen_sut.generation import GenerationSpec
from loadgen_sut.interrupts import end_with_runner
from loadgen_sut.progress import Progress, audit_overrides, planned_load
from loadgen_sut.record import LengthStats, Percentile, ProcessDataset, SutResult, TestStatus
from loadgen_sut.settings import (
    OptionalSetting,
    SettingsError,
    TestMode,
    TestSettingsModel,
    compare_with_loadgen,
    from_loadgen,
    read_back_from_log,
    require_loadgen_settings,
    to_loadgen,
    unavailable_loadgen_settings,
    unavailable_text,
)
from loadgen_sut.sut import LoadGenSUT, LoopThread, percentile_with_count
from loadgen_sut.timeline import TIMELINE_FILE
from loadgen_sut.timer_slack import tighten_timer_slack, timer_slack_ns

RESULT_FILE = "sut_result.json"
DETAIL_LOG = "mlperf_log_detail.txt"
EXIT_ENGINE_UNAVAILABLE = 3
EXIT_SETUP = 4
EXIT_INTERRUPTED = 130
AUDIT_CONFIG = "audit.config"
STARTED_ENV = "INFERENCE_AUDIT_TEST_STARTED"  # time.time() when the runner started this process


class TestSpec(BaseModel):
    """What the child process runs; written by the runner as JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    __test__ = False  # not a pytest class

    name: str  # "performance", "accuracy", "TEST06", "find-peak"
    round_name: str
    settings: TestSettingsModel
    user_conf: str
    dataset: str
    dataset_limit: int | None = None
    engine: EngineSpec
    generation: GenerationSpec
    audit: bool = False  # an audit.config is expected in the working directory
    progress_interval_s: float = 5.0
    engine_start_timeout_s: float = 600.0
    deadline_s: float | None = Field(
        default=None, gt=0, allow_inf_nan=False
    )  # wall clock from the process start

    @model_validator(mode="after")
    def _sane(self) -> TestSpec:
        """Values that would hang or crash the test: refused before any process starts."""
        gen, eng = self.generation, self.engine
        if gen.min_new_tokens is not None and gen.min_new_tokens > gen.max_new_tokens:
            raise ValueError(f"min_new_tokens {gen.min_new_tokens} > max_new_tokens {gen.max_new_tokens}")
        if eng.max_concurrency < 1 or eng.batch_size < 1:
            raise ValueError("engine max_concurrency and batch_size must be at least 1")
        for name in ("request_timeout_s", "idle_timeout_s", "connect_timeout_s"):
            v = getattr(eng, name)
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"engine {name} must be a positive number of seconds, not {v}")
        if self.dataset_limit is not None and self.dataset_limit < 1:
            raise ValueError(f"dataset_limit {self.dataset_limit} < 1")
        return self


def deadline_margins(deadline_s: float) -> tuple[float, float]:
    """(expire_before_s, signal_before_s): how long before its deadline a test completes its outstanding samples
    as failed (this process), and when the runner sends SIGINT (SIGKILL comes at the deadline itself)."""
    signal_before = min(15.0, max(1.0, 0.1 * deadline_s))
    expire_before = min(60.0, max(2.5 * signal_before, 0.25 * deadline_s))
    return min(expire_before, 0.9 * deadline_s), min(signal_before, 0.5 * deadline_s)


class _Watchdog:
    """Calls ``sut.expire`` at ``at`` (time.monotonic) unless stopped first."""

    def __init__(self, sut: LoadGenSUT | WorkerPool, at: float, reason: str) -> None:
        self._sut, self._at, self._reason = sut, at, reason
        self._stop = threading.Event()
        self.fired = False
        self._thread = threading.Thread(target=self._run, name="test-deadline", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        if self._stop.wait(max(0.0, self._at - time.monotonic())):
            return
        self.fired = True
        try:
            n = self._sut.expire(self._reason)
        except Exception as exc:  # the loop is gone or stuck: the runner's SIGKILL ends the test
            print(
                printable(f"inference-audit: deadline: could not complete the outstanding samples: {exc}"),
                file=sys.stderr,
            )
            return
        print(
            f"inference-audit: {self._reason}: {n} outstanding sample(s) completed as failed", file=sys.stderr
        )

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def _write(out: Path, result: SutResult) -> None:
    """Write sut_result.json through the one atomic writer (a random temporary beside it, then renamed)."""
    text = json.dumps(result.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    write_atomic(out / RESULT_FILE, text.encode("utf-8"))


def requests_of(dataset: Dataset, gen: GenerationSpec) -> dict[int, GenerationRequest]:
    """The test's requests by sample position (what LoadGen's QSL index names)."""
    return {
        pos: GenerationRequest(
            sample_index=s.index,
            input_ids=tuple(s.input_ids) if s.input_ids is not None else None,
            prompt=s.prompt,
            messages=s.messages,
            max_new_tokens=gen.max_new_tokens,
            min_new_tokens=gen.min_new_tokens,
            greedy=gen.greedy,
            ignore_eos=gen.ignore_eos,
            temperature=gen.temperature,
            top_p=gen.top_p,
            top_k=gen.top_k,
            skip_special_tokens=gen.skip_special_tokens,
        )
        for pos, s in enumerate(dataset.samples)
    }


def load_test_data(spec: TestSpec, engine_spec: EngineSpec) -> tuple[Dataset, Tokenizer | None]:
    """The test's data set and the engine's tokenizer. Raises ``UnusableInput``."""
    tokenizer = build_tokenizer(engine_spec, [])
    dataset = load_dataset(spec.dataset, tokenizer=tokenizer, limit=spec.dataset_limit)
    if engine_spec.kind == "simulated" and engine_spec.tokenizer_dir is None:
        tokenizer = build_tokenizer(engine_spec, simulated_vocabulary(dataset))
    return dataset, tokenizer


def load_engine(spec: TestSpec, engine_spec: EngineSpec) -> tuple[Dataset, Engine]:
    """The test's data set and its engine (not started), built from ``engine_spec`` (a client worker's share of the
    test's engine: its endpoints and concurrency). Raises ``UnusableInput``."""
    dataset, tokenizer = load_test_data(spec, engine_spec)
    references = simulated_answers(dataset)  # what the simulated engine answers (other engines ignore it)
    return dataset, build_engine(engine_spec, tokenizer, references)


class _Refused(Exception):
    """A test that does not run: its status and error go to sut_result.json and the process exits with ``code``;
    ``say`` is the label of the line printed on stderr (None: nothing printed)."""

    def __init__(self, status: str, error: str, code: int = EXIT_SETUP, say: str | None = "error") -> None:
        super().__init__(error)
        self.status, self.error, self.code, self.say = status, error, code, say

    def report(self, spec: TestSpec, workdir: Path) -> int:
        result = SutResult(test=spec.name, status="setup")
        _write(workdir, result.model_copy(update={"status": self.status, "error": self.error}))
        if self.say is not None:
            print(printable(f"inference-audit: {self.say}: {self.error}"), file=sys.stderr)
        return self.code


@dataclass(frozen=True)
class _Prepared:
    """What a test runs with, before any engine starts: its data set, its engine (None with client workers: each
    worker builds its own), LoadGen's settings and how they compare with the plan."""

    dataset: Dataset
    engine: Engine | None
    ts: Any  # mlperf_loadgen.TestSettings
    actual: TestSettingsModel
    mismatches: list[Finding]
    missing: tuple[
        OptionalSetting, ...
    ]  # settings the installed LoadGen lacks (read back from the log after)

    @property
    def report_first_token(self) -> bool:
        return self.actual.use_token_latencies and self.actual.loadgen_scenario.value != "Offline"


def _prepare(spec: TestSpec, workdir: Path) -> _Prepared:
    """The checks and loads before the engine starts: the audit.config the test expects, the LoadGen settings it
    needs, its data (and engine), LoadGen's TestSettings; :class:`_Refused` when one fails."""
    audit_present = (workdir / AUDIT_CONFIG).exists()
    if audit_present != spec.audit:
        raise _Refused(
            "setup_error",
            f"{workdir / AUDIT_CONFIG} is present: LoadGen would apply it to this {spec.name} test"
            if audit_present
            else f"{spec.name} needs {AUDIT_CONFIG} in {workdir}",
        )
    try:  # before the engine starts: a setting this LoadGen release lacks but the run needs refuses it
        missing = require_loadgen_settings(spec.settings, unavailable_loadgen_settings())
    except SettingsError as exc:
        raise _Refused("setup_error", str(exc)) from None
    engine: Engine | None = None
    try:
        if spec.engine.client_workers:
            dataset, _ = load_test_data(spec, spec.engine)
        else:
            dataset, engine = load_engine(spec, spec.engine)
    except UnusableInput as exc:
        raise _Refused("setup_error", str(exc)) from None
    if not dataset.samples:
        raise _Refused("setup_error", f"dataset {spec.dataset!r} has no samples", say=None)
    try:
        ts = to_loadgen(spec.settings, Path(spec.user_conf))
    except SettingsError as exc:
        raise _Refused("setup_error", str(exc)) from None
    actual = from_loadgen(ts, spec.settings.scenario, spec.settings.conf_model, fallback=spec.settings)
    mismatches: list[Finding] = compare_with_loadgen(spec.settings, actual, spec.round_name)
    return _Prepared(dataset, engine, ts, actual, mismatches, missing)


@dataclass(frozen=True)
class _Client:
    """The started client: the worker pool, or the engine on this process's loop thread."""

    pool: WorkerPool | None
    loop_thread: LoopThread | None
    engine: Engine | None
    ids_available: bool


def _start_client(spec: TestSpec, prep: _Prepared, expire_at: float | None) -> _Client:
    """Start the worker pool or the engine, within the start timeout (and before the deadline's grace begins)."""
    start_timeout = spec.engine_start_timeout_s
    if expire_at is not None:  # the engine must be up before the deadline's grace begins
        start_timeout = max(0.1, min(start_timeout, expire_at - time.monotonic()))
    if prep.engine is None:
        pool = WorkerPool(spec, report_first_token=prep.report_first_token)
        try:
            pool.start(start_timeout)
        except WorkerStartError as exc:
            if exc.status == "engine_unavailable":
                raise _Refused(exc.status, str(exc), EXIT_ENGINE_UNAVAILABLE, "engine unavailable") from None
            raise _Refused("setup_error", str(exc)) from None
        return _Client(pool, None, None, pool.ids_available)
    try:
        loop_thread = LoopThread()
    except ValueError as exc:  # INFERENCE_AUDIT_EVENT_LOOP names no loop this machine has
        raise _Refused("setup_error", str(exc)) from None
    try:
        loop_thread.run(prep.engine.start(), timeout_s=start_timeout)
    except (EngineUnavailable, TimeoutError) as exc:
        loop_thread.stop()
        msg = str(exc) or f"engine did not start within {start_timeout:g} s"
        raise _Refused("engine_unavailable", msg, EXIT_ENGINE_UNAVAILABLE, "engine unavailable") from None
    return _Client(None, loop_thread, prep.engine, prep.engine.ids_available)


def _refuse_without_ids(spec: TestSpec, client: _Client) -> None:
    """A test that logs output token ids needs an engine that returns them (or a tokenizer): else the client is
    closed and the test refused."""
    logs_ids = (
        spec.generation.response_format == "token_ids"
    )  # a text response logs the engine's text, no ids
    if not (
        (spec.settings.mode is TestMode.ACCURACY_ONLY or spec.audit) and logs_ids and not client.ids_available
    ):
        return
    if client.pool is not None:
        client.pool.close()
    elif client.loop_thread is not None and client.engine is not None:
        client.loop_thread.run(client.engine.close(), timeout_s=30)
        client.loop_thread.stop()
    raise _Refused(
        "setup_error",
        f"the {spec.name} test logs output token ids, but this engine returns none and no tokenizer "
        "was given: pass --tokenizer DIR (the served model's tokenizer)",
    )


def _log_settings(workdir: Path) -> Any:
    """LoadGen's log settings: its logs in ``workdir``, no summary on stdout, no trace."""
    log_out = lg.LogOutputSettings()
    log_out.outdir = str(workdir)
    log_out.copy_summary_to_stdout = False
    log_settings = lg.LogSettings()
    log_settings.log_output = log_out
    log_settings.enable_trace = False
    return log_settings


def _loadgen_sut(spec: TestSpec, prep: _Prepared, client: _Client) -> LoadGenSUT | WorkerPool:
    """What LoadGen issues to: the worker pool, or this process's SUT over the engine (every request encoded now,
    not on LoadGen's issue path)."""
    if client.pool is not None:
        return client.pool
    assert client.loop_thread is not None and client.engine is not None
    requests = requests_of(prep.dataset, spec.generation)
    client.engine.prepare(requests)
    return LoadGenSUT(
        client.engine,
        requests.__getitem__,
        report_first_token=prep.report_first_token,
        loop_thread=client.loop_thread,
        response_format=spec.generation.response_format,
    )


@dataclass
class _Measured:
    """One LoadGen test as it ran: its outcome and what the client measured around it."""

    status: TestStatus
    error: str | None
    qsl: Any  # LoadGen's QSL handle, freed after the SUT
    t0_ns: int  # the timeline's t0
    wall_s: float
    cpu_before: CpuSnapshot
    cpu_after: CpuSnapshot
    usage_cpu_s: float  # this process's user + system CPU over the test
    slack_ns: int | None
    probes: LoopProbes


def _measure(
    spec: TestSpec,
    workdir: Path,
    prep: _Prepared,
    client: _Client,
    sut: LoadGenSUT | WorkerPool,
    expire_at: float | None,
) -> _Measured:
    """Run LoadGen's test on ``sut``, with the progress line, the deadline's watchdog and the client's probes."""
    n = len(prep.dataset.samples)
    perf_count = min(n, prep.actual.performance_sample_count or n)
    qsl = lg.ConstructQSL(n, perf_count, lambda _s: None, lambda _s: None)
    sut_handle = sut.construct()
    audit = audit_overrides((workdir / AUDIT_CONFIG).read_text(encoding="utf-8")) if spec.audit else None
    plan = planned_load(
        prep.actual, n, audit, test=spec.name
    )  # the plan the runner printed: the progress line's ETA
    progress = Progress(spec.name, sut.stats, spec.progress_interval_s, plan=plan)
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    # Everything built so far (data set, requests, encoded bodies, engine) lives for the whole test: out of the
    # cyclic GC's reach, a full collection cannot stall the loop thread. With the 13,368 llama3.1-8b requests
    # in memory one takes 24 ms; frozen, microseconds.
    gc.collect()
    gc.freeze()
    # this thread runs LoadGen's issue loop: wake at each scheduled time, not up to 50 us after it
    tighten_timer_slack()
    slack_ns = timer_slack_ns()
    probes = LoopProbes()  # client self-diagnostics (loadgen_sut/client_diag.py)
    if client.pool is not None:
        client.pool.begin()  # each worker installs its probes
        watched_tid = client.pool.reporter_native_id
    else:
        assert client.loop_thread is not None
        client.loop_thread.call(probes.install, timeout_s=10)
        watched_tid = client.loop_thread.native_id
    cpu_before = CpuSnapshot.take(watched_tid)
    t0_ns = time.perf_counter_ns()  # the timeline's t0
    t0 = time.perf_counter()
    watchdog = None
    if expire_at is not None and spec.deadline_s is not None:
        watchdog = _Watchdog(
            sut, expire_at, f"the {spec.name} test's deadline of {spec.deadline_s:g} s is near"
        )
        watchdog.start()
    progress.start()
    status: TestStatus = "finished"
    error = None
    try:
        lg.StartTestWithLogSettings(sut_handle, qsl, prep.ts, _log_settings(workdir), AUDIT_CONFIG)
    except Exception as exc:  # pragma: no cover - LoadGen raises only on misuse
        status, error = "loadgen_error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    wall_s = time.perf_counter() - t0
    cpu_after = CpuSnapshot.take(watched_tid)
    if watchdog is not None:
        watchdog.stop()
    progress.stop()
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    return _Measured(status, error, qsl, t0_ns, wall_s, cpu_before, cpu_after, cpu_s, slack_ns, probes)


def _shut_down(client: _Client, sut: LoadGenSUT | WorkerPool, m: _Measured, close_by: float | None) -> None:
    """Collect the client's diagnostics, judge how the test ended (a worker died, the deadline expired), close
    the client and free LoadGen's SUT and QSL; within what is left before the runner's signal."""
    close_timeout = 30.0 if close_by is None else max(0.5, min(30.0, (close_by - time.monotonic()) / 2))
    if client.pool is not None:
        client.pool.finish(close_timeout)  # each worker's diagnostics and engine info
    else:
        assert client.loop_thread is not None
        try:
            client.loop_thread.call(m.probes.remove, timeout_s=10)
        except Exception as exc:  # a stuck loop: the probes die with the process
            print(printable(f"inference-audit: could not stop the client probes: {exc}"), file=sys.stderr)
    if client.pool is not None and client.pool.died is not None and m.status == "finished":
        m.status, m.error = "client_worker_died", client.pool.died
    elif sut.expired is not None and m.status == "finished":
        m.status = "deadline"
        m.error = (
            f"{sut.expired}: {sut.expired_samples} sample(s) still outstanding or issued after it were completed as "
            "failed so that LoadGen could finish"
        )
    if client.pool is not None:
        client.pool.close()
    else:
        assert client.loop_thread is not None and client.engine is not None
        try:
            client.loop_thread.run(client.engine.close(), timeout_s=close_timeout)
        except Exception as exc:  # closing must not lose the result
            m.error = (m.error or "") + f" engine close: {type(exc).__name__}: {exc}"
        client.loop_thread.stop()
    sut.destroy()
    lg.DestroyQSL(m.qsl)


def _result(
    spec: TestSpec,
    workdir: Path,
    prep: _Prepared,
    client: _Client,
    sut: LoadGenSUT | WorkerPool,
    m: _Measured,
) -> SutResult:
    """sut_result.json: the test's outcome, its settings as LoadGen applied them, and what the client measured
    (the timeline written beside LoadGen's logs)."""
    columns = sut.timeline_columns()  # one line per issued sample, beside LoadGen's logs
    timeline: str | None = TIMELINE_FILE
    error = m.error
    try:
        columns.write(workdir / TIMELINE_FILE, m.t0_ns)
    except OSError as exc:  # the result must still be written
        timeline = None
        error = (error or "") + f" timeline not written: {exc.strerror or exc}"
    cpu_s = m.usage_cpu_s
    if client.pool is not None:
        client_diag = pool_diagnostics(client.pool, m.cpu_before, m.cpu_after)
        cpu_s = client_diag.process_cpu_s  # the LoadGen process and its workers: the whole client
        engine_info, event_loop = client.pool.engine_info(), client.pool.event_loop()
    else:
        assert client.engine is not None
        client_diag = diagnostics(columns, m.probes, m.cpu_before, m.cpu_after)
        engine_info = client.engine.info()
        event_loop = client.loop_thread.kind if client.loop_thread is not None else None
    # what Python could not read back, from the log, compared again; not for a compliance test, whose
    # audit.config changes settings on purpose after FromConfig (6.0.x's read-back, too, is before it)
    actual, mismatches = prep.actual, prep.mismatches
    if prep.missing and not spec.audit:
        actual = read_back_from_log(actual, workdir / DETAIL_LOG, prep.missing)
        mismatches = compare_with_loadgen(spec.settings, actual, spec.round_name)
    stats = sut.stats
    ttft = percentile_with_count(stats.ttft_ms, 99)
    tpot = percentile_with_count(stats.tpot_ms, 99)
    dataset = prep.dataset
    return SutResult(
        test=spec.name,
        status=m.status,
        error=error,
        engine=engine_info,
        event_loop=event_loop,
        issue_timer_slack_ns=m.slack_ns,
        gc_frozen_objects=gc.get_freeze_count(),
        dataset=ProcessDataset(
            name=dataset.name, samples=len(dataset.samples), simulated=bool(dataset.simulated)
        ),
        input_tokens=_length_stats([len(s.input_ids) for s in dataset.samples if s.input_ids is not None]),
        output_tokens=_length_stats(stats.output_lengths),
        loadgen_settings=actual,
        settings_mismatches=tuple(mismatches),
        loadgen_unavailable_settings=tuple(unavailable_text(prep.missing)),
        sut=stats.counts(),
        first_tokens=stats.first_tokens,
        client_ttft_p99_ms=Percentile(value=ttft[0], count=ttft[1]),
        client_tpot_p99_ms=Percentile(value=tpot[0], count=tpot[1]),
        wall_s=m.wall_s,
        process_cpu_s=cpu_s,
        cpu_us_per_query=(cpu_s / stats.completed * 1e6) if stats.completed else None,
        timeline=timeline,
        client_diagnostics=client_diag,
    )


def run_test(spec: TestSpec, workdir: Path, started: float | None = None) -> int:
    """Run one LoadGen test with its logs in ``workdir`` (the current directory).

    ``started``: ``time.monotonic()`` at the process start, from which ``spec.deadline_s`` counts.
    """
    started = time.monotonic() if started is None else started
    expire_at = close_by = None
    if spec.deadline_s is not None:
        expire_before, signal_before = deadline_margins(spec.deadline_s)
        expire_at = started + spec.deadline_s - expire_before
        close_by = started + spec.deadline_s - signal_before
    sys.setswitchinterval(0.0005)  # LoadGen's threads get the GIL back quickly (loadgen-notes §3.3)
    try:
        prep = _prepare(spec, workdir)
        client = _start_client(spec, prep, expire_at)
        _refuse_without_ids(spec, client)
    except _Refused as refused:
        return refused.report(spec, workdir)
    sut = _loadgen_sut(spec, prep, client)
    measured = _measure(spec, workdir, prep, client, sut, expire_at)
    _shut_down(client, sut, measured, close_by)
    _write(workdir, _result(spec, workdir, prep, client, sut, measured))
    return 0


def _length_stats(values: list[int]) -> LengthStats:
    if not values:
        return LengthStats(count=0)
    return LengthStats(count=len(values), min=min(values), max=max(values), mean=sum(values) / len(values))


def _process_started() -> float:
    """time.monotonic() of the moment the runner started this process (its deadline counts from there)."""
    now = time.monotonic()
    try:
        since = time.time() - float(os.environ.get(STARTED_ENV, ""))
    except ValueError:
        return now
    return now - since if 0 <= since < 3600 else now


def main(argv: list[str] | None = None) -> int:
    started = _process_started()
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m loadgen_sut.lgtest SPEC.json", file=sys.stderr)
        return 2
    spec_path = Path(args[0])
    try:
        spec = TestSpec.model_validate_json(spec_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(printable(f"inference-audit: error: {spec_path}: {exc}"), file=sys.stderr)
        return 2
    try:
        end_with_runner()  # SIGTERM as SIGINT, and SIGINT when the runner dies
        return run_test(spec, Path.cwd(), started)
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent writes the run record
        print(f"inference-audit: {spec.name} interrupted", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # LoadGen's own threads may still run (SIGINT can end StartTest early): the interpreter's normal
        # shutdown would tear the objects they use down under them (measured: SIGSEGV). Leave at once.
        os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
