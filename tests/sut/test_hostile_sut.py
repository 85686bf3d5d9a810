"""The SUT's completion path under real LoadGen with a hostile in-process engine (no HTTP layer in between).

Outputs LoadGen cannot be handed (ids outside int32, floats, a count >= 2^64, a first token that does not
convert, a failure whose partial ids do not convert) and samples that never end (until ``expire``): every
issued sample is completed exactly once, the failures counted by kind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = r'''
import asyncio, json, sys, threading
import mlperf_loadgen as lg
from loadgen_sut.engines.base import (Engine, EngineError, EngineInfo, ErrorKind, Failed, Finished, FirstToken,
    GenerationRequest)
from loadgen_sut.sut import LoadGenSUT, LoopThread

N = 32
BEHAVIOURS = ["huge_id", "huge_count", "huge_first", "bad_partial", "ok", "float_ids", "never", "raises"]

class Hostile(Engine):
    async def start(self): pass
    async def close(self): pass
    def info(self): return EngineInfo(kind="test", name="hostile", model="m")
    def generate(self, request, on_first_token=None):
        b = BEHAVIOURS[request.sample_index % len(BEHAVIOURS)]
        if b == "raises":
            raise RuntimeError("engine bug")
        return self._events(b, on_first_token)
    async def _events(self, b, on_first_token):
        await asyncio.sleep(0.001)
        if b == "huge_first":
            on_first_token((2**40,))
        else:
            yield FirstToken(token_ids=(100,))
        if b == "never":
            await asyncio.sleep(3600)
        if b == "huge_id":
            yield Finished(token_ids=(100, 2**31), n_tokens=2)
        elif b == "huge_count":
            yield Finished(token_ids=(100, 101), n_tokens=2**64)
        elif b == "bad_partial":
            yield Failed(error=EngineError(kind=ErrorKind.RESET, message="reset"), partial_token_ids=(100, 2**33))
        elif b == "float_ids":
            yield Finished.model_construct(token_ids=(100, 1.5), n_tokens=2, ids_from_engine=True)
        else:
            yield Finished(token_ids=(100, 101), n_tokens=2)

scenario, outdir = sys.argv[1], sys.argv[2]
ts = lg.TestSettings()
ts.scenario = getattr(lg.TestScenario, scenario)
ts.mode = lg.TestMode.PerformanceOnly
ts.min_query_count = N
ts.min_duration_ms = 0
ts.use_token_latencies = True
ts.server_target_qps = 200
lt = LoopThread()
per = {b: 0 for b in BEHAVIOURS}
def make_request(i):
    per[BEHAVIOURS[i % len(BEHAVIOURS)]] += 1
    return GenerationRequest(sample_index=i, input_ids=(1,), max_new_tokens=8)
sut = LoadGenSUT(Hostile(), make_request, report_first_token=scenario == "Server", loop_thread=lt)
handle = sut.construct()
qsl = lg.ConstructQSL(N, N, lambda s: None, lambda s: None)
timer = threading.Timer(1.5, lambda: print("expired", sut.expire("test deadline"), file=sys.stderr))
timer.start()
lo = lg.LogOutputSettings(); lo.outdir = outdir; ls = lg.LogSettings(); ls.log_output = lo
lg.StartTestWithLogSettings(handle, qsl, ts, ls, "")
timer.cancel()
lt.stop()
print(json.dumps({**sut.stats.as_dict(), "expired_samples": sut.expired_samples, "per": per}))
'''


@pytest.mark.parametrize("scenario", ["Offline", "Server"])
def test_every_sample_completes_exactly_once_whatever_the_engine_returns(tmp_path: Path, scenario: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, scenario, str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    per = stats["per"]  # samples issued per behaviour (LoadGen picks the sample indices)
    assert stats["issued"] == sum(per.values()) >= 32
    assert stats["completed"] == stats["issued"]  # LoadGen finished: nothing left outstanding
    assert stats["duplicate_completions"] == 0
    assert stats["failures_by_kind"] == {
        "bad_output": per["huge_id"] + per["huge_count"] + per["huge_first"] + per["float_ids"],
        "reset": per["bad_partial"],
        "engine": per["raises"],
        "deadline": per["never"],
    }
    assert stats["failed"] == stats["issued"] - per["ok"]
    assert stats["output_tokens"] == 2 * per["ok"]  # nothing unconvertible counted as output
    assert stats["expired_samples"] == per["never"]
    assert (tmp_path / "mlperf_log_detail.txt").is_file()
