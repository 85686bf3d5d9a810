"""Numbers drawn from a per-sample SUT timeline (:mod:`loadgen_sut.timeline`): latencies, rates over time.

All of it is the SUT's view (its clock, from LoadGen's issue callback to the stream's first token / completion):
close to LoadGen's own measurement, never a substitute for it; the page says which is which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loadgen_sut.timeline import SampleTiming

_NICE = (1, 2, 5)


def ttft_ms(samples: Sequence[SampleTiming]) -> list[float]:
    """TTFT of each sample that had a first token, in ms, sorted."""
    return sorted(v / 1e6 for s in samples if (v := s.ttft_ns) is not None)


def tpot_ms(samples: Sequence[SampleTiming]) -> list[float]:
    """Mean time per output token after the first of each sample with 2+ tokens, in ms, sorted."""
    return sorted(v / 1e6 for s in samples if (v := s.tpot_ns) is not None)


def latency_ms(samples: Sequence[SampleTiming]) -> list[float]:
    """Issue to completion of each completed sample, in ms, sorted."""
    return sorted((s.completed_ns - s.issued_ns) / 1e6 for s in samples if s.completed_ns is not None)


def percentile(sorted_values: Sequence[float], pct: float) -> float | None:
    """The ``pct`` percentile (0-100) of sorted values as LoadGen takes it: the value at index
    ``floor(n * pct / 100)`` of the sorted list (``loadgen/results.cc:36-43``, ``sample_latencies[count * p]``)."""
    n = len(sorted_values)
    if n == 0:
        return None
    return float(sorted_values[min(n - 1, int(n * pct / 100.0))])


def nice_bin_s(duration_s: float, target_bins: int = 60) -> float:
    """A bin width of 1, 2 or 5 times a power of ten giving about ``target_bins`` bins over ``duration_s``."""
    if duration_s <= 0:
        return 1.0
    raw = duration_s / target_bins
    exp = math.floor(math.log10(raw))
    for m in _NICE:
        if m * 10**exp >= raw:
            return float(m * 10**exp)
    return float(10 ** (exp + 1))


@dataclass(frozen=True)
class OverTime:
    """Per-bin series over the test: bin centres (s since the first issue), rates per second, TTFT p99 of the
    samples issued in each bin (None where no sample was issued)."""

    bin_s: float
    centres_s: tuple[float, ...]
    issued_per_s: tuple[float, ...]
    completed_per_s: tuple[float, ...]
    tokens_per_s: tuple[float, ...]
    ttft_p99_ms: tuple[float | None, ...]
    duration_s: float


def over_time(samples: Sequence[SampleTiming]) -> OverTime | None:
    """Rates over the test; None for an empty timeline. Output tokens are spread over each sample's stream: its
    first token at ``first_token_ns``, the others evenly up to ``completed_ns`` (a sample without both counts its
    tokens at completion)."""
    if not samples:
        return None
    issued = np.array([s.issued_ns for s in samples], dtype=np.float64) / 1e9
    start = float(issued.min())
    completed = np.array([s.completed_ns for s in samples if s.completed_ns is not None], dtype=np.float64) / 1e9
    end = float(max(issued.max(), completed.max() if completed.size else issued.max()))
    duration = max(end - start, 1e-3)
    width = nice_bin_s(duration)
    n_bins = max(1, math.ceil(duration / width + 1e-9))
    edges = start + width * np.arange(n_bins + 1)
    issued_rate = np.histogram(issued, bins=edges)[0] / width
    completed_rate = np.histogram(completed, bins=edges)[0] / width if completed.size else np.zeros(n_bins)
    tokens = _tokens_per_bin(samples, edges) / width
    ttft_bins: list[float | None] = []
    bin_of = np.clip(((issued - start) / width).astype(np.int64), 0, n_bins - 1)
    ttfts = np.array([np.nan if s.ttft_ns is None else s.ttft_ns / 1e6 for s in samples])
    for b in range(n_bins):
        vals = np.sort(ttfts[(bin_of == b) & ~np.isnan(ttfts)])
        ttft_bins.append(percentile(vals.tolist(), 99.0) if vals.size else None)
    centres = (edges[:-1] + width / 2) - start
    return OverTime(
        bin_s=width,
        centres_s=tuple(float(c) for c in centres),
        issued_per_s=tuple(float(v) for v in issued_rate),
        completed_per_s=tuple(float(v) for v in completed_rate),
        tokens_per_s=tuple(float(v) for v in tokens),
        ttft_p99_ms=tuple(ttft_bins),
        duration_s=duration,
    )


def _tokens_per_bin(samples: Sequence[SampleTiming], edges: np.ndarray) -> np.ndarray:
    first: list[float] = []
    last: list[float] = []
    rest: list[float] = []
    at_end: list[float] = []
    at_end_n: list[float] = []
    for s in samples:
        n = s.output_tokens
        if not n:
            continue
        if s.first_token_ns is not None and s.completed_ns is not None and s.completed_ns > s.first_token_ns:
            first.append(s.first_token_ns / 1e9)
            last.append(s.completed_ns / 1e9)
            rest.append(float(n - 1))
        elif s.completed_ns is not None:
            at_end.append(s.completed_ns / 1e9)
            at_end_n.append(float(n))
    out = np.zeros(len(edges) - 1)
    if first:
        f, c, r = np.array(first), np.array(last), np.array(rest)
        out += np.histogram(f, bins=edges)[0]
        rate = r / (c - f)
        # tokens after the first, spread evenly over (first, completed]: cumulative count at each edge
        cum = np.array([float(np.sum(np.clip(e - f, 0.0, c - f) * rate)) for e in edges])
        out += np.diff(cum)
    if at_end:
        out += np.histogram(np.array(at_end), bins=edges, weights=np.array(at_end_n))[0]
    return out


@dataclass(frozen=True)
class Trend:
    """Median TTFT of the first and the last fifth of the samples (by issue time): growth means queueing."""

    first_ms: float
    last_ms: float

    @property
    def ratio(self) -> float:
        return self.last_ms / self.first_ms if self.first_ms > 0 else math.inf


def ttft_trend(samples: Sequence[SampleTiming]) -> Trend | None:
    timed = sorted((s.issued_ns, s.ttft_ns / 1e6) for s in samples if s.ttft_ns is not None)
    if len(timed) < 50:
        return None
    k = len(timed) // 5
    head = sorted(v for _, v in timed[:k])
    tail = sorted(v for _, v in timed[-k:])
    return Trend(first_ms=head[len(head) // 2], last_ms=tail[len(tail) // 2])


@dataclass(frozen=True)
class LagOverTime:
    """The dispatch lag (LoadGen's issue to the request on the socket) of the samples issued in each bin: p50, p99
    and max in ms and their count (None where no sample of the bin was dispatched). Percentiles as the run record's
    :class:`~loadgen_sut.record.LagStats` takes them (``numpy.percentile``, linear)."""

    bin_s: float
    centres_s: tuple[float, ...]
    p50_ms: tuple[float | None, ...]
    p99_ms: tuple[float | None, ...]
    max_ms: tuple[float | None, ...]
    counts: tuple[int, ...]
    dispatched: int  # samples with a dispatch time
    samples: int  # samples in the timeline


def dispatch_lag_over_time(samples: Sequence[SampleTiming]) -> LagOverTime | None:
    """Per-bin dispatch lags (bins as :func:`over_time`'s, from the first issue); None when no sample of the
    timeline has a dispatch time (an in-process engine has no socket)."""
    timed = [(s.issued_ns, lag) for s in samples if (lag := s.dispatch_lag_ns) is not None]
    if not timed:
        return None
    start = min(s.issued_ns for s in samples)
    issued = np.array([t for t, _ in timed], dtype=np.float64)
    lags_ms = np.array([lag for _, lag in timed], dtype=np.float64) / 1e6
    end = float(max(issued.max(), max(s.completed_ns or s.issued_ns for s in samples)))
    duration = max((end - start) / 1e9, 1e-3)
    width = nice_bin_s(duration)
    n_bins = max(1, math.ceil(duration / width + 1e-9))
    bin_of = np.clip(((issued - start) / 1e9 / width).astype(np.int64), 0, n_bins - 1)
    p50: list[float | None] = []
    p99: list[float | None] = []
    top: list[float | None] = []
    counts: list[int] = []
    for b in range(n_bins):
        vals = lags_ms[bin_of == b]
        counts.append(int(vals.size))
        if vals.size:
            q50, q99 = np.percentile(vals, [50, 99])
            p50.append(float(q50))
            p99.append(float(q99))
            top.append(float(vals.max()))
        else:
            p50.append(None)
            p99.append(None)
            top.append(None)
    return LagOverTime(
        bin_s=width,
        centres_s=tuple(float(width * (b + 0.5)) for b in range(n_bins)),
        p50_ms=tuple(p50),
        p99_ms=tuple(p99),
        max_ms=tuple(top),
        counts=tuple(counts),
        dispatched=len(timed),
        samples=len(samples),
    )
