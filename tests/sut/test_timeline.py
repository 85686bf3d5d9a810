"""The SUT's per-sample timeline (``sut_timeline.jsonl``): recorded for every LoadGen test, beside LoadGen's logs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sut_helpers import http_engine, sim_engine, start_server, trial
from test_sse_protocol import Script, ScriptedServer, _chunked, _run, _sse_body

from checker.findings import UnusableInput
from loadgen_sut.engines.base import Finished
from loadgen_sut.engines.sse_protocol import SSEStreamClient
from loadgen_sut.timeline import NOT_MEASURED, TIMELINE_FILE, TimelineColumns, read_timeline


def test_columns_round_trip_with_none_for_what_was_not_measured(tmp_path: Path) -> None:
    cols = TimelineColumns()
    cols.append(7, 1_000, 1_500, 40_000, 90_000, 17, True)
    cols.append(8, 2_000, NOT_MEASURED, NOT_MEASURED, 3_000, NOT_MEASURED, False)  # failed before its first token
    path = tmp_path / TIMELINE_FILE
    cols.write(path, t0_ns=500)
    tl = read_timeline(path)
    assert tl.header.t0_ns == 500
    a, b = tl.samples
    assert (a.qsl_idx, a.issued_ns, a.dispatched_ns, a.first_token_ns, a.completed_ns) == (7, 500, 1_000, 39_500, 89_500)
    assert (a.output_tokens, a.ok, a.dispatch_lag_ns, a.ttft_ns) == (17, True, 500, 39_000)
    assert a.tpot_ns == (89_500 - 39_500) / 16
    assert (b.dispatched_ns, b.first_token_ns, b.output_tokens, b.ok, b.ttft_ns) == (None, None, None, False, None)
    assert list(cols.samples(500)) == list(tl.samples)  # the fast writer's lines are what the model reads
    assert not path.with_name(path.name + ".tmp").exists()


def test_a_malformed_timeline_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / TIMELINE_FILE
    path.write_text('{"timeline": 1, "t0_ns": 5}\n{"qsl_idx": 1, "issued_ns": "soon", "ok": true}\n', encoding="utf-8")
    with pytest.raises(UnusableInput) as err:
        read_timeline(path)
    assert err.value.path == str(path) and err.value.line == 2


def test_simulated_run_writes_one_line_per_issued_sample(tmp_path: Path) -> None:
    out = trial(tmp_path, sim_engine(), scenario="Server")
    perf = out.record.tests[0]
    tl = read_timeline(out.run_dir / "performance" / TIMELINE_FILE)
    assert len(tl.samples) == perf.sut.issued == perf.sut.completed > 0
    assert all(s.ok for s in tl.samples)
    assert all(s.dispatched_ns is None for s in tl.samples)  # an in-process engine has no socket
    for s in tl.samples:
        assert s.first_token_ns is not None and s.completed_ns is not None
        assert 0 <= s.issued_ns <= s.first_token_ns <= s.completed_ns
    assert sum(s.output_tokens or 0 for s in tl.samples) == perf.sut.output_tokens
    completed = [s.completed_ns or 0 for s in tl.samples]
    assert completed == sorted(completed)  # written in completion order
    assert perf.client is not None and perf.client.dispatch_lag.count == 0  # not measured, not zero


def test_http_run_records_the_dispatch_of_every_request(tmp_path: Path) -> None:
    server = start_server(output_tokens=8)
    try:
        out = trial(tmp_path, http_engine(server.url), scenario="Server")
    finally:
        server.stop()
    perf = out.record.tests[0]
    tl = read_timeline(out.run_dir / "performance" / TIMELINE_FILE)
    assert len(tl.samples) == perf.sut.issued == server.stats.completions
    for s in tl.samples:
        assert s.ok and s.output_tokens == 8
        assert s.dispatched_ns is not None and s.first_token_ns is not None and s.completed_ns is not None
        assert s.issued_ns <= s.dispatched_ns <= s.first_token_ns <= s.completed_ns
    assert perf.client is not None and perf.client.dispatch_lag.count == len(tl.samples)


def test_failed_samples_are_in_the_timeline_not_ok_without_tokens(tmp_path: Path) -> None:
    server = start_server(output_tokens=8, fault="http500", fault_every=3)
    try:
        out = trial(tmp_path, http_engine(server.url), scenario="Server")
    finally:
        server.stop()
    perf = out.record.tests[0]
    tl = read_timeline(out.run_dir / "performance" / TIMELINE_FILE)
    failed = [s for s in tl.samples if not s.ok]
    assert len(tl.samples) == perf.sut.issued and len(failed) == perf.sut.failed > 0
    assert all(s.output_tokens is None and s.first_token_ns is None and s.dispatched_ns is not None for s in failed)


def test_a_request_sent_again_on_a_fresh_connection_reports_both_writes() -> None:
    """A kept-alive connection the server dropped: the request is re-sent; ``on_sent`` fires for each write (the SUT
    keeps the last, the dispatch that was answered)."""

    def answer(conn_no: int, req_no: int) -> Script:
        return [None] if req_no == 1 else [_chunked(_sse_body())]

    async def main() -> None:
        async with ScriptedServer(answer) as server:
            client = SSEStreamClient(idle_timeout_s=5.0)
            writes: list[int] = []
            for expected in (1, 3):
                pending = client.begin(
                    server.endpoint,
                    "/v1/completions",
                    b'{"prompt": "x"}',
                    chat=False,
                    engine_ids=True,
                    tokenizer=None,
                    on_sent=lambda: writes.append(len(writes)),
                )
                events = [ev async for ev in client.follow(pending)]
                assert isinstance(events[-1], Finished)
                assert len(writes) == expected
                await asyncio.sleep(0)
            assert server.connections == 2
            client.close()

    _run(main)
