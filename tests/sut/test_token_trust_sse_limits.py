"""The SSE parser is linear in the response size and caps what one response may make it hold.

Before: one long data line was rescanned from its start on every read, and a long HTTP chunk was copied
whole on every read (a 50 MB line in one chunk: 57 s; in 16 KiB chunks: 3.2 s; memory unbounded).
Now a line is scanned once, chunk data is passed on as it arrives, one SSE event may hold at most
``MAX_EVENT_BYTES`` (16 MiB) and a response at most ``MAX_RESPONSE_BYTES``: over that, that sample
fails ``stream_too_large`` — not the run, not the client.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from loopback_server import LoopbackServer
from test_token_trust import (
    HEAD_CHUNKED,
    Scripted,
    chunk,
    chunked,
    collect,
    event,
    failed,
    last,
    text_event,
    usage_event,
)

from loadgen_sut.engines.base import ErrorKind, Finished
from loadgen_sut.engines.http_client import Endpoint
from loadgen_sut.engines.sse_protocol import MAX_EVENT_BYTES, SSEStreamClient

BLOCK = b"x" * (1 << 16)
TAIL = usage_event(3) + b"data: [DONE]\n\n"


class LongLineServer(LoopbackServer):
    """Streams one ``data:`` line of a JSON event whose text is ``size`` bytes, written block by block
    (the server never holds the line): in many HTTP chunks, one HTTP chunk, or with Content-Length."""

    def __init__(self, size: int, framing: str) -> None:
        super().__init__()
        self.size = size
        self.framing = framing

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        prefix = b'data: {"choices": [{"index": 0, "finish_reason": "length", "text": "'
        suffix = b'"}]}\n\n'
        total = len(prefix) + self.size + len(suffix) + len(TAIL)
        try:
            await reader.readuntil(b"\r\n\r\n")
            await reader.read(4096)
            if self.framing == "length":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % total)
            else:
                writer.write(HEAD_CHUNKED)
            if self.framing == "one-chunk":
                writer.write(b"%x\r\n" % (total - len(TAIL)))
            wrap = (lambda b: chunk(b)) if self.framing == "chunks" else (lambda b: b)
            writer.write(wrap(prefix))
            left = self.size
            while left > 0:
                piece = BLOCK[: min(left, len(BLOCK))]
                writer.write(wrap(piece))
                left -= len(piece)
                await writer.drain()
            writer.write(wrap(suffix))
            if self.framing == "one-chunk":
                writer.write(b"\r\n" + chunk(TAIL))
            else:
                writer.write(wrap(TAIL))
            if self.framing != "length":
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            await reader.read(1)  # until the client closes or drops the connection
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()


async def _stream(ep: Endpoint, client: SSEStreamClient) -> list[Any]:
    return [
        ev
        async for ev in client.stream(ep, "/v1/completions", {"prompt": "x"}, chat=False, engine_ids=False, tokenizer=None)
    ]


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(fn(), 60))


@pytest.mark.parametrize("framing", ["chunks", "one-chunk", "length"])
def test_a_50_mb_data_line_fails_that_sample_fast_and_in_bounded_memory(framing: str) -> None:
    async def main() -> None:
        async with LongLineServer(50_000_000, framing) as server:
            client = SSEStreamClient(idle_timeout_s=10.0)
            tracemalloc.start()
            t0 = time.perf_counter()
            try:
                events = await _stream(server.endpoint, client)
                elapsed = time.perf_counter() - t0
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            ev = failed(events, ErrorKind.TOO_LARGE, "stream too large: one SSE event is over 16 MiB")
            assert ev.error.kind.value == "stream_too_large"
            assert elapsed < 10.0  # ~0.1 s here; before: 57 s (one chunk), 3.2 s (16 KiB chunks), all 50 MB held
            assert peak < MAX_EVENT_BYTES + (24 << 20), f"peak {peak >> 20} MiB"
            assert client.idle_connections(server.endpoint) == 0  # the connection was dropped, not reused
            # the client is fine afterwards: the next request on a fresh connection
            async with Scripted([chunked([text_event("ok", final=True), usage_event(1), b"data: [DONE]\n\n"])]) as ok:
                good = await _stream(ok.endpoint, client)
                assert isinstance(good[-1], Finished)
            client.close()

    _run(main)


@pytest.mark.parametrize("framing", ["chunks", "one-chunk"])
def test_a_50_mb_event_under_a_raised_cap_parses_in_linear_time(framing: str) -> None:
    """With the cap raised above it, the same 50 MB line completes: one scan, no quadratic copies."""

    async def main() -> None:
        async with LongLineServer(50_000_000, framing) as server:
            client = SSEStreamClient(idle_timeout_s=10.0, max_event_bytes=64 << 20)
            t0 = time.perf_counter()
            events = await _stream(server.endpoint, client)
            elapsed = time.perf_counter() - t0
            ev = last(events)
            assert isinstance(ev, Finished), events
            assert ev.n_tokens == 3 and ev.count_check == "plausibility"
            assert elapsed < 10.0  # ~0.25 s here; before: 57 s in one chunk
            client.close()

    _run(main)


def test_a_12_mb_event_within_the_default_cap_completes() -> None:
    async def main() -> None:
        async with LongLineServer(12_000_000, "one-chunk") as server:
            client = SSEStreamClient(idle_timeout_s=10.0)
            events = await _stream(server.endpoint, client)
            assert isinstance(last(events), Finished), events
            assert client.idle_connections(server.endpoint) == 1
            client.close()

    _run(main)


def test_an_event_of_many_data_lines_is_capped_too() -> None:
    line = b"data: " + b"y" * 1000 + b"\n"
    body = line * 40  # 40 KB in one event (no blank line)

    async def main() -> None:
        client = SSEStreamClient(idle_timeout_s=5.0, max_event_bytes=16 << 10)
        events = await collect([HEAD_CHUNKED + chunk(body), 5.0], client=client)
        failed(events, ErrorKind.TOO_LARGE, "one SSE event is over 16384 bytes")
        client.close()

    _run(main)


def test_the_whole_response_is_capped() -> None:
    events_ = [text_event(f" w{k}", ids=[k]) for k in range(2000)]  # ~150 KB of small, valid events

    async def main() -> None:
        client = SSEStreamClient(idle_timeout_s=5.0, max_response_bytes=64 << 10)
        events = await collect([chunked([*events_, text_event("", final=True), usage_event(2000)])], client=client)
        failed(events, ErrorKind.TOO_LARGE, "stream too large: the response is over 65536 bytes")
        client.close()

    _run(main)


def test_events_split_at_every_byte_still_parse() -> None:
    evs = [text_event(f" w{k}", final=k == 4) for k in range(5)]
    body = HEAD_CHUNKED + chunk(b"".join(evs[:3]).replace(b"\n", b"\r\n")) + b"".join(chunk(e) for e in evs[3:])
    body += chunk(b"data: " + json.dumps({"choices": [], "usage": {"completion_tokens": 5}}).encode())
    body += chunk(b"\n\ndata: [DONE]\n\n") + b"0\r\n\r\n"
    steps: list[Any] = []
    for i in range(len(body)):
        steps += [body[i : i + 1], 0.0005] if i % 3 == 0 else [body[i : i + 1]]

    async def main() -> None:
        ev = last(await collect(steps))
        assert isinstance(ev, Finished) and ev.n_tokens == 5

    _run(main)


@pytest.mark.parametrize(
    ("head", "fragment"),
    [
        (HEAD_CHUNKED + b"-5\r\nhello\r\n0\r\n\r\n", "bad chunk size line"),
        (HEAD_CHUNKED + b"f" * 2000, "chunk size line too long"),
        (HEAD_CHUNKED + b"5\r\nhelloXX0\r\n\r\n", "chunk not followed by CRLF"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
    ],
    ids=["negative-chunk-size", "long-chunk-size-line", "no-crlf-after-chunk", "negative-content-length"],
)
def test_bad_framing_is_malformed(head: bytes, fragment: str) -> None:
    async def main() -> None:
        failed(await collect([head, 5.0]), ErrorKind.MALFORMED, fragment)

    _run(main)


def test_not_json_nested_too_deeply_is_malformed_not_an_exception() -> None:
    deep = b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"

    async def main() -> None:
        failed(await collect([chunked([deep])]), ErrorKind.MALFORMED, "not JSON in SSE data")
        huge_error = event({"error": {"message": "e" * 100_000}})
        ev = failed(await collect([chunked([huge_error])]), ErrorKind.ENGINE, "engine error in stream")
        assert len(ev.error.message) < 400

    _run(main)
