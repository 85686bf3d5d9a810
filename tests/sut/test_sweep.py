"""inference-audit sweep: the goodput, percentile and knee logic on constructed timelines and levels (values worked
out by hand below), the level schedule, the SLO, and the results-file policy. No LoadGen run here (see
test_sweep_runs.py)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pytest

from checker.findings import UnusableInput
from loadgen_sut.cli import build_parser
from loadgen_sut.cli.sweep import build_plan
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.record import Percentile
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome
from loadgen_sut.settings import RunMode
from loadgen_sut.sweep import (
    SweepPlan,
    level_conf_lines,
    level_schedule,
    refuse_swept_keys,
    round_slo,
    run_sweep,
)
from loadgen_sut.sweep_file import ResultsFile, settings_differences
from loadgen_sut.sweep_knee import compare_peak, find_knee, loadgen_percentile, summarize_timeline, within_slo
from loadgen_sut.sweep_model import (
    Knee,
    LevelLatency,
    LevelStatus,
    SweepLevel,
    SweepResult,
    SweepSettings,
    SweepSlo,
)
from loadgen_sut.timeline import SampleTiming, TimelineHeader, read_timeline, write_timeline
from rules import load_round
from rules.models import Scenario

MS = 1_000_000
SLO = SweepSlo(ttft_ms=100, tpot_ms=10, source="test")


def _sample(
    i: int, issued: int, first: int | None, done: int | None, tokens: int | None, ok: bool = True
) -> SampleTiming:
    return SampleTiming(
        qsl_idx=i,
        issued_ns=issued * MS,
        first_token_ns=None if first is None else first * MS,
        completed_ns=None if done is None else done * MS,
        output_tokens=tokens,
        ok=ok,
    )


def test_goodput_and_percentiles_of_a_written_timeline(tmp_path: Path) -> None:
    # SLO: TTFT <= 100 ms, TPOT <= 10 ms. Times in ms since t0:
    samples = [
        _sample(1, 0, 50, 122, 10),  # TTFT 50, TPOT (122-50)/9 = 8: good
        _sample(2, 100, 250, 295, 10),  # TTFT 150 > 100: not good (TPOT 45/9 = 5)
        _sample(3, 200, 260, 320, 5),  # TTFT 60, TPOT 60/4 = 15 > 10: not good
        _sample(4, 300, 400, 400, 1),  # TTFT 100 = the limit (within), one token (no TPOT): good
        _sample(5, 400, 450, None, None, ok=False),  # failed: not completed, never good
        _sample(6, 500, 560, 580, 3),  # TTFT 60, TPOT 20/2 = 10 = the limit: good
    ]
    path = tmp_path / "sut_timeline.jsonl"
    write_timeline(path, TimelineHeader(t0_ns=123), samples)
    summary = summarize_timeline(read_timeline(path), SLO)
    assert (summary.samples, summary.completed, summary.good) == (6, 5, 3)
    # window: first issue (0) to last completion (580 ms) = 0.58 s
    assert summary.window_s == pytest.approx(0.58)
    assert summary.goodput_qps == pytest.approx(3 / 0.58)  # 5.17 req/s
    assert summary.completed_qps == pytest.approx(5 / 0.58)
    lat = summary.latency
    # TTFTs of the 5 completed, sorted: 50 60 60 100 150; LoadGen's index floor(n*p): p50 -> [2], p99 -> [4]
    assert lat.ttft_p50_ms == Percentile(value=60.0, count=5)
    assert lat.ttft_p99_ms == Percentile(value=150.0, count=5)
    # TPOTs (the one-token sample has none): 5 8 10 15; p50 -> [2] = 10, p99 -> [floor(3.96)] = [3] = 15
    assert lat.tpot_p50_ms is not None and lat.tpot_p99_ms is not None
    assert lat.tpot_p50_ms.value == pytest.approx(10.0) and lat.tpot_p50_ms.count == 4
    assert lat.tpot_p99_ms.value == pytest.approx(15.0) and lat.tpot_p99_ms.count == 4


def test_an_empty_or_all_failed_timeline_measures_nothing() -> None:
    from loadgen_sut.timeline import Timeline

    empty = summarize_timeline(Timeline(header=TimelineHeader(t0_ns=0), samples=()), SLO)
    assert (
        empty.window_s is None
        and empty.goodput_qps is None
        and empty.latency.ttft_p99_ms == Percentile(value=None, count=0)
    )
    failed = Timeline(header=TimelineHeader(t0_ns=0), samples=(_sample(1, 0, None, None, None, ok=False),))
    s = summarize_timeline(failed, SLO)
    assert (s.completed, s.good, s.goodput_qps) == (0, 0, None)


def test_loadgen_percentile_indexes_like_loadgen() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 100 .. 1, unsorted
    assert loadgen_percentile(values, 0.99) == Percentile(value=100.0, count=100)  # sorted[99]
    assert loadgen_percentile(values, 0.50) == Percentile(value=51.0, count=100)  # sorted[50]
    assert loadgen_percentile([7.0], 0.99) == Percentile(value=7.0, count=1)
    assert loadgen_percentile([], 0.99) == Percentile(value=None, count=0)


def _lat(ttft_p99: float | None, tpot_p99: float | None, n: int = 100) -> LevelLatency:
    return LevelLatency(
        ttft_p99_ms=None if ttft_p99 is None else Percentile(value=ttft_p99, count=n),
        tpot_p99_ms=None if tpot_p99 is None else Percentile(value=tpot_p99, count=n),
    )


def test_within_slo() -> None:
    assert within_slo(_lat(100.0, 10.0), SLO, failed=0) is True  # equal to the limit: LoadGen passes it
    assert within_slo(_lat(100.001, 9.0), SLO, failed=0) is False
    assert within_slo(_lat(50.0, 10.5), SLO, failed=0) is False
    assert within_slo(_lat(50.0, 5.0), SLO, failed=1) is False  # a failed sample is never within
    assert within_slo(_lat(None, 5.0), SLO, failed=0) is None
    assert within_slo(None, SLO, failed=0) is None


def _level(rate: float, within: bool | None, *, status: LevelStatus = "finished", goodput: float | None = None,
           achieved: float | None = None) -> SweepLevel:  # fmt: skip
    return SweepLevel(
        offered_qps=rate,
        status=status,
        run_id=f"r{rate:g}",
        run_dir=f"/runs/r{rate:g}",
        verdict="NOT_SUBMITTABLE",
        wall_s=1.0,
        within_slo=within,
        goodput_qps=goodput,
        achieved_qps=achieved,
    )


def test_knee_is_the_last_level_within_before_the_first_miss() -> None:
    levels = [
        _level(30, False, goodput=12.0, achieved=19.5),
        _level(10, True, goodput=10.0, achieved=9.9),
        _level(50, False, goodput=4.0, achieved=19.8),
        _level(20, True, goodput=19.0, achieved=19.6),
        _level(40, True, goodput=8.0, achieved=19.7),  # within again above the first miss: noise, listed
    ]
    knee = find_knee(levels)
    assert knee.rate_qps == 20 and knee.first_failing_qps == 30 and knee.bounded
    assert knee.within_above_knee == (40,) and knee.highest_within_qps == 40
    assert (knee.peak_goodput_qps, knee.peak_goodput_at_qps) == (19.0, 20)
    assert (knee.max_achieved_qps, knee.max_achieved_at_qps) == (19.8, 50)


def test_knee_edges() -> None:
    all_within = find_knee([_level(10, True), _level(20, True)])
    assert all_within.rate_qps == 20 and all_within.first_failing_qps is None and not all_within.bounded
    lowest_misses = find_knee([_level(10, False), _level(20, True)])
    assert lowest_misses.rate_qps is None and lowest_misses.first_failing_qps == 10
    assert lowest_misses.within_above_knee == (20,)
    # a failed level, or one whose p99s were not measured, ends the run of levels within the SLO
    assert find_knee([_level(10, True), _level(20, True, status="failed"), _level(30, True)]).rate_qps == 10
    assert find_knee([_level(10, True), _level(20, None), _level(30, True)]).rate_qps == 10


def test_compare_peak() -> None:
    knee = Knee(rate_qps=16, first_failing_qps=24, bounded=True, highest_within_qps=16)
    agrees, note = compare_peak(knee, 23.125)
    assert agrees is True and "1.45x" in note and "[16, 24]" in note
    assert compare_peak(knee, 25.0)[0] is False
    assert compare_peak(knee, None)[0] is None
    unbounded = Knee(rate_qps=16, first_failing_qps=None, bounded=False, highest_within_qps=16)
    assert compare_peak(unbounded, 99.0)[0] is True


def test_level_schedule() -> None:
    assert level_schedule([40, 10, 20.5]) == ("list", (10.0, 20.5, 40.0))
    assert level_schedule(None, 10, 40, 4) == ("linear", (10.0, 20.0, 30.0, 40.0))
    assert level_schedule(None, 5, 40, 4, "geometric") == ("geometric", (5.0, 10.0, 20.0, 40.0))
    assert level_schedule(None, 1, 2, 4)[1] == (1.0, 1.33333, 1.66667, 2.0)  # 6 significant digits
    assert level_schedule(None, 7, 7, 1) == ("linear", (7.0,))
    bad: list[tuple[dict[str, Any], str]] = [
        ({"rates": [10, 10]}, "more than once"),
        ({"rates": [10], "start": 1, "stop": 2, "steps": 3}, "not both"),
        ({"start": 10, "stop": 5, "steps": 3}, "must be above"),
        ({"start": 10, "steps": 3}, "all of"),
        ({"rates": [0.0]}, "not a positive rate"),
    ]
    for kwargs, match in bad:
        with pytest.raises(UnusableInput, match=match):
            level_schedule(**kwargs)


def test_slo_defaults_to_the_rounds_limits() -> None:
    rnd = load_round("v6.1")
    bench = rnd.benchmark("llama3.1-8b")
    assert bench is not None
    server = round_slo(bench, Scenario.SERVER, None, None, "v6.1")
    limits = bench.token_latency_limits[Scenario.SERVER]
    assert (server.ttft_ms, server.tpot_ms) == (limits.ttft_ms, limits.tpot_ms)
    assert "round v6.1" in server.source
    interactive = round_slo(bench, Scenario.INTERACTIVE, None, None, "v6.1")
    assert (interactive.ttft_ms, interactive.tpot_ms) == (
        bench.token_latency_limits[Scenario.INTERACTIVE].ttft_ms,
        bench.token_latency_limits[Scenario.INTERACTIVE].tpot_ms,
    )
    declared = round_slo(bench, Scenario.SERVER, 1000, None, "v6.1")
    assert (declared.ttft_ms, declared.tpot_ms) == (
        1000,
        limits.tpot_ms,
    ) and "declared (--slo-ttft-ms)" in declared.source
    with pytest.raises(UnusableInput, match="whole milliseconds"):
        round_slo(bench, Scenario.SERVER, 999.5, None, "v6.1")


def _settings(**kw: object) -> SweepSettings:
    base: dict[str, object] = {
        "round": "v6.1",
        "benchmark": "llama3.1-8b",
        "scenario": "Server",
        "spacing": "list",
        "rates_qps": (10.0, 20.0),
        "slo": SLO,
        "duration_s": 2.0,
        "min_queries": 10,
        "engine": EngineSpec(kind="simulated", model="llama3.1-8b"),
        "dataset": "builtin",
    }
    base.update(kw)
    return SweepSettings.model_validate(base)


def test_level_conf_lines_give_loadgen_the_slo() -> None:
    lines = level_conf_lines(_settings(duration_s=2.5), 12.5)
    assert lines == (
        "*.Server.target_qps = 12.5",
        "*.Server.min_duration = 2500",
        "*.Server.min_query_count = 10",
        "*.Server.ttft_latency = 100",
        "*.Server.tpot_latency = 10",
        "*.Server.sample_concatenate_permutation = 0",
    )


def test_user_conf_may_not_set_what_the_sweep_sets() -> None:
    refuse_swept_keys("*.Offline.min_duration = 100\n*.Server.max_async_queries = 4\n", "u.conf")  # fine
    with pytest.raises(UnusableInput, match=r"u\.conf:2: sets target_qps"):
        refuse_swept_keys("# mine\nllama3_1-8b.Server.target_qps = 5\n", "u.conf")
    with pytest.raises(UnusableInput, match="sets ttft_latency"):
        refuse_swept_keys("*.*.ttft_latency = 5\n", "u.conf")


def test_settings_differences_name_the_fields() -> None:
    a = _settings()
    b = _settings(
        rates_qps=(10.0, 30.0), engine=EngineSpec(kind="simulated", model="llama3.1-8b", sim_ttft_ms="80")
    )
    assert settings_differences(a, b) == [
        "engine.sim_ttft_ms: '50' -> '80'",
        "rates_qps: [10.0, 20.0] -> [10.0, 30.0]",
    ]
    assert settings_differences(a, _settings()) == []


def _plan(tmp_path: Path, out: Path, settings: SweepSettings | None = None) -> SweepPlan:
    s = settings or _settings()
    base = RunRequest(round_name="v6.1", benchmark="llama3.1-8b", scenario="Server", mode=RunMode.PERFORMANCE,
                      engine=s.engine, out=tmp_path)  # fmt: skip
    return SweepPlan(settings=s, base=base, out=out, work_dir=tmp_path / "work")


def _never(request: RunRequest, say: object) -> RunOutcome:
    raise AssertionError("no level may run")


def test_a_file_that_is_not_ours_is_never_overwritten(tmp_path: Path) -> None:
    theirs = tmp_path / "results.json"
    theirs.write_text('{"tool": "something else"}\n')
    with pytest.raises(
        UnusableInput, match="not an inference-audit sweep results file; refusing to overwrite"
    ):
        run_sweep(_plan(tmp_path, theirs), _never, say=lambda _l: None)
    assert theirs.read_text() == '{"tool": "something else"}\n'
    assert not (tmp_path / "work").exists()  # refused before the work directory was made
    target = tmp_path / "elsewhere.json"
    target.write_text("[]")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(UnusableInput, match="symbolic link"):
        ResultsFile(link)
    with pytest.raises(UnusableInput, match="not a regular file"):
        ResultsFile(tmp_path)
    with pytest.raises(UnusableInput, match="does not exist"):
        ResultsFile(tmp_path / "no" / "such.json")
    with pytest.raises(UnusableInput, match="name a file"):
        ResultsFile(Path("-"))


def _own_file(path: Path, settings: SweepSettings, levels: tuple[SweepLevel, ...]) -> None:
    result = SweepResult(tool_version="t", created_utc="c", updated_utc="u", simulated=True, complete=False,
                         settings=settings, levels=levels)  # fmt: skip
    path.write_text(result.model_dump_json())


def test_other_settings_are_refused_not_mixed(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    _own_file(out, _settings(), (_level(10.0, True),))
    before = out.read_bytes()
    other = _settings(slo=SweepSlo(ttft_ms=200, tpot_ms=10, source="test"))
    with pytest.raises(
        UnusableInput, match=r"other settings \(slo.ttft_ms: 100.0 -> 200.0\); refusing to mix"
    ):
        run_sweep(_plan(tmp_path, out, other), _never, say=lambda _l: None)
    assert out.read_bytes() == before


def test_finished_levels_are_not_run_again(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    settings = _settings()
    _own_file(out, settings, (_level(10.0, True, achieved=9.8), _level(20.0, False, achieved=15.0)))
    lines: list[str] = []
    result = run_sweep(_plan(tmp_path, out, settings), _never, say=lines.append)
    assert result.complete and [lv.offered_qps for lv in result.levels] == [10.0, 20.0]
    assert result.knee is not None and result.knee.rate_qps == 10.0 and result.knee.first_failing_qps == 20.0
    assert sum("skipped" in line for line in lines) == 2
    on_disk = SweepResult.model_validate(json.loads(out.read_text()))
    assert on_disk.levels == result.levels and on_disk.complete
    assert os.stat(out).st_size > 0


def test_cli_builds_the_plan(tmp_path: Path) -> None:
    parser = build_parser(only="sweep")
    args = parser.parse_args(
        [
            "sweep",
            "--engine",
            "simulated",
            "--benchmark",
            "llama3.1-8b",
            "--round",
            "v6.1",
            "--start",
            "5",
            "--stop",
            "20",
            "--steps",
            "4",
            "--slo-ttft-ms",
            "1000",
            "--out",
            str(tmp_path / "s.json"),
        ]
    )
    plan = build_plan(args)
    assert plan.settings.rates_qps == (5.0, 10.0, 15.0, 20.0) and plan.settings.scenario == "Server"
    assert (plan.settings.slo.ttft_ms, plan.settings.slo.tpot_ms) == (1000.0, 100.0)
    assert plan.work_dir == tmp_path / "s-runs" and plan.settings.engine.kind == "simulated"
    with pytest.raises(
        SystemExit
    ) as refused:  # the command line refuses it (choices: Server, Interactive) ...
        parser.parse_args(
            [
                "sweep",
                "--engine",
                "simulated",
                "--benchmark",
                "llama3.1-8b",
                "--scenario",
                "Offline",
                "--rates",
                "5",
                "--out",
                str(tmp_path / "s.json"),
            ]
        )
    assert refused.value.code == 2
    with pytest.raises(
        UnusableInput, match="Server or Interactive"
    ):  # ... and so does the plan built from code
        build_plan(argparse.Namespace(**{**vars(args), "scenario": "Offline"}))
    conf = tmp_path / "u.conf"
    conf.write_text("*.Server.min_duration = 100\n")
    with_conf = parser.parse_args(
        [
            "sweep",
            "--engine",
            "simulated",
            "--benchmark",
            "llama3.1-8b",
            "--rates",
            "5",
            "--user-conf",
            str(conf),
            "--out",
            str(tmp_path / "s.json"),
        ]
    )
    with pytest.raises(UnusableInput, match="sets min_duration"):
        build_plan(with_conf)
