"""inference-audit sweep end to end: real LoadGen Server runs through the harness against bench/token_server.py with
a configured capacity, and against the simulated engine's slots.

The token server serves at most N streams at once (``--max-concurrency``; the others wait, FIFO, and the wait counts
in their TTFT), so its capacity is N / (ttft + (tokens - 1) * tpot) requests per second: here 8 / (100 ms + 15 x
20 ms) = 20 req/s. The levels are 0.4, 0.8, 1.2 and 1.6 x that capacity, each a LoadGen Server run of >= 6 s, the
SLO TTFT 1000 ms (TTFT 100 ms plus 900 ms of queueing allowed), TPOT 100 ms (the server's TPOT is a constant 20 ms).

Why the tolerances hold (LoadGen's Server schedule is Poisson; a queue of 8 slots with a fixed 400 ms service time,
M/D/8, simulated over 200 arrival sequences of 6 s): the p99 TTFT at 0.8 x capacity stays below ~660 ms in 95% of
them (measured here: ~260 ms), at 1.6 x capacity it is above ~2.2 s in 95% (measured: ~3.5 s: past capacity the
queue grows by (rate - capacity) x time), and at 1.2 x it can fall either side of 1000 ms (0.6-2.4 s). So the knee
is 0.8 or 1.2 x capacity: within 25% of it, the sweep's own resolution (levels 0.4 x capacity apart). Past
capacity LoadGen's completed rate is the server's throughput: at 1.6 x it must be 0.85-1.05 x capacity (below it
by the ramp up and the drain; measured ~0.97 x).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome
from loadgen_sut.runner import run as runner_run
from loadgen_sut.settings import RunMode
from loadgen_sut.sweep import SweepPlan, run_sweep
from loadgen_sut.sweep_model import SweepResult, SweepSettings, SweepSlo
from tests.bench.token_server_proc import start_token_server

SLOTS, TTFT_MS, TPOT_MS, TOKENS = 8, 100.0, 20.0, 16
CAPACITY_RPS = SLOTS * 1000.0 / (TTFT_MS + (TOKENS - 1) * TPOT_MS)  # 20 req/s
SLO = SweepSlo(ttft_ms=1000, tpot_ms=100, source="declared (test)")


def start_server(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    return start_token_server(
        tmp_path, "--ttft-ms", str(TTFT_MS), "--tpot-ms", str(TPOT_MS), "--tokens", str(TOKENS), *extra
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def capped_server(tmp_path: Path) -> Iterator[int]:
    proc, port = start_server(tmp_path, "--max-concurrency", str(SLOTS))
    try:
        yield port
    finally:
        stop(proc)


def plan_for(tmp_path: Path, engine: EngineSpec, rates: tuple[float, ...], duration_s: float, *,
             ignore_eos: bool = False, find_peak: bool = False) -> SweepPlan:  # fmt: skip
    settings = SweepSettings(
        round="v6.1",
        benchmark="llama3.1-8b",
        scenario="Server",
        spacing="list",
        rates_qps=rates,
        slo=SLO,
        duration_s=duration_s,
        min_queries=20,
        engine=engine,
        dataset="builtin",
        ignore_eos=ignore_eos,
    )
    base = RunRequest(round_name="v6.1", benchmark="llama3.1-8b", scenario="Server", mode=RunMode.PERFORMANCE,
                      engine=engine, out=tmp_path, ignore_eos=ignore_eos, progress_interval_s=0)  # fmt: skip
    return SweepPlan(
        settings=settings,
        base=base,
        out=tmp_path / "sweep.json",
        work_dir=tmp_path / "runs",
        find_peak=find_peak,
    )


class CountingRunner:
    """The real runner, counting the levels it is asked to run (and optionally a Ctrl-C before the n-th)."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.calls: list[str] = []
        self.interrupt_at = interrupt_at

    def __call__(self, request: RunRequest, say: object) -> RunOutcome:
        self.calls.append(request.extra_conf[0])
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt  # as a Ctrl-C during the level: the runner re-raises it after its record
        return runner_run(request, say)  # type: ignore[arg-type]


@pytest.mark.slow
def test_sweep_finds_the_token_servers_capacity_and_resumes(tmp_path: Path, capped_server: int) -> None:
    engine = EngineSpec(kind="openai", model="token-server", endpoints=(f"http://127.0.0.1:{capped_server}",),
                        idle_timeout_s=30.0, request_timeout_s=60.0)  # fmt: skip
    rates = tuple(round(f * CAPACITY_RPS, 6) for f in (0.4, 0.8, 1.2, 1.6))  # 8, 16, 24, 32 req/s
    plan = plan_for(tmp_path, engine, rates, duration_s=6.0)
    lines: list[str] = []
    t0 = time.monotonic()
    result = run_sweep(plan, say=lines.append)
    wall_s = time.monotonic() - t0
    print("\n".join(lines), f"\nsweep wall {wall_s:.1f} s", file=sys.stderr)

    assert result.complete and [lv.status for lv in result.levels] == ["finished"] * 4
    for lv in result.levels:
        assert lv.timeline is not None and lv.query_count is not None
        assert lv.timeline.samples == lv.query_count == lv.issued  # LoadGen's count = the timeline's
        assert lv.loadgen_latency is not None and lv.loadgen_latency.ttft_p99_ms is not None
        assert lv.loadgen_latency.ttft_p99_ms.count == lv.query_count
    low, _, _, high = result.levels
    assert low.within_slo is True and high.within_slo is False
    assert (
        low.timeline is not None and low.timeline.good == low.timeline.completed
    )  # below capacity: all good
    knee = result.knee
    assert knee is not None and knee.rate_qps is not None and knee.bounded
    assert 0.75 * CAPACITY_RPS <= knee.rate_qps <= 1.25 * CAPACITY_RPS, knee
    # past capacity the completed rate is the server's throughput, and goodput falls
    assert high.achieved_qps is not None and 0.85 * CAPACITY_RPS <= high.achieved_qps <= 1.05 * CAPACITY_RPS
    knee_level = next(lv for lv in result.levels if lv.offered_qps == knee.rate_qps)
    assert high.goodput_qps is not None and knee_level.goodput_qps is not None
    assert high.goodput_qps < knee_level.goodput_qps

    # resume: the same settings run nothing new, and the file keeps the same levels
    counting = CountingRunner()
    again = run_sweep(plan, counting, say=lambda _line: None)
    assert counting.calls == [] and again.levels == result.levels and again.complete
    assert SweepResult.model_validate_json(plan.out.read_text()).levels == result.levels


def test_sweep_keeps_finished_levels_on_ctrl_c_and_resumes(tmp_path: Path) -> None:
    # the simulated engine's slots: 4 at once, 50 ms + 7 x 10 ms = 120 ms each: 33 req/s
    engine = EngineSpec(kind="simulated", model="llama3.1-8b", sim_ttft_ms="50", sim_tpot_ms="10",
                        sim_output_tokens="8", sim_max_concurrency=4)  # fmt: skip
    plan = plan_for(tmp_path, engine, (10.0, 20.0, 100.0), duration_s=1.5, ignore_eos=True)
    interrupted = CountingRunner(interrupt_at=2)
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, interrupted, say=lines.append)
    assert any("interrupted: 1 of 3 levels finished" in line for line in lines)
    kept = SweepResult.model_validate_json(plan.out.read_text())
    assert [lv.offered_qps for lv in kept.levels] == [10.0] and not kept.complete and kept.simulated

    resumed = CountingRunner()
    result = run_sweep(plan, resumed, say=lambda _line: None)
    assert resumed.calls == ["*.Server.target_qps = 20.0", "*.Server.target_qps = 100.0"]  # level 1 not rerun
    assert result.complete and result.levels[0] == kept.levels[0]
    assert [lv.status for lv in result.levels] == ["finished"] * 3
    # 100 req/s is 3 x the 33 req/s the slots serve: its queue outgrows the 1 s TTFT limit within the 1.5 s
    assert result.levels[0].within_slo is True and result.levels[2].within_slo is False
    assert result.knee is not None and result.knee.rate_qps in (10.0, 20.0)


@pytest.mark.slow
def test_find_peak_agrees_with_the_sweep(tmp_path: Path) -> None:
    # simulated slots with the token server's numbers: 8 x (100 ms + 15 x 20 ms) = 20 req/s
    engine = EngineSpec(kind="simulated", model="llama3.1-8b", sim_ttft_ms=str(TTFT_MS), sim_tpot_ms=str(TPOT_MS),
                        sim_output_tokens=str(TOKENS), sim_max_concurrency=SLOTS)  # fmt: skip
    plan = plan_for(tmp_path, engine, (8.0, 16.0, 32.0), duration_s=4.0, ignore_eos=True, find_peak=True)
    lines: list[str] = []
    t0 = time.monotonic()
    result = run_sweep(plan, say=lines.append)
    print("\n".join(lines), f"\nsweep + find-peak wall {time.monotonic() - t0:.1f} s", file=sys.stderr)
    assert result.knee is not None and result.knee.rate_qps == 16.0 and result.knee.first_failing_qps == 32.0
    peak = result.find_peak
    assert peak is not None and peak.status == "finished" and peak.start_qps == 16.0
    # LoadGen bisects [16, 32) (32 missed the SLO in the sweep at the same schedule): its peak lies in between;
    # runs of 4 s let up to ~1.3 x capacity pass (the queue grows by (rate - capacity) x 4 s, < 900 ms of wait)
    assert peak.peak_qps is not None and 16.0 <= peak.peak_qps < 32.0 and peak.agrees_with_knee is True
    assert 0.8 * CAPACITY_RPS <= peak.peak_qps <= 1.5 * CAPACITY_RPS
