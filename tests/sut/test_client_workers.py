"""``--client-workers N``: LoadGen in one process, the HTTP streams in N worker processes.

Real LoadGen runs (through the runner: one test process, its worker processes) against the real local token server
(``tests/sut/sse_server.py``): every sample completes exactly once with its real tokens, its first token before its
completion; a worker killed mid-run is a counted failure that ends the test, never a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from sut_helpers import http_engine, start_server, trial

from checker.parsers.accuracy_log import parse_accuracy_log
from loadgen_sut.client_diag import client_bound_reasons
from loadgen_sut.client_workers import RUN_ENDED, WORKER_DIED, default_client_workers, worker_shares
from loadgen_sut.record import ClientDiagnostics, LagStats, SutResult, WorkerDiagnostics
from loadgen_sut.settings import RunMode
from loadgen_sut.timeline import read_timeline


def test_every_sample_completes_once_with_its_tokens_over_three_workers(tmp_path: Path) -> None:
    a, b = start_server(output_tokens=12, tokens_per_event=5), start_server(output_tokens=12, tokens_per_event=5)
    try:
        out = trial(tmp_path, http_engine([a.url, b.url], client_workers=3), scenario="Server", mode=RunMode.ACCURACY)
    finally:
        a.stop()
        b.stop()
    acc = out.record.tests[0]
    assert acc.status == "finished" and acc.sut.failed == 0 and acc.sut.duplicate_completions == 0
    assert acc.sut.issued == acc.sut.completed > 0 and acc.sut.output_tokens == 12 * acc.sut.completed
    assert a.stats.completions + b.stats.completions == acc.sut.issued  # one request per sample, both replicas used
    assert min(a.stats.completions, b.stats.completions) > 0
    log = parse_accuracy_log(out.run_dir / "accuracy" / "mlperf_log_accuracy.json")
    assert len(log.entries) == acc.sut.issued and len({e.qsl_idx for e in log.entries}) == len(log.entries)
    for e in log.entries:
        assert e.token_count == 12 and e.token_ids() == tuple(range(100, 112))
        assert e.first_token_ids() == (100, 101, 102, 103, 104)  # the first (merged) event, from the worker
    timeline = read_timeline(out.run_dir / "accuracy" / "sut_timeline.jsonl")
    assert len(timeline.samples) == acc.sut.issued
    for s in timeline.samples:  # one clock across processes: issue <= dispatch <= first token <= completion
        assert s.ok and s.dispatched_ns is not None and s.first_token_ns is not None and s.completed_ns is not None
        assert s.issued_ns <= s.dispatched_ns <= s.first_token_ns <= s.completed_ns
    diag = acc.client
    assert diag is not None and diag.client_workers == 3 and len(diag.workers) == 3
    assert sum(w.samples for w in diag.workers) == acc.sut.issued and all(w.samples > 0 for w in diag.workers)
    for w in diag.workers:
        assert w.died is None and w.dispatch_lag.count == w.samples
        assert w.loop_lag is not None and w.loop_lag.count > 0 and w.process_cpu_s is not None
    assert diag.dispatch_lag.count == acc.sut.issued
    assert diag.loadgen_process_cpu_s is not None and diag.process_cpu_s > diag.loadgen_process_cpu_s
    assert diag.reporter_thread_cpu_fraction is not None
    assert acc.event_loop is not None and acc.event_loop.endswith("in 3 client worker process(es)")
    assert out.record.engine is not None and out.record.engine.parameters["client_workers"] == "3"


def test_server_run_with_workers_is_valid_for_loadgen(tmp_path: Path) -> None:
    server = start_server()
    try:
        out = trial(tmp_path, http_engine(server.url, client_workers=2), scenario="Server")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished" and perf.sut.failed == 0 and perf.sut.issued == perf.sut.completed
    result = SutResult.model_validate_json((out.run_dir / "performance" / "sut_result.json").read_text())
    assert result.first_tokens == perf.sut.completed  # each sample's first token, from a worker, then its completion
    assert perf.loadgen is not None and perf.loadgen.result_validity == "VALID"
    assert perf.loadgen.num_errors == 0  # LoadGen logs an error for a completion before its first token
    assert perf.client_ttft_p99_ms is not None and perf.client_ttft_p99_ms.count == perf.sut.completed


def _workers_of_this_test() -> list[int]:
    """Pids of the client workers under this pytest process (its child test process's children)."""
    me = os.getpid()
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            gppid = int((Path("/proc") / str(ppid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"loadgen_sut.client_worker" in cmd and gppid == me:
            out.append(int(d.name))
    return out


def test_a_worker_killed_mid_run_fails_its_samples_once_and_ends_the_test(tmp_path: Path) -> None:
    # slow streams (0.4 s each): samples are in flight in both workers when one of them is killed
    server = start_server(output_tokens=40, ttft_s=0.05, tpot_s=0.01)
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pids = _workers_of_this_test()
            if len(pids) == 2 and server.stats.completions >= 40:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    conf = "*.Server.target_qps = 100\n*.Server.min_duration = 6000\n"
    t0 = time.monotonic()
    try:
        out = trial(tmp_path, http_engine(server.url, client_workers=2), scenario="Server", conf=conf)
    finally:
        server.stop()
        killer.join(timeout=5)
    took = time.monotonic() - t0
    assert killed, "no worker was killed (the run ended first?)"
    perf = out.record.tests[0]
    assert perf.status == "client_worker_died"
    assert perf.error is not None and f"pid {killed[0]}" in perf.error and "SIGKILL" in perf.error
    # every issued sample completed exactly once: the dead worker's as failed, the rest as the test ended
    assert perf.sut.issued == perf.sut.completed > 0 and perf.sut.duplicate_completions == 0
    kinds = perf.sut.failures_by_kind
    assert kinds.get(WORKER_DIED, 0) > 0 and perf.sut.failed == sum(kinds.values())
    assert set(kinds) <= {WORKER_DIED, RUN_ENDED, "deadline"}
    assert took < 60  # it ended at once: LoadGen's 6 s minimum, not a hang
    assert out.record.verdict.status == "INCOMPLETE"
    assert any("client_worker_died" in r for r in out.record.verdict.reasons)
    diag = perf.client
    assert diag is not None and any(w.died is not None and str(killed[0]) in w.died for w in diag.workers)
    timeline = read_timeline(out.run_dir / "performance" / "sut_timeline.jsonl")
    assert len(timeline.samples) == perf.sut.issued  # one row per sample, none twice
    assert sum(not s.ok for s in timeline.samples) == perf.sut.failed


def test_default_workers_and_shares() -> None:
    assert default_client_workers(1) == 0 and default_client_workers(2) == 0  # one core beside LoadGen: in-process
    assert default_client_workers(3) == 2 and default_client_workers(16) == 8 and default_client_workers(64) == 8
    shares = worker_shares(("http://a", "http://b", "http://c"), 10, 2)
    assert shares == [(("http://a", "http://c"), 5), (("http://b",), 5)]
    assert worker_shares(("http://a",), 7, 3) == [(("http://a",), 3), (("http://a",), 2), (("http://a",), 2)]


def test_one_slow_worker_is_client_bound_even_when_the_merged_lags_are_not() -> None:
    ok = LagStats(p50_ms=0.1, p99_ms=1.0, max_ms=2.0, count=1000)
    slow = LagStats(p50_ms=50.0, p99_ms=180.0, max_ms=200.0, count=200)
    workers = tuple(
        WorkerDiagnostics(worker=i, samples=100, dispatch_lag=slow if i == 3 else ok, loop_lag=ok) for i in range(8)
    )
    diag = ClientDiagnostics(
        dispatch_lag=ok, loop_lag=ok, probe_interval_ms=25.0, wall_s=60.0, process_cpu_s=30.0,
        process_cpu_cores=0.5, usable_cpus=16, client_workers=8, workers=workers, reporter_thread_cpu_fraction=0.95,
    )
    reasons = client_bound_reasons(diag, None)
    assert any(r.startswith("client worker 3: dispatch lag p99 180.0 ms") for r in reasons)
    assert any("reporting thread was busy 95%" in r for r in reasons)


def test_ctrl_c_with_workers_ends_the_run_without_a_traceback_or_a_worker_left(tmp_path: Path) -> None:
    server = start_server(output_tokens=16)
    conf = tmp_path / "long.conf"
    conf.write_text("*.Server.target_qps = 50\n*.Server.min_duration = 60000\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "openai", "--endpoint", server.url, "--model",
           "tiny", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--round", "v6.1", "--user-conf", str(conf),
           "--out", str(tmp_path / "out"), "--progress-interval", "0", "--client-workers", "2"]  # fmt: skip
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal: SIGINT not ignored
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.stats.completions < 50:
            time.sleep(0.1)
        workers = [
            int(d.name) for d in Path("/proc").iterdir()
            if d.name.isdigit() and b"loadgen_sut.client_worker" in _cmdline(d) and _pgid(int(d.name)) == proc.pid
        ]  # fmt: skip
        assert len(workers) == 2
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
        out, _ = proc.communicate(timeout=60)
    finally:
        server.stop()
    assert proc.returncode == 130, out
    assert "Traceback" not in out, out
    time.sleep(1.0)
    assert not [pid for pid in workers if _alive(pid)]  # each worker stopped at its socket's end of file


def _cmdline(d: Path) -> bytes:
    try:
        return (d / "cmdline").read_bytes()
    except OSError:
        return b""


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:  # ended meanwhile
        return None


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
