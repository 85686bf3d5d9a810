"""One LoadGen test in its own process (``python -m loadgen_sut.lgtest``), its wall-clock deadline, and what it
left behind, read back as the test's record (:class:`~loadgen_sut.record.TestRecord`).

Every LoadGen test has a wall-clock deadline (:func:`loadgen_test_deadline_s`, or ``RunRequest.deadline_s``):
when it passes, the child is stopped (SIGINT, then SIGKILL), the test is recorded as ``deadline``,
no further test starts and the run is INCOMPLETE. Shortly before it, the child completes its
outstanding samples as failed so that LoadGen can finish and write its logs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from checker.findings import UnusableInput
from checker.parsers.mllog import DetailLog, parse_detail_file
from loadgen_sut.client_diag import summary_line as client_summary_line
from loadgen_sut.compliance import AUDIT_TESTS
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.interrupts import PARENT_ENV
from loadgen_sut.lgtest import EXIT_ENGINE_UNAVAILABLE, RESULT_FILE, STARTED_ENV, deadline_margins
from loadgen_sut.progress import planned_load
from loadgen_sut.record import LoadGenResult, Percentile, SutCounts, SutResult, TestRecord
from loadgen_sut.settings import TestSettingsModel
from rules.models import Benchmark, Round, Scenario

Printer = Callable[[str], None]

PROBE_TIMEOUT_S = 300.0
ENGINE_START_TIMEOUT_S = 600.0  # TestSpec's default: the child waits this long for the engine
DEADLINE_FACTOR = 3.0  # the expected duration of a test, times this ...
DEADLINE_MARGIN_S = 120.0  # ... plus the engine start, one request timeout and this


def probe_settings(settings: TestSettingsModel, conf_path: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    """FromConfig in a fresh process: what the installed LoadGen will apply."""
    path = workdir / "settings.probe.json"
    path.write_text(settings.model_dump_json(), encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.probe", str(path), str(conf_path)]
    try:
        return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise UnusableInput(
            f"LoadGen did not read the settings within {PROBE_TIMEOUT_S:g} s", path=str(conf_path)
        ) from exc


def expected_duration_s(settings: TestSettingsModel, n_samples: int) -> float:
    """How long LoadGen's test should run with these (read-back) settings, the SUT keeping up
    (:func:`loadgen_sut.progress.planned_load`: the plan the run prints and the progress line's ETA)."""
    return planned_load(settings, n_samples).duration_s


def loadgen_test_deadline_s(settings: TestSettingsModel, n_samples: int, engine: EngineSpec) -> float:
    """A LoadGen test's wall-clock deadline: engine start + expected duration x factor + a request timeout + margin."""
    return (
        ENGINE_START_TIMEOUT_S
        + expected_duration_s(settings, n_samples) * DEADLINE_FACTOR
        + engine.request_timeout_s
        + DEADLINE_MARGIN_S
    )


def run_child(spec_path: Path, cwd: Path, deadline_s: float | None = None) -> tuple[int, str | None]:
    """One LoadGen test in a fresh process (its output goes straight to the terminal).

    Returns (exit code, how it was stopped at its deadline: None when it ended by itself). At ``deadline_s``
    minus a grace (:func:`~loadgen_sut.lgtest.deadline_margins`) the child gets SIGINT, at ``deadline_s`` SIGKILL.
    """
    env = {**os.environ, STARTED_ENV: repr(time.time()), PARENT_ENV: str(os.getpid())}
    proc = subprocess.Popen([sys.executable, "-m", "loadgen_sut.lgtest", str(spec_path)], cwd=cwd, env=env)
    t0 = time.monotonic()
    try:
        if deadline_s is None:
            return proc.wait(), None
        _, signal_before = deadline_margins(deadline_s)
        try:
            return proc.wait(max(0.0, t0 + deadline_s - signal_before - time.monotonic())), None
        except subprocess.TimeoutExpired:
            pass
        proc.send_signal(signal.SIGINT)
        try:
            return proc.wait(max(0.1, t0 + deadline_s - time.monotonic())), "stopped with SIGINT"
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(), "killed (SIGKILL) after SIGINT did not stop it"
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise


def _percentile(log: DetailLog, kind: str) -> Percentile | None:
    value = log.percentile_ns(kind, 99.0)
    if value is None:
        return None
    return Percentile(value=value, count=log.int_value("result_query_count") or 0)


_PEAK = re.compile(r"Found peak performance field: ([0-9.]+)")


def _peak_qps(log: DetailLog) -> float | None:
    for message in log.values("generic_message"):
        m = _PEAK.search(str(message))
        if m:
            return float(m.group(1))
    return None


def loadgen_result(log: DetailLog, rnd: Round, bench: Benchmark, scenario: Scenario) -> LoadGenResult:
    key = rnd.result_key(bench, scenario)
    return LoadGenResult(
        result_validity=log.result_validity,
        early_stopping_met=log.early_stopping_met,
        min_duration_met=log.bool_value("result_min_duration_met"),
        perf_constraints_met=log.bool_value("result_perf_constraints_met"),
        invalid_reason=log.str_value("result_invalid_reason"),
        num_errors=log.num_errors(),
        error_keys=tuple(log.error_keys),
        result_key=key,
        result_value=log.float_value(key) if key else None,
        ttft_p99_ns=_percentile(log, "first_token"),
        tpot_p99_ns=_percentile(log, "time_per_output_token"),
        query_count=log.int_value("result_query_count"),
        loadgen_version=log.loadgen_version,
        peak_target_qps=_peak_qps(log),
    )


def _read_sut_result(res_path: Path) -> tuple[SutResult | None, str | None]:
    """The test process's ``sut_result.json`` (:class:`SutResult`), or why there is none: not written (the process
    died first) or not valid (a crash while writing it, a process of another version)."""
    if not res_path.is_file():
        return None, None
    try:
        return SutResult.model_validate_json(res_path.read_bytes()), None
    except (OSError, ValueError) as exc:
        return None, f"{res_path.name} unreadable: {str(exc).splitlines()[0][:200]}"


def read_test_record(
    name: str, test_dir: Path, run_dir: Path, rc: int, log: LoadGenResult | None
) -> tuple[TestRecord, SutResult | None]:
    result, unreadable = _read_sut_result(test_dir / RESULT_FILE)
    status = result.status if result is not None else "crashed"
    if rc not in (0, EXIT_ENGINE_UNAVAILABLE) and status == "finished":
        status = "crashed"  # wrote a result, then died
    error = (result.error if result is not None else unreadable) or (
        None if rc == 0 else f"test process exited with code {rc}"
    )
    if result is None:
        return TestRecord(name=name, directory=str(test_dir.relative_to(run_dir)), status=status, error=error, loadgen=log), None
    return TestRecord(
        name=name,
        directory=str(test_dir.relative_to(run_dir)),
        status=status,
        error=error,
        loadgen=log,
        sut=result.sut or SutCounts(),
        client_ttft_p99_ms=result.client_ttft_p99_ms,
        client_tpot_p99_ms=result.client_tpot_p99_ms,
        output_tokens=result.output_tokens,
        wall_s=result.wall_s,
        process_cpu_s=result.process_cpu_s,
        cpu_us_per_query=result.cpu_us_per_query,
        event_loop=result.event_loop,
        issue_timer_slack_ns=result.issue_timer_slack_ns,
        gc_frozen_objects=result.gc_frozen_objects,
        loadgen_settings=result.loadgen_settings,
        client=result.client_diagnostics,
    ), result



def say_test_summary(t: TestRecord, say: Printer) -> None:
    lgr = t.loadgen
    say(f"  {t.name}: {t.status}; SUT issued {t.sut.issued}, completed {t.sut.completed}, failed {t.sut.failed}")
    if t.sut.failed:
        for ex in t.sut.failure_examples[:5]:
            say(f"    failure sample {ex.get('sample_index')}: {ex.get('kind')}: {ex.get('message')}")
    if lgr is not None:
        parts = [f"LoadGen {lgr.result_validity or '(no result: accuracy mode)'}"]
        if t.name in AUDIT_TESTS and lgr.result_validity not in (None, "VALID"):
            parts[0] += (
                f" (not {t.name}'s verdict: its audit.config sets min_duration 0 and its own query count, so LoadGen's "
                f"duration and early-stopping checks do not apply; {t.name} passes or fails by its verification below)"
            )
        if lgr.result_key and lgr.result_value is not None:
            parts.append(f"{lgr.result_key} = {lgr.result_value:g}")
        if lgr.ttft_p99_ns and lgr.ttft_p99_ns.value is not None:
            parts.append(f"TTFT p99 {lgr.ttft_p99_ns.value / 1e6:.1f} ms")
        if lgr.tpot_p99_ns and lgr.tpot_p99_ns.value is not None:
            parts.append(f"TPOT p99 {lgr.tpot_p99_ns.value / 1e6:.2f} ms")
        if lgr.query_count is not None:
            parts.append(f"n={lgr.query_count}")
        say("    " + "; ".join(parts))
        if lgr.peak_target_qps is not None:
            say(f"    peak VALID target QPS found by LoadGen: {lgr.peak_target_qps:g}")
    if t.cpu_us_per_query is not None:
        say(f"    SUT process CPU {t.process_cpu_s:.2f} s = {t.cpu_us_per_query:.0f} us/query (LoadGen threads included)")
    if t.client is not None:
        say(f"    {client_summary_line(t.client)}")



def run_test(
    name: str,
    spec_path: Path,
    test_dir: Path,
    run_dir: Path,
    deadline_s: float,
    where: tuple[Round, Benchmark, Scenario],
) -> tuple[int, TestRecord, SutResult | None]:
    """Run one LoadGen test to its end or its deadline: (exit code, its record, what its process wrote)."""
    rc, stopped = run_child(spec_path, test_dir, deadline_s)
    detail = test_dir / "mlperf_log_detail.txt"
    lgr = loadgen_result(parse_detail_file(detail), *where) if detail.is_file() else None
    trec, sut_result = read_test_record(name, test_dir, run_dir, rc, lgr)
    if stopped is not None:
        trec = trec.model_copy(
            update={
                "status": "deadline",
                "error": f"the test ran past its deadline of {deadline_s:.0f} s: {stopped} (exit code {rc})"
                + (f"; before that: {trec.error}" if trec.error and trec.status == "deadline" else ""),
            }
        )
    return rc, trec, sut_result
