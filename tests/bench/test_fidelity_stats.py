"""The fidelity bench's arithmetic: LoadGen-style percentiles, the server view of records, process-tree CPU."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from fidelity_stats import error_ms, loadgen_percentile, pct_ms, server_view
from proc_cpu import TreeCpuSampler, tree_cpu_s


def test_loadgen_percentile_is_the_floor_index() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert loadgen_percentile(values, 0.50) == 51.0  # index floor(100 * 0.5) = 50
    assert loadgen_percentile(values, 0.99) == 100.0  # index 99
    assert loadgen_percentile([7.0], 0.99) == 7.0
    p = pct_ms([3_000_000, 1_000_000, 2_000_000])
    assert (p.p50_ms, p.p99_ms, p.count) == (2.0, 3.0, 3)
    assert pct_ms([]).count == 0 and pct_ms([]).p99_ms is None
    assert error_ms(None, 1.0) is None and error_ms(12.5, 10.0) == 2.5


def test_server_view_of_records() -> None:
    ms = 1_000_000
    records = [
        # request received at t, first token 200 ms later, then 3 more tokens 20 ms apart
        {
            "recv_ns": t,
            "send_ns": [t + 200 * ms + k * 20 * ms for k in range(4)],
            "stream": True,
            "complete": True,
        }
        for t in (0, 100 * ms, 200 * ms, 300 * ms)
    ]
    records.append(  # one request the server answered 10 ms late and whose client went away after 2 tokens
        {"recv_ns": 400 * ms, "send_ns": [610 * ms, 630 * ms], "stream": True, "complete": False}
    )
    view = server_view(records, nominal_ttft_ms=200.0)
    assert view.requests == 5 and view.complete == 4 and view.tokens == 16
    assert view.ttft.count == 5 and view.ttft.p50_ms == 200.0 and view.ttft.p99_ms == 210.0
    assert view.tpot.count == 4 and view.tpot.p99_ms == pytest.approx(20.0)
    assert view.e2e.p99_ms == 260.0
    assert view.ttft_late.p99_ms == pytest.approx(10.0)
    assert view.window_ns == (0, 630 * ms)
    assert view.rate_per_s == pytest.approx(4 / 0.4)


def test_tree_cpu_of_a_busy_child_over_a_window() -> None:
    code = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\ntime.sleep(0.3)\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    sampler = TreeCpuSampler(proc.pid, interval_s=0.05).start()
    proc.wait(30)
    sampler.stop()
    assert sampler.times_ns, "the sampler took no sample"
    busy = sampler.cpu_s_between(sampler.times_ns[0], sampler.times_ns[-1])
    assert busy is not None and 0.3 <= busy <= 1.0
    assert (
        sampler.cpu_s_between(sampler.times_ns[0] - 10**9, sampler.times_ns[-1]) is None
    )  # outside the samples
    assert tree_cpu_s(proc.pid) == 0.0  # gone


def test_tree_cpu_counts_grandchildren() -> None:
    code = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'import time\\nend = time.process_time() + 0.4\\n"
        "while time.process_time() < end: pass\\ntime.sleep(0.5)'])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_cpu_s(proc.pid))
        time.sleep(0.05)
    assert peak >= 0.3  # the grandchild's busy loop is counted while it runs
