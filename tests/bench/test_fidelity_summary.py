"""The fidelity bench's judgement over repeated rounds: medians of per-round p99 errors, VALID in every round."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from sut_fidelity import summary


def _client(reported_p99: float, server_p99: float, cpu_ms: float, rate: float) -> dict[str, Any]:
    return {
        "run": {
            "cpu_per_query_ms": cpu_ms,
            "server": {"ttft": {"p99_ms": server_p99}, "ttft_late": {"p99_ms": server_p99 - 200.0}, "rate_per_s": rate},
        },
        "reported": {"ttft": {"p99_ms": reported_p99}, "validity": "VALID", "problem": None},
    }


def _round(qps: float, n: int, sut_err: float, peer_err: float, validity: str = "VALID") -> dict[str, Any]:
    sut = _client(201.0 + sut_err, 201.0, 2.0 + n, qps)
    sut["reported"]["validity"] = validity
    return {"target_qps": qps, "round": n, "sut": sut, "peers": {"aiperf": _client(202.0 + peer_err, 202.0, 13.0, qps)}}


def test_targets_are_judged_on_the_median_round() -> None:
    rounds = [_round(50.0, 1, 6.0, 4.0), _round(50.0, 2, 1.5, 5.0), _round(50.0, 3, 1.0, 3.0)]
    for r, floor_ms in zip(rounds, (2.5, 0.8, 1.1), strict=True):
        r["loadgen_floor"] = {"ttft_p99_ms": floor_ms, "count": 1000}
    s = summary(rounds)
    (lv,) = s["levels"]
    assert lv["rounds"] == 3
    assert lv["sut_ttft_p99_error_ms"] == 1.5  # median of 6.0, 1.5, 1.0
    assert lv["sut_ttft_p99_error_ms_min_max"] == [1.0, 6.0]
    assert lv["peer_ttft_p99_error_ms"] == {"aiperf": 4.0}
    assert lv["ttft_error_target_met"] is True  # 1.5 <= 2 ms at 50 req/s
    assert lv["sut_cpu_per_query_ms"] == 4.0  # median of 3, 4, 5
    assert lv["loadgen_floor_ttft_p99_ms"] == 1.1
    assert s["highest_valid_sut_rate"] == 50.0


def test_a_rate_counts_as_valid_only_when_every_round_is_valid() -> None:
    rounds = [_round(200.0, 1, 10.0, 400.0), _round(200.0, 2, 12.0, 500.0, validity="INVALID")]
    s = summary([_round(100.0, 1, 5.0, 300.0), *rounds])
    assert s["highest_valid_sut_rate"] == 100.0
    by_rate = {lv["target_qps"]: lv for lv in s["levels"]}
    assert by_rate[100.0]["loadgen_floor_ttft_p99_ms"] is None  # not measured
    assert by_rate[200.0]["sut_valid_rounds"] == 1
    assert by_rate[200.0]["sut_ttft_p99_error_ms"] == 11.0  # mean of the two middle values
    assert by_rate[200.0]["ttft_error_target_met"] is True  # 11 <= 0.25 * 450
    assert s["highest_rate_a_peer_held"] == 200.0
