"""LoadGen's own TTFT floor at a Server rate: what no SUT can take out of the reported TTFT.

A Python SUT that does no work: inside LoadGen's issue callback it reports the first token and completes
the query (2 tokens). Its TTFT is therefore LoadGen's lateness from each query's scheduled time to the
Python callback (the issue thread's wake-up from ``sleep_until`` plus taking the GIL) plus one
``FirstTokenComplete`` call. ``bench/sut_fidelity.py`` runs it at each level, with the issue thread's timer
slack tightened as ``inference-audit run`` does, and prints it beside the SUT's error; ``bench/sut_workers.py``
prints its CPU per query (``cpu_us_per_query``: LoadGen's own serial cost) beside the LoadGen process's with
client workers.

    python3 bench/loadgen_floor.py --qps 50 --duration-s 20 --out /tmp/floor    # prints one JSON line
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg
import numpy as np

from checker.parsers.mllog import DetailLog, parse_detail_file
from loadgen_sut.timer_slack import tighten_timer_slack


def run_server_test(sut: Any, qps: float, duration_s: float, out: Path) -> DetailLog:
    """One short Server test with token latencies (llama3.1-8b's 2 s / 100 ms gates), set up as
    ``loadgen_sut.lgtest`` sets up its own (GIL switch interval, issue-thread timer slack); LoadGen's
    detail log from ``out``. Shared with ``bench/sut_hops.py``."""
    out.mkdir(parents=True, exist_ok=True)
    ts = lg.TestSettings()
    ts.scenario = lg.TestScenario.Server
    ts.mode = lg.TestMode.PerformanceOnly
    ts.server_target_qps = qps
    ts.min_duration_ms = int(duration_s * 1000)
    ts.min_query_count = 100
    ts.use_token_latencies = True
    ts.ttft_latency = 2_000_000_000
    ts.tpot_latency = 100_000_000
    log_out = lg.LogOutputSettings()
    log_out.outdir = str(out)
    log_out.copy_summary_to_stdout = False
    log_settings = lg.LogSettings()
    log_settings.log_output = log_out
    qsl = lg.ConstructQSL(32, 32, lambda _s: None, lambda _s: None)
    sys.setswitchinterval(0.0005)
    tighten_timer_slack()
    lg.StartTestWithLogSettings(sut, qsl, ts, log_settings)
    lg.DestroyQSL(qsl)
    return parse_detail_file(out / "mlperf_log_detail.txt")


def first_token_ms(detail: DetailLog) -> dict[str, float | int | None]:
    """LoadGen's TTFT p50/p99 in ms, with the count they are over."""
    p50, p99 = detail.percentile_ns("first_token", 50), detail.percentile_ns("first_token", 99)
    return {
        "p50": None if p50 is None else p50 / 1e6,
        "p99": None if p99 is None else p99 / 1e6,
        "count": detail.int_value("result_query_count"),
    }


def run(qps: float, duration_s: float, out: Path) -> dict[str, object]:
    tokens = np.array([1, 2], dtype=np.int32)
    ptr = tokens.ctypes.data

    def issue(ids: list[int], _indices: list[int]) -> None:
        for qid in ids:
            lg.FirstTokenComplete([lg.QuerySampleResponse(qid, ptr, 4)])
            lg.QuerySamplesComplete([lg.QuerySampleResponse(qid, ptr, 8, 2)])

    sut = lg.ConstructFastSUT(issue, lambda: None)
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    detail = run_server_test(sut, qps, duration_s, out)
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    lg.DestroyFastSUT(sut)
    ttft = first_token_ms(detail)
    cpu_s = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    count = ttft["count"]
    return {
        "qps": qps,
        "ttft_p50_ms": ttft["p50"],
        "ttft_p99_ms": ttft["p99"],
        "count": count,
        # the process's CPU over the test (LoadGen's threads, the callback, its log written and read back) per query
        "cpu_us_per_query": cpu_s / count * 1e6 if isinstance(count, int) and count else None,
        "detail_log": str(out / "mlperf_log_detail.txt"),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--qps", type=float, required=True)
    p.add_argument("--duration-s", type=float, default=20.0)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    print(json.dumps(run(args.qps, args.duration_s, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
