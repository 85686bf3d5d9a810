"""How a sweep's levels are judged: LoadGen's percentiles, each request's goodput from the SUT's timeline,
whether a level is within the SLO, the knee, and how LoadGen's FindPeakPerformance compares with it."""

from __future__ import annotations

from collections.abc import Sequence

from checker.parsers.mllog import DetailLog
from loadgen_sut.record import Percentile
from loadgen_sut.sweep_model import Knee, LevelLatency, SweepLevel, SweepSlo, TimelineSummary
from loadgen_sut.timeline import SampleTiming, Timeline


def loadgen_percentile(values: Sequence[float], fraction: float) -> Percentile:
    """The percentile as LoadGen takes it: the sorted values at index floor(n * fraction)
    (``sample_latencies[sample_count * percentile]``, loadgen/results.cc ProcessLatencies); None when empty."""
    if not values:
        return Percentile(value=None, count=0)
    ordered = sorted(values)
    return Percentile(value=ordered[min(len(ordered) - 1, int(len(ordered) * fraction))], count=len(ordered))


def _meets(s: SampleTiming, ttft_ns: float, tpot_ns: float) -> bool:
    ttft = s.ttft_ns
    if ttft is None or ttft > ttft_ns:
        return False
    tpot = s.tpot_ns
    if tpot is None:  # a one-token output has no TPOT to miss; any other missing time is a miss
        return s.output_tokens == 1
    return tpot <= tpot_ns


def summarize_timeline(timeline: Timeline, slo: SweepSlo) -> TimelineSummary:
    """Goodput and percentiles of one level's timeline.

    A request is *good* when it completed normally (``ok``, a completion time) and its own TTFT (issue to first
    token) is at most the SLO's TTFT and its own TPOT ((completion - first token) / (tokens - 1)) at most the SLO's
    TPOT (a one-token output has no TPOT and meets that limit). Failed requests are never good. Goodput and the
    completed rate are per second of the window from the first issue to the last completion.
    """
    samples = timeline.samples
    done = [s for s in samples if s.ok and s.completed_ns is not None]
    ttft_lim = slo.ttft_ms * 1e6
    tpot_lim = slo.tpot_ms * 1e6
    good = sum(1 for s in done if _meets(s, ttft_lim, tpot_lim))
    window_s: float | None = None
    if samples and done:
        first = min(s.issued_ns for s in samples)
        last = max(s.completed_ns for s in done if s.completed_ns is not None)
        window_s = (last - first) / 1e9 if last > first else None
    ttfts = [t / 1e6 for t in (s.ttft_ns for s in done) if t is not None]
    tpots = [t / 1e6 for t in (s.tpot_ns for s in done) if t is not None]
    return TimelineSummary(
        samples=len(samples),
        completed=len(done),
        good=good,
        window_s=window_s,
        completed_qps=None if window_s is None else len(done) / window_s,
        goodput_qps=None if window_s is None else good / window_s,
        latency=LevelLatency(
            ttft_p50_ms=loadgen_percentile(ttfts, 0.50),
            ttft_p99_ms=loadgen_percentile(ttfts, 0.99),
            tpot_p50_ms=loadgen_percentile(tpots, 0.50),
            tpot_p99_ms=loadgen_percentile(tpots, 0.99),
        ),
    )


def detail_latency(log: DetailLog) -> LevelLatency:
    """LoadGen's p50/p99 TTFT and TPOT (ms), counted over ``result_query_count`` samples (Server: one each)."""
    count = log.int_value("result_query_count") or 0

    def pct(kind: str, p: float) -> Percentile | None:
        ns = log.percentile_ns(kind, p)
        return None if ns is None else Percentile(value=ns / 1e6, count=count)

    return LevelLatency(
        ttft_p50_ms=pct("first_token", 50.0),
        ttft_p99_ms=pct("first_token", 99.0),
        tpot_p50_ms=pct("time_per_output_token", 50.0),
        tpot_p99_ms=pct("time_per_output_token", 99.0),
    )


def within_slo(latency: LevelLatency | None, slo: SweepSlo, failed: int) -> bool | None:
    """LoadGen's p99 TTFT and p99 TPOT are at most the SLO and no sample failed. LoadGen's PerfConstraintsMet
    fails a run only when a p99 is above its limit (loadgen/results.cc), so a p99 equal to it is within.
    None when either p99 was not measured."""
    if latency is None or latency.ttft_p99_ms is None or latency.tpot_p99_ms is None:
        return None
    ttft, tpot = latency.ttft_p99_ms.value, latency.tpot_p99_ms.value
    if ttft is None or tpot is None:
        return None
    return ttft <= slo.ttft_ms and tpot <= slo.tpot_ms and failed == 0


def find_knee(levels: Sequence[SweepLevel]) -> Knee:
    """The knee of finished levels: walking up from the lowest rate, the last level within the SLO before the
    first one that is not (a failed level, or one whose p99s were not measured, is not within).

    A level within the SLO above the first one that missed it (noise near the knee) does not move the knee; it is
    listed in ``within_above_knee`` and ``highest_within_qps``.
    """
    ordered = sorted(levels, key=lambda lv: lv.offered_qps)
    knee: float | None = None
    first_failing: float | None = None
    above: list[float] = []
    for lv in ordered:
        ok = lv.status == "finished" and lv.within_slo is True
        if first_failing is None:
            if ok:
                knee = lv.offered_qps
            else:
                first_failing = lv.offered_qps
        elif ok:
            above.append(lv.offered_qps)
    within = [lv.offered_qps for lv in ordered if lv.status == "finished" and lv.within_slo is True]
    with_goodput = [lv for lv in ordered if lv.goodput_qps is not None]
    best = max(with_goodput, key=lambda lv: lv.goodput_qps or 0.0) if with_goodput else None
    with_achieved = [lv for lv in ordered if lv.achieved_qps is not None]
    fastest = max(with_achieved, key=lambda lv: lv.achieved_qps or 0.0) if with_achieved else None
    return Knee(
        rate_qps=knee,
        first_failing_qps=first_failing,
        bounded=first_failing is not None,
        highest_within_qps=max(within) if within else None,
        within_above_knee=tuple(above),
        peak_goodput_qps=best.goodput_qps if best else None,
        peak_goodput_at_qps=best.offered_qps if best else None,
        max_achieved_qps=fastest.achieved_qps if fastest else None,
        max_achieved_at_qps=fastest.offered_qps if fastest else None,
    )


def compare_peak(knee: Knee, peak_qps: float | None) -> tuple[bool | None, str]:
    """Does LoadGen's peak agree with the sweep? It should lie between the knee and the first failing level."""
    if peak_qps is None or knee.rate_qps is None:
        return None, "not comparable: " + (
            "LoadGen found no peak" if peak_qps is None else "the sweep has no knee"
        )
    hi = knee.first_failing_qps
    agrees = knee.rate_qps <= peak_qps and (hi is None or peak_qps <= hi)
    span = f"[{knee.rate_qps:g}, {hi:g}]" if hi is not None else f">= {knee.rate_qps:g}"
    return agrees, (
        f"LoadGen's peak {peak_qps:g} req/s is {peak_qps / knee.rate_qps:.3g}x the knee; the sweep brackets the "
        f"capacity in {span} req/s: {'agrees' if agrees else 'DISAGREES'}"
    )
