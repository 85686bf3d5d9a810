"""LoadGen's early-stopping rule for Server-style latency gates, as arithmetic (for the report's bound).

LoadGen counts the queries over a latency limit (``t``) among the ``n`` it processed and passes the run only if
the chance of seeing ``t`` or fewer over the limit, were the true fraction over it exactly ``1 - percentile``,
is below ``1 - confidence``: ``P(Binomial(n, 1 - percentile) <= t) < 1 - confidence``, with confidence 0.99 and
no tolerance (mlcommons/inference ``loadgen/results.cc`` ``PerformanceSummary::EarlyStopping``, Server case, and
``loadgen/early_stopping.cc``: the odds are a regularized beta function, found by binary search). The same rule
is applied to TTFT and to TPOT when token latencies are on.

Measured against LoadGen 6.0.17: 459 queries pass with none over the limit (``ceil(log 0.01 / log 0.99)``, also
``shared/reference/loadgen-notes.md`` §4); a run of 608 queries of which LoadGen said it "would need to run at
least 12409 more" is this rule's answer for 104 queries over the TTFT limit (608 + 12409 = 13017 =
:func:`min_queries_to_pass` (104)).
"""

from __future__ import annotations

from collections.abc import Sequence

from scipy.stats import binom

CONFIDENCE = 0.99  # loadgen/results.cc EarlyStopping: confidence = 0.99
TOLERANCE = 0.0  # loadgen/results.cc EarlyStopping: tolerance = 0.0


def passes(n: int, over: int, percentile: float = 0.99, confidence: float = CONFIDENCE) -> bool:
    """Whether ``n`` processed queries with ``over`` of them over the limit meet early stopping."""
    if n <= 0 or over < 0 or over > n:
        return False
    return bool(binom.cdf(over, n, 1.0 - percentile + TOLERANCE) < 1.0 - confidence)


def max_over_limit(n: int, percentile: float = 0.99, confidence: float = CONFIDENCE) -> int:
    """The most queries of ``n`` that may be over the limit and still pass; -1 when even none is not enough
    (fewer than 459 queries at p99)."""
    if n <= 0:
        return -1
    q = 1.0 - percentile + TOLERANCE
    # the largest t with cdf(t) < 1 - c: ppf gives the smallest t with cdf(t) >= 1 - c
    t = int(binom.ppf(1.0 - confidence, n, q))
    while t >= 0 and not binom.cdf(t, n, q) < 1.0 - confidence:
        t -= 1
    while t + 1 <= n and binom.cdf(t + 1, n, q) < 1.0 - confidence:
        t += 1
    return t


def min_queries_to_pass(over: int, percentile: float = 0.99, confidence: float = CONFIDENCE) -> int:
    """The fewest processed queries with which ``over`` queries over the limit still pass (LoadGen's ``h + t``)."""
    q = 1.0 - percentile + TOLERANCE
    lo, hi = over + 1, max(over + 2, 16)
    while not binom.cdf(over, hi, q) < 1.0 - confidence:
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if binom.cdf(over, mid, q) < 1.0 - confidence:
            hi = mid
        else:
            lo = mid + 1
    return lo


def bound_curve(ns: Sequence[int], percentile: float = 0.99) -> list[int]:
    """:func:`max_over_limit` for each of ``ns``."""
    return [max_over_limit(n, percentile) for n in ns]


def count_over(values: Sequence[float], limit: float) -> int:
    """Values strictly over ``limit`` (LoadGen counts ``latency > target``)."""
    return sum(1 for v in values if v > limit)
