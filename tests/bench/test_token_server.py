"""The recording token server (bench/token_server.py) is a real server other tests and the fidelity bench
rely on: its timing, its SSE framing, its usage chunk and its records must be right."""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bench.token_server_proc import start_token_server

TTFT_MS = 60.0
TPOT_MS = 10.0
TOKENS = 8


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    return start_token_server(
        tmp_path, "--ttft-ms", str(TTFT_MS), "--tpot-ms", str(TPOT_MS), "--tokens", str(TOKENS), "--model", "m", *extra
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    proc, port = _start(tmp_path_factory.mktemp("token_server"))
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _post(
    conn: http.client.HTTPConnection, path: str, body: dict[str, object]
) -> tuple[list[tuple[int, bytes]], int]:
    """POST, read the streamed body line by line; returns (receive time ns, SSE data payload) and the status."""
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    events: list[tuple[int, bytes]] = []
    while True:
        line = resp.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            events.append((time.time_ns(), line[6:].rstrip(b"\n")))
    return events, resp.status


def _records(port: int) -> list[dict[str, object]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/_bench/records?reset=1")
    data = json.loads(conn.getresponse().read())
    conn.close()
    records = data["records"]
    assert isinstance(records, list)
    return records


def test_stream_timing_usage_and_records(server: int) -> None:
    _records(server)
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=10)
    sent_ns = time.time_ns()
    body = {
        "model": "m",
        "prompt": "one two three",
        "max_tokens": 100,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    events, status = _post(conn, "/v1/completions", body)
    assert status == 200
    payloads = [e[1] for e in events]
    assert payloads[-1] == b"[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    token_chunks = [c for c in chunks if c["choices"]]
    assert len(token_chunks) == TOKENS  # max_tokens 100 is capped at the server's 8
    assert "".join(c["choices"][0]["text"] for c in token_chunks) == " tok" * TOKENS
    assert [c["choices"][0]["finish_reason"] for c in token_chunks] == [None] * (TOKENS - 1) + ["length"]
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": TOKENS,
        "total_tokens": 3 + TOKENS,
    }

    # the client's own view: token k no earlier than TTFT + k * TPOT after the request was sent; upper bounds are
    # loose (CI shares 2 cores with other jobs), the lower bounds are the server's contract
    client_ms = [(t - sent_ns) / 1e6 for t, _ in events[:TOKENS]]
    assert all(c >= TTFT_MS + k * TPOT_MS - 1 for k, c in enumerate(client_ms))
    assert client_ms[0] < TTFT_MS + 250
    assert client_ms[-1] < TTFT_MS + (TOKENS - 1) * TPOT_MS + 250

    # the server's records: one request, send times of every token, receive time before the first
    (record,) = _records(server)
    send_ns = record["send_ns"]
    assert isinstance(send_ns, list) and len(send_ns) == TOKENS
    assert record["n_tokens"] == TOKENS and record["complete"] is True and record["prompt_tokens"] == 3
    recv_ns = record["recv_ns"]
    assert isinstance(recv_ns, int)
    assert sent_ns <= recv_ns < send_ns[0]
    server_ms = [(t - recv_ns) / 1e6 for t in send_ns]
    # token k is sent no earlier than TTFT + k * TPOT after the request arrived (1 ms: loop timer resolution)
    assert all(s >= TTFT_MS + k * TPOT_MS - 1 for k, s in enumerate(server_ms))
    assert server_ms[0] < TTFT_MS + 200
    assert server_ms[-1] < TTFT_MS + (TOKENS - 1) * TPOT_MS + 200
    assert all(b > a for a, b in itertools.pairwise(send_ns))
    # the server recorded its send before the client saw the token
    assert all(s <= c for s, (c, _) in zip(send_ns, events[:TOKENS], strict=True))

    # keep-alive: a second request on the same connection works, with max_tokens below the server's count
    events, status = _post(conn, "/v1/completions", {"prompt": [5, 6], "max_tokens": 3, "stream": True})
    assert status == 200
    assert len(events) == 3 + 1  # 3 tokens and [DONE], no usage chunk without include_usage
    (record,) = _records(server)
    assert record["n_tokens"] == 3 and record["prompt_tokens"] == 2
    conn.close()


def test_chat_token_ids_and_non_stream(server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=10)
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hello there"}],
        "max_completion_tokens": 2,
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_token_ids": True,
    }
    events, status = _post(conn, "/v1/chat/completions", body)
    assert status == 200
    chunks = [json.loads(p) for _, p in events[:-1]]
    assert chunks[0]["object"] == "chat.completion.chunk"
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": " tok"}
    assert [c["choices"][0]["token_ids"] for c in chunks[:2]] == [[3], [3]]
    assert chunks[-1]["usage"]["completion_tokens"] == 2 and chunks[-1]["usage"]["prompt_tokens"] == 2

    conn.request("POST", "/v1/completions", json.dumps({"prompt": "x", "max_tokens": 4}))
    resp = conn.getresponse()
    whole = json.loads(resp.read())
    assert whole["choices"][0]["text"] == " tok" * 4 and whole["usage"]["completion_tokens"] == 4

    conn.request("GET", "/v1/models")
    models = json.loads(conn.getresponse().read())
    assert models["data"][0]["id"] == "m"
    conn.request("GET", "/nowhere")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 404
    conn.request("POST", "/v1/completions", b"not json")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 400
    conn.close()
    _records(server)


def test_concurrent_streams_are_recorded_and_on_time(server: int) -> None:
    _records(server)
    n = 40
    errors: list[str] = []

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server, timeout=20)
        try:
            events, status = _post(conn, "/v1/completions", {"prompt": "a", "stream": True})
            if status != 200 or len(events) != TOKENS + 1:
                errors.append(f"status {status}, {len(events)} events")
        finally:
            conn.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    records = _records(server)
    assert len(records) == n
    assert all(r["complete"] and len(r["send_ns"]) == TOKENS for r in records)  # type: ignore[arg-type]
    late_ms = sorted((r["send_ns"][0] - r["recv_ns"]) / 1e6 - TTFT_MS for r in records)  # type: ignore[index, operator]
    assert late_ms[0] >= 0
    assert late_ms[len(late_ms) // 2] < 100  # median lateness, loose for a busy shared 2-core machine

    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=10)
    conn.request("GET", "/_bench/stats")
    stats = json.loads(conn.getresponse().read())
    conn.close()
    assert stats["active_streams"] == 0 and stats["cpu_s"] > 0 and stats["requests"] >= n
