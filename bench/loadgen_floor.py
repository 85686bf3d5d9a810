"""LoadGen's own TTFT floor at a Server rate: what no SUT can take out of the reported TTFT.

A Python SUT that does no work: inside LoadGen's issue callback it reports the first token and completes
the query (2 tokens). Its TTFT is therefore LoadGen's lateness from each query's scheduled time to the
Python callback (the issue thread's wake-up from ``sleep_until`` plus taking the GIL) plus one
``FirstTokenComplete`` call. ``bench/sut_fidelity.py`` runs it at each level, with the issue thread's timer
slack tightened as ``inference-audit run`` does, and prints it beside the SUT's error.

    python3 bench/loadgen_floor.py --qps 50 --duration-s 20 --out /tmp/floor    # prints one JSON line
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mlperf_loadgen as lg
import numpy as np

from checker.parsers.mllog import parse_detail_file
from loadgen_sut.timer_slack import tighten_timer_slack


def run(qps: float, duration_s: float, out: Path) -> dict[str, object]:
    out.mkdir(parents=True, exist_ok=True)
    sys.setswitchinterval(0.0005)  # as loadgen_sut.lgtest
    tokens = np.array([1, 2], dtype=np.int32)
    ptr = tokens.ctypes.data

    def issue(ids: list[int], _indices: list[int]) -> None:
        for qid in ids:
            lg.FirstTokenComplete([lg.QuerySampleResponse(qid, ptr, 4)])
            lg.QuerySamplesComplete([lg.QuerySampleResponse(qid, ptr, 8, 2)])

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
    sut = lg.ConstructFastSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(32, 32, lambda _s: None, lambda _s: None)
    tighten_timer_slack()
    lg.StartTestWithLogSettings(sut, qsl, ts, log_settings)
    lg.DestroyQSL(qsl)
    lg.DestroyFastSUT(sut)
    detail = parse_detail_file(out / "mlperf_log_detail.txt")
    p50, p99 = detail.percentile_ns("first_token", 50), detail.percentile_ns("first_token", 99)
    return {
        "qps": qps,
        "ttft_p50_ms": None if p50 is None else p50 / 1e6,
        "ttft_p99_ms": None if p99 is None else p99 / 1e6,
        "count": detail.int_value("result_query_count"),
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
