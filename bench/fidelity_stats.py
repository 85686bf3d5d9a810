"""Percentiles and the server-side view of the token server's records (for bench/sut_fidelity.py).

Percentiles use LoadGen's definition (``results.cc``): sort the per-sample values and take the element at index
``min(n - 1, floor(n * p))``, so the server-side p99 and the SUT's p99 are computed the same way.
Every percentile carries its count; "not measured" is None.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Pct:
    """p50 and p99 of one quantity, in milliseconds, over ``count`` samples."""

    p50_ms: float | None
    p99_ms: float | None
    count: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


NOT_MEASURED = Pct(None, None, 0)


def loadgen_percentile(sorted_values: list[float], p: float) -> float:
    """LoadGen's percentile of an already sorted, non-empty list."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, math.floor(n * p))]


def pct_ms(values_ns: list[int] | list[float]) -> Pct:
    if not values_ns:
        return NOT_MEASURED
    ordered = sorted(float(v) for v in values_ns)
    return Pct(loadgen_percentile(ordered, 0.50) / 1e6, loadgen_percentile(ordered, 0.99) / 1e6, len(ordered))


@dataclass(frozen=True)
class ServerView:
    """What the token server observed for one run (one client at one rate).

    * ``ttft``: first token's send time minus the request's receive time at the server;
    * ``tpot``: (last token's send time - first token's send time) / (tokens - 1), LoadGen's TPOT formula;
    * ``e2e``: last token's send time minus receive time;
    * ``ttft_late``: ``ttft`` minus the configured TTFT (how late the server itself was: its own noise floor);
    * ``window_ns``: first receive to last send, the interval over which client CPU is charged;
    * ``rate_per_s``: requests received per second over the receive span.
    """

    requests: int
    complete: int
    tokens: int
    ttft: Pct
    tpot: Pct
    e2e: Pct
    ttft_late: Pct
    window_ns: tuple[int, int] | None
    rate_per_s: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "complete": self.complete,
            "tokens": self.tokens,
            "ttft": self.ttft.to_json(),
            "tpot": self.tpot.to_json(),
            "e2e": self.e2e.to_json(),
            "ttft_late": self.ttft_late.to_json(),
            "window_ns": list(self.window_ns) if self.window_ns else None,
            "rate_per_s": self.rate_per_s,
        }


def server_view(records: list[dict[str, Any]], nominal_ttft_ms: float) -> ServerView:
    """Summarise the token server's per-request records (``GET /_bench/records``)."""
    ttft: list[int] = []
    tpot: list[float] = []
    e2e: list[int] = []
    late: list[float] = []
    recv: list[int] = []
    last_send: list[int] = []
    complete = 0
    tokens = 0
    for record in records:
        sends: list[int] = record["send_ns"]
        recv_ns: int = record["recv_ns"]
        recv.append(recv_ns)
        if not sends:
            continue
        last_send.append(sends[-1])
        if not record.get("stream", True):
            continue
        ttft.append(sends[0] - recv_ns)
        late.append(sends[0] - recv_ns - nominal_ttft_ms * 1e6)
        if record.get("complete"):
            complete += 1
            tokens += len(sends)
            e2e.append(sends[-1] - recv_ns)
            if len(sends) > 1:
                tpot.append((sends[-1] - sends[0]) / (len(sends) - 1))
    window = (min(recv), max(last_send)) if recv and last_send else None
    span_s = (max(recv) - min(recv)) / 1e9 if len(recv) > 1 else 0.0
    rate = (len(recv) - 1) / span_s if span_s > 0 else None
    late_pct = NOT_MEASURED
    if late:
        ordered = sorted(late)
        late_pct = Pct(
            loadgen_percentile(ordered, 0.5) / 1e6, loadgen_percentile(ordered, 0.99) / 1e6, len(ordered)
        )
    return ServerView(
        requests=len(records),
        complete=complete,
        tokens=tokens,
        ttft=pct_ms(ttft),
        tpot=pct_ms(tpot),
        e2e=pct_ms(e2e),
        ttft_late=late_pct,
        window_ns=window,
        rate_per_s=rate,
    )


def error_ms(reported: float | None, observed: float | None) -> float | None:
    """Reported minus observed; None when either is not measured."""
    if reported is None or observed is None:
        return None
    return reported - observed
