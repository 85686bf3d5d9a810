"""bench/token_server.py --max-concurrency: the configured capacity the sweep's knee is checked against. At most N
requests generate at once, the others wait in arrival order, and the wait is in their TTFT (server records)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path

from test_sweep_runs import start_server, stop

MS = 1_000_000
# start_server: TTFT 100 ms, TPOT 20 ms, 16 tokens; with max_tokens 4 a request holds a slot 100 + 3 x 20 = 160 ms
SERVICE_MS = 160.0


def _get(port: int, path: str) -> dict[str, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    data = json.loads(conn.getresponse().read())
    conn.close()
    assert isinstance(data, dict)
    return data


def _stream(port: int, errors: list[str], stream: bool = True) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("POST", "/v1/completions", json.dumps({"prompt": "a", "max_tokens": 4, "stream": stream}))
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200 or (stream and body.count(b"data: ") != 5) or (not stream and b'"completion_tokens":4' not in body):
            errors.append(f"status {resp.status}: {body[:200]!r}")
    finally:
        conn.close()


def test_at_most_n_generate_at_once_and_the_wait_is_in_ttft(tmp_path: Path) -> None:
    proc, port = start_server(tmp_path, "--max-concurrency", "2")
    try:
        errors: list[str] = []
        threads = [threading.Thread(target=_stream, args=(port, errors, i != 5)) for i in range(6)]  # one non-stream
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        records = _get(port, "/_bench/records?reset=1")["records"]
        assert isinstance(records, list) and len(records) == 6
        # generating intervals: from the slot taken (first token - TTFT) to the last token; never more than 2 overlap
        spans = sorted((r["send_ns"][0] - 100 * MS, r["send_ns"][-1]) for r in records)
        for start, _ in spans:
            overlapping = sum(1 for s, e in spans if s <= start + MS and e > start + MS)
            assert overlapping <= 2, spans
        # 6 requests through 2 slots of 160 ms each: three waves; the last two waited two services
        first_recv = min(r["recv_ns"] for r in records)
        last_send = max(r["send_ns"][-1] for r in records)
        assert (last_send - first_recv) / MS >= 3 * SERVICE_MS - 2
        ttft_ms = sorted((r["send_ns"][0] - r["recv_ns"]) / MS for r in records)
        assert ttft_ms[0] >= 100 - 1 and ttft_ms[-1] >= 100 + SERVICE_MS  # the last in line waited (>= one wave)
        stats = _get(port, "/_bench/stats")
        assert (stats["max_concurrency"], stats["running"], stats["waiting"], stats["active_streams"]) == (2, 0, 0, 0)
    finally:
        stop(proc)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert "at most 2 at once: capacity 5 req/s" in out  # 2 / (100 ms + 15 x 20 ms) = 5 req/s


def test_a_client_gone_while_waiting_frees_nothing_twice(tmp_path: Path) -> None:
    proc, port = start_server(tmp_path, "--max-concurrency", "1")
    try:
        errors: list[str] = []
        first = threading.Thread(target=_stream, args=(port, errors))
        first.start()
        time.sleep(0.03)
        gone = socket.create_connection(("127.0.0.1", port))  # waits behind the first, then goes away
        body = json.dumps({"prompt": "b", "max_tokens": 4, "stream": True}).encode()
        gone.sendall(b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        time.sleep(0.03)
        gone.close()
        _stream(port, errors)  # the third waits for the first only
        first.join()
        assert errors == []
        stats = _get(port, "/_bench/stats")
        assert (stats["running"], stats["waiting"], stats["active_streams"]) == (0, 0, 0)
        records = _get(port, "/_bench/records?reset=1")["records"]
        assert isinstance(records, list)
        assert sorted(r["complete"] for r in records) == [False, True, True]
    finally:
        stop(proc)
