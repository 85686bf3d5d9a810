"""The Protocol-based streaming client (loadgen_sut.engines.sse_protocol) against real loopback servers.

A scripted server sends exact bytes (split across packets, framed by chunks, Content-Length or
close, with faults) so every framing and failure path of the parser runs over a real socket.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from sse_server import SSEServer

from loadgen_sut.engines.base import ErrorKind, Failed, Finished, FirstToken, GenerationEvent
from loadgen_sut.engines.http_client import Endpoint
from loadgen_sut.engines.sse_protocol import SSEStreamClient

Step = bytes | float | None  # bytes to send, seconds to wait, None: close the connection
Script = Sequence[Step]

_HEAD_CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def _event(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _token(k: int, final: bool = False) -> bytes:
    choice = {"index": 0, "text": f" w{k}", "token_ids": [100 + k], "finish_reason": "length" if final else None}
    return _event({"choices": [choice]})


def _usage(n: int) -> bytes:
    return _event({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": n, "total_tokens": 3 + n}})


def _chunk(payload: bytes) -> bytes:
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def _sse_body(n: int = 3) -> list[bytes]:
    return [_token(k, final=k == n - 1) for k in range(n)] + [_usage(n), b"data: [DONE]\n\n"]


def _chunked(events: list[bytes], trailer: bytes = b"") -> bytes:
    return _HEAD_CHUNKED + b"".join(_chunk(e) for e in events) + b"0\r\n" + trailer + b"\r\n"


class ScriptedServer:
    """Answers the i-th request on the j-th connection with ``answer(conn_no, req_no)``."""

    def __init__(self, answer: Callable[[int, int], Script]) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def endpoint(self) -> Endpoint:
        assert self._server is not None
        return Endpoint.parse(f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_no = self.connections
        self.connections += 1
        req_no = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")
                )
                self.requests.append(head + await reader.readexactly(length))
                for step in self.answer(conn_no, req_no):
                    if step is None:
                        writer.transport.abort()
                        return
                    if isinstance(step, float):
                        await asyncio.sleep(step)
                    else:
                        writer.write(step)
                        await writer.drain()
                req_no += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.transport.abort()


async def _collect(client: SSEStreamClient, ep: Endpoint, *, engine_ids: bool = True) -> list[GenerationEvent]:
    return [
        ev
        async for ev in client.stream(
            ep, "/v1/completions", {"model": "m", "prompt": "hi"}, chat=False, engine_ids=engine_ids, tokenizer=None
        )
    ]


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(fn(), 20))


def _split(data: bytes, size: int) -> list[Step]:
    out: list[Step] = []
    for i in range(0, len(data), size):
        out += [data[i : i + size], 0.001]
    return out


def test_real_server_stream_and_keep_alive(sse_server: SSEServer) -> None:
    async def main() -> None:
        client = SSEStreamClient(idle_timeout_s=5.0)
        ep = Endpoint.parse(sse_server.url)
        for _ in range(3):
            body = {"model": "tiny", "prompt": [1, 2], "max_tokens": 12, "stream": True}
            body |= {"stream_options": {"include_usage": True}, "return_token_ids": True}
            events = [
                ev
                async for ev in client.stream(ep, "/v1/completions", body, chat=False, engine_ids=True, tokenizer=None)
            ]
            assert events == [
                FirstToken(token_ids=(100,)),
                Finished(
                    token_ids=tuple(range(100, 112)),
                    n_tokens=12,
                    finish_reason="length",
                    text="".join(f" w{k}" for k in range(12)),
                ),
            ]
            assert client.idle_connections(ep) == 1  # the one connection went back to the pool
        client.close()
        assert client.idle_connections(ep) == 0

    _run(main)


@pytest.mark.parametrize(
    "script",
    [
        pytest.param([_chunked(_sse_body())], id="chunked"),
        pytest.param(_split(_chunked(_sse_body()), 7), id="split-every-7-bytes"),
        pytest.param([_chunked(_sse_body(), trailer=b"X-Trailer: 1\r\n")], id="chunk-trailers"),
        pytest.param(
            [_HEAD_CHUNKED + _chunk(b"".join(_sse_body())) + b"0\r\n\r\n"],
            id="all-events-in-one-chunk",
        ),
        pytest.param(
            [
                b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(b"".join(_sse_body())),
                *_sse_body(),
            ],
            id="content-length",
        ),
        pytest.param(
            [_HEAD_CHUNKED + b"".join(_chunk(e.replace(b"\n", b"\r\n")) for e in _sse_body()) + b"0\r\n\r\n"],
            id="crlf-sse-lines",
        ),
    ],
)
def test_framings_that_complete(script: list[Step]) -> None:
    async def main() -> None:
        async with ScriptedServer(lambda c, r: script) as server:
            client = SSEStreamClient(idle_timeout_s=5.0)
            events = await _collect(client, server.endpoint)
            assert events == [
                FirstToken(token_ids=(100,)),
                Finished(token_ids=(100, 101, 102), n_tokens=3, finish_reason="length", text=" w0 w1 w2"),
            ]
            assert client.idle_connections(server.endpoint) == 1
            assert b"POST /v1/completions HTTP/1.1" in server.requests[0]
            client.close()

    _run(main)


def test_read_to_close_body_completes_and_is_not_reused() -> None:
    async def main() -> None:
        script: Script = [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", *_sse_body(), None]
        async with ScriptedServer(lambda c, r: script) as server:
            client = SSEStreamClient(idle_timeout_s=5.0)
            events = await _collect(client, server.endpoint)
            assert isinstance(events[-1], Finished) and events[-1].n_tokens == 3
            assert client.idle_connections(server.endpoint) == 0

    _run(main)


def _json_response(status: int, obj: Any) -> bytes:
    data = json.dumps(obj).encode()
    return b"HTTP/1.1 %d Oops\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status, len(data)) + data


@pytest.mark.parametrize(
    ("script", "kind", "fragment"),
    [
        pytest.param(
            [_json_response(429, {"error": {"message": "rate limited, retry later"}})],
            ErrorKind.HTTP_STATUS,
            "HTTP 429 Oops: rate limited, retry later",
            id="http-429-json-message",
        ),
        pytest.param(
            [_HEAD_CHUNKED.replace(b"200 OK", b"503 Busy") + _chunk(b"overloaded") + b"0\r\n\r\n"],
            ErrorKind.HTTP_STATUS,
            "HTTP 503 Busy: overloaded",
            id="http-503-chunked-text",
        ),
        pytest.param([b"SPDY/9 200 OK\r\n\r\n"], ErrorKind.MALFORMED, "not an HTTP/1.x status line", id="bad-status-line"),
        pytest.param([_HEAD_CHUNKED + b"zz\r\n"], ErrorKind.MALFORMED, "bad chunk size line", id="bad-chunk-size"),
        pytest.param(
            [_HEAD_CHUNKED + _chunk(_token(0)), 0.01, None], ErrorKind.RESET, "middle of the response body", id="reset"
        ),
        pytest.param([None], ErrorKind.RESET, "before the response status line", id="closed-before-answer"),
        pytest.param(
            [_chunked([*_sse_body(), _token(9)])], ErrorKind.MALFORMED, "data after [DONE]", id="data-after-done"
        ),
        pytest.param(
            [_chunked([_token(0), _usage(1), b"data: [DONE]\n\n"])],
            ErrorKind.TRUNCATED,
            "no finish_reason",
            id="no-finish-reason",
        ),
        pytest.param([_chunked([_token(0, final=True), _usage(1)])], ErrorKind.TRUNCATED, "no [DONE]", id="no-done"),
        pytest.param(
            [_chunked([_token(0, final=True), b'data: {"choices": "x"}\n\n'])],
            ErrorKind.MALFORMED,
            "without a choices list",
            id="choices-not-a-list",
        ),
        pytest.param(
            [_chunked([_token(0), _event({"error": "CUDA out of memory"})])],
            ErrorKind.ENGINE,
            "CUDA out of memory",
            id="in-band-error-string",
        ),
        pytest.param(
            [_chunked([_token(0), _token(1, final=True), _usage(3), b"data: [DONE]\n\n"])],
            ErrorKind.TOKEN_MISMATCH,
            "engine returned 2 token ids but usage says 3",
            id="usage-mismatch",
        ),
    ],
)
def test_failures(script: list[Step], kind: ErrorKind, fragment: str) -> None:
    async def main() -> None:
        async with ScriptedServer(lambda c, r: script) as server:
            client = SSEStreamClient(idle_timeout_s=5.0)
            events = await _collect(client, server.endpoint)
            last = events[-1]
            assert isinstance(last, Failed), events
            assert last.error.kind is kind
            assert fragment in last.error.message
            assert last.error.endpoint == server.endpoint.url
            assert sum(isinstance(e, FirstToken) for e in events) <= 1
            client.close()

    _run(main)


def test_partial_ids_come_with_a_failure() -> None:
    async def main() -> None:
        script: Script = [_HEAD_CHUNKED + _chunk(_token(0)) + _chunk(_token(1)), 0.01, None]
        async with ScriptedServer(lambda c, r: script) as server:
            events = await _collect(SSEStreamClient(idle_timeout_s=5.0), server.endpoint)
            assert events[0] == FirstToken(token_ids=(100,))
            assert isinstance(events[1], Failed) and events[1].partial_token_ids == (100, 101)

    _run(main)


def test_text_only_stream_without_usage_is_missing_usage() -> None:
    async def main() -> None:
        text_only = [_event({"choices": [{"index": 0, "text": " a", "finish_reason": "stop"}]}), b"data: [DONE]\n\n"]
        async with ScriptedServer(lambda c, r: [_chunked(text_only)]) as server:
            events = await _collect(SSEStreamClient(idle_timeout_s=5.0), server.endpoint, engine_ids=False)
            assert events[0] == FirstToken(token_ids=(), ids_from_engine=False)
            assert isinstance(events[1], Failed) and events[1].error.kind is ErrorKind.MISSING_USAGE

    _run(main)


def test_idle_gap_and_total_deadline_time_out() -> None:
    async def main() -> None:
        silent: Script = [5.0]
        beat: list[Step] = [_chunk(b": keep-alive comment\n"), 0.05]
        trickle: Script = [_HEAD_CHUNKED, *(beat * 100)]
        async with ScriptedServer(lambda c, r: silent) as server:
            events = await _collect(SSEStreamClient(idle_timeout_s=0.2), server.endpoint)
            assert isinstance(events[-1], Failed) and events[-1].error.kind is ErrorKind.TIMEOUT
            assert events[-1].error.message == "no data for 0.2 s (before the response started)"
        async with ScriptedServer(lambda c, r: trickle) as server:
            client = SSEStreamClient(idle_timeout_s=1.0, request_timeout_s=0.4)
            events = await _collect(client, server.endpoint)
            assert isinstance(events[-1], Failed) and events[-1].error.kind is ErrorKind.TIMEOUT
            assert events[-1].error.message == "request timeout (stream aborted)"
            assert client.idle_connections(server.endpoint) == 0

    _run(main)


def test_connection_refused_is_connect() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens there

    async def main() -> None:
        events = await _collect(SSEStreamClient(), Endpoint.parse(f"http://127.0.0.1:{port}"))
        assert len(events) == 1 and isinstance(events[0], Failed)
        assert events[0].error.kind is ErrorKind.CONNECT

    _run(main)


def test_stale_keep_alive_connection_is_retried_once_on_a_fresh_one() -> None:
    def answer(conn_no: int, req_no: int) -> Script:
        # the first connection serves one request, then drops the next one unanswered
        return [None] if req_no == 1 else [_chunked(_sse_body())]

    async def main() -> None:
        async with ScriptedServer(answer) as server:
            client = SSEStreamClient(idle_timeout_s=5.0)
            for _ in range(2):
                events = await _collect(client, server.endpoint)
                assert isinstance(events[-1], Finished), events
            assert server.connections == 2
            assert len(server.requests) == 3  # the dropped one was sent again
            client.close()

    _run(main)


def test_closing_the_stream_mid_response_drops_the_connection() -> None:
    async def main() -> None:
        script: Script = [_HEAD_CHUNKED + _chunk(_token(0)), 5.0]
        async with ScriptedServer(lambda c, r: script) as server:
            client = SSEStreamClient(idle_timeout_s=10.0)
            gen = client.stream(
                server.endpoint, "/v1/completions", {"prompt": "x"}, chat=False, engine_ids=True, tokenizer=None
            )
            assert await gen.__anext__() == FirstToken(token_ids=(100,))
            await gen.aclose()
            assert client.idle_connections(server.endpoint) == 0

    _run(main)
