"""The per-hop diagnostic: stamps from inside the SUT joined with the token server's records."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from sut_hops import run

from loadgen_sut import sut as sut_module
from loadgen_sut.engines import http_connection


def test_hops_join_with_the_server_and_the_sut_is_restored(tmp_path: Path) -> None:
    issue, start = sut_module.LoadGenSUT.issue, http_connection.Connection.start
    result = run(qps=40.0, duration_s=2.0, ttft_ms=50.0, tpot_ms=5.0, tokens=8, work=tmp_path)
    assert result["validity"] in ("VALID", "INVALID")  # 100 queries are too few for early stopping
    assert result["joined"], result["counts"]
    n = result["loadgen_ttft_ms"]["count"]
    assert n >= 100 and set(result["counts"].values()) == {n}
    hops = result["hops"]
    assert 50_000 <= hops["server TTFT"]["p50_us"] < 60_000  # the server's configured 50 ms
    for label in ("issue -> write", "server send -> parsed", "parsed -> FirstTokenComplete"):
        assert 0 <= hops[label]["p50_us"] < hops["server TTFT"]["p50_us"], label
    client = hops["client: issue -> FirstTokenComplete"]
    assert client["count"] == n and client["p50_us"] >= hops["server TTFT"]["p50_us"]
    assert sut_module.LoadGenSUT.issue is issue and http_connection.Connection.start is start
