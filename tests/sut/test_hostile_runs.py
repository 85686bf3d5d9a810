"""Real LoadGen runs against a misbehaving OpenAI-compatible server on 127.0.0.1.

Outputs LoadGen cannot be handed (a token id outside int32, a usage count >= 2^64) and a server that
never answers: every issued sample must be completed exactly once (failed ones counted by kind), the
run must never be VALID, and it must end within its deadline.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sse_server import ABORT, DONE_AND_END, HOLD, STREAM_HEAD, ServerConfig, SSEServer, StreamPlan, sse_event
from sut_helpers import http_engine, trial

from loadgen_sut.lgtest import deadline_margins
from loadgen_sut.record import RECORD_FILE
from loadgen_sut.run.child import expected_duration_s, loadgen_test_deadline_s
from loadgen_sut.settings import TestMode, TestSettingsModel
from loadgen_sut.sut import BadOutput, response_array, token_count
from rules.models import Scenario

INT32_OVER = 2**31
U64_OVER = 2**64


class HostileServer(SSEServer):
    """The test server, with completions that misbehave as ``behaviour`` says (on every request); every event
    goes out at once (no TTFT, no TPOT)."""

    def __init__(self, behaviour: str, config: ServerConfig | None = None) -> None:
        super().__init__(config or ServerConfig(ttft_s=0.0, tpot_s=0.0))
        self.behaviour = behaviour

    @staticmethod
    def _ev(text: str, ids: list[int] | None, finish: str | None = None) -> bytes:
        choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": finish}
        if ids is not None:
            choice["token_ids"] = ids
        return sse_event({"id": "cmpl-1", "object": "text_completion", "model": "tiny", "choices": [choice]})

    def stream_plan(self, request: dict[str, Any], chat: bool, seq: int, prompt_tokens: int) -> StreamPlan:
        self.count(request)
        b = self.behaviour
        if b == "never_answer":  # the request is read, nothing ever comes back
            return StreamPlan(b"", [], 0, HOLD, hold_s=120)
        want_ids = bool(request.get("return_token_ids"))
        first, second = [100], [101]
        if b == "huge_first_id":
            first = [2**40]
        elif b in ("huge_id", "huge_id_then_reset"):
            second = [INT32_OVER + 5]
        elif b == "negative_id":
            second = [-3]
        w0 = self._ev(" w0", first if want_ids else None)
        if b == "stall_mid_stream":
            return StreamPlan(STREAM_HEAD, [w0], 1, HOLD, hold_s=120)
        w1 = self._ev(" w1", second if want_ids else None)
        if b == "huge_id_then_reset":
            return StreamPlan(STREAM_HEAD, [w0, w1], 2, ABORT)
        usage = U64_OVER if b == "huge_usage" else 2
        end = self._ev("", [] if want_ids else None, finish="length") + sse_event(
            {"id": "cmpl-1", "object": "text_completion", "model": "tiny", "choices": [],
             "usage": {"prompt_tokens": 5, "completion_tokens": usage, "total_tokens": 5 + usage}},
        )
        return StreamPlan(STREAM_HEAD, [w0, w1, end + DONE_AND_END], 2)


def _start(behaviour: str) -> HostileServer:
    server = HostileServer(behaviour)
    server.start()
    return server


# --------------------------------------------------------------------------------------------
# conversion, before the sample leaves the in-flight table


def test_response_conversion_refuses_what_int32_and_int64_cannot_hold() -> None:
    assert response_array([1, 2, INT32_OVER - 1]).dtype == np.int32
    assert response_array([]).size == 0
    for bad in ([INT32_OVER], [-1], [2**70], [1.5], ["7"], [True], [[1, 2]]):
        with pytest.raises(BadOutput):
            response_array(bad)  # type: ignore[arg-type]
    assert token_count(0) == 0 and token_count(2**63 - 1) == 2**63 - 1
    for bad_n in (2**63, U64_OVER, -1, 2.0, True, None, "3"):
        with pytest.raises(BadOutput):
            token_count(bad_n)


# The engine may refuse such an output itself (its kinds: malformed, bad_usage, ...); the SUT refuses what
# reaches it (bad_output, see test_hostile_sut.py). Either way: exactly one failed completion per sample.
@pytest.mark.parametrize(
    ("behaviour", "engine_kw"),
    [
        ("huge_id", {}),  # a token id that does not fit int32 in the final answer
        ("negative_id", {}),
        ("huge_first_id", {}),  # ... in the first token
        ("huge_usage", {"flavor": "generic"}),  # usage.completion_tokens = 2^64
        ("huge_id_then_reset", {}),  # a failure whose partial ids do not convert
    ],
)
def test_unconvertible_outputs_complete_each_sample_once_as_failed(
    tmp_path: Path, behaviour: str, engine_kw: dict[str, object]
) -> None:
    server = _start(behaviour)
    try:
        out = trial(tmp_path, http_engine(server.url, **engine_kw), scenario="Offline", deadline_s=60)
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished", perf.error
    assert perf.sut.issued == perf.sut.completed == 32  # every sample completed exactly once
    assert perf.sut.duplicate_completions == 0
    assert perf.sut.failed == 32 and sum(perf.sut.failures_by_kind.values()) == 32
    assert "deadline" not in perf.sut.failures_by_kind  # failed at once, not by the deadline
    assert perf.sut.output_tokens == 0  # nothing unconvertible is counted as output
    assert perf.loadgen is not None  # LoadGen finished and wrote its logs
    assert out.record.verdict.status == "INVALID"
    assert any("FAILED in the engine" in r for r in out.record.verdict.reasons)


def test_hostile_server_is_healthy_otherwise(tmp_path: Path) -> None:
    """The same server without a fault: the run is fine (the faults above are what fails)."""
    server = _start("healthy")
    try:
        out = trial(tmp_path, http_engine(server.url), scenario="Offline", deadline_s=60)
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished" and perf.sut.failed == 0 and perf.sut.completed == 32


# --------------------------------------------------------------------------------------------
# the run-level deadline


@pytest.mark.parametrize("behaviour", ["never_answer", "stall_mid_stream"])
def test_a_server_that_never_finishes_is_cut_by_the_deadline(tmp_path: Path, behaviour: str) -> None:
    server = _start(behaviour)
    deadline = 10.0
    t0 = time.monotonic()
    try:
        engine = http_engine(server.url, idle_timeout_s=300.0, request_timeout_s=300.0)
        out = trial(tmp_path, engine, scenario="Offline", deadline_s=deadline)
    finally:
        server.stop()
    elapsed = time.monotonic() - t0
    perf = out.record.tests[0]
    assert perf.status == "deadline"
    assert perf.error is not None and "deadline" in perf.error
    # the child completed the outstanding samples itself: LoadGen finished and wrote its logs
    assert perf.sut.issued == perf.sut.completed == 32 and perf.sut.duplicate_completions == 0
    assert perf.sut.failures_by_kind == {"deadline": 32}
    assert perf.loadgen is not None and (out.run_dir / "performance" / "mlperf_log_detail.txt").is_file()
    assert out.record.verdict.status == "INCOMPLETE"
    assert any("performance: deadline" in r for r in out.record.verdict.reasons)
    record = json.loads((out.run_dir / RECORD_FILE).read_text(encoding="utf-8"))
    assert record["verdict"]["status"] == "INCOMPLETE" and record["tests"][0]["status"] == "deadline"
    assert elapsed < deadline + 15  # probe, data set and record writing included


def test_a_test_loadgen_cannot_finish_is_killed_at_the_deadline(tmp_path: Path) -> None:
    """Server traffic for a long minimum duration: even with every sample failed at once LoadGen would go on,
    so the runner stops the child (SIGINT, then SIGKILL) at the deadline."""
    server = _start("never_answer")
    deadline = 8.0
    t0 = time.monotonic()
    try:
        engine = http_engine(server.url, idle_timeout_s=300.0, request_timeout_s=300.0)
        conf = "*.Server.target_qps = 50\n*.Server.min_duration = 600000\n"
        out = trial(tmp_path, engine, scenario="Server", conf=conf, deadline_s=deadline)
    finally:
        server.stop()
    elapsed = time.monotonic() - t0
    perf = out.record.tests[0]
    assert perf.status == "deadline"
    assert perf.error is not None and "ran past its deadline" in perf.error and "SIGINT" in perf.error
    assert out.record.verdict.status == "INCOMPLETE"
    assert elapsed < deadline + 15


def test_deadline_is_derived_from_the_settings() -> None:
    off = TestSettingsModel(
        scenario=Scenario.OFFLINE, conf_model="m", min_duration_ms=600_000, min_query_count=1, offline_expected_qps=10.0
    )
    assert expected_duration_s(off, 100) == pytest.approx(660.0, abs=0.2)
    acc = off.model_copy(update={"mode": TestMode.ACCURACY_ONLY})
    assert expected_duration_s(acc, 1000) == pytest.approx(100.0)
    srv = TestSettingsModel(
        scenario=Scenario.SERVER, conf_model="m", min_duration_ms=1000, min_query_count=6000, server_target_qps=100.0
    )
    assert expected_duration_s(srv, 10) == pytest.approx(60.0)
    d = loadgen_test_deadline_s(srv, 10, http_engine("http://127.0.0.1:1", request_timeout_s=20.0))
    assert d == pytest.approx(600 + 60 * 3 + 20 + 120)
    expire_before, signal_before = deadline_margins(10.0)
    assert 0 < signal_before < expire_before < 10.0
