"""EXPERIMENT (measurement only, not product code): a Protocol-based SSE reader for the OpenAI engine.

Loaded through ``PYTHONPATH`` by every Python process of a fidelity run, it replaces
``loadgen_sut.engines.openai_http.OpenAIEngine._stream`` with a reader that parses HTTP chunking, SSE framing and
the JSON of each event inside ``asyncio.Protocol.data_received``, and wakes the sample's task only twice per
request (first token, end) instead of once or twice per token through ``StreamReader`` and three layers of async
generators. It keeps no watchdog and little error detail: it exists to measure what such a reader would change.

    PYTHONPATH=$PWD/bench/experiments/sse_protocol_client \\
        python3 bench/sut_fidelity.py --levels 44,200,340 --peers none --nice -10 --out out/fidelity-proto

Measured with it on 2 shared cores (SUT only, --nice -10, 15-20 s per level; base = the engine as committed,
runs interleaved):

    req/s  TTFT p99 error, ms (base -> this)            CPU ms/query (base -> this)
    100    +49.6, +8.7        -> +14.5, +9.1             5.66, 5.00 -> 3.80, 4.04
    200    +116, +124, +65    -> +37, +60, +34           4.19, 4.45, 4.72 -> 3.32, 3.45, 3.56
    340    +1303, +711, +1485 -> +205, +89, +110         2.71, 2.71, 2.96 -> 2.78, 2.90, 2.97 (one saturated thread)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

try:
    from loadgen_sut.engines import openai_http
    from loadgen_sut.engines.base import EngineError, ErrorKind, Failed, Finished, FirstToken
except ImportError:  # not the project's interpreter: leave it alone
    openai_http = None  # type: ignore[assignment]


class _Request:
    __slots__ = ("done", "error", "finish", "first", "ids", "texts", "usage")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.first: asyncio.Future[bool] = loop.create_future()
        self.done: asyncio.Future[bool] = loop.create_future()
        self.ids: list[int] = []
        self.texts: list[str] = []
        self.usage: int | None = None
        self.finish: str | None = None
        self.error: str | None = None


class _Connection(asyncio.Protocol):
    def __init__(self, pool: list[_Connection]) -> None:
        self.pool = pool
        self.transport: Any = None
        self.buf = bytearray()
        self.sse = bytearray()
        self.req: _Request | None = None
        self.in_body = False
        self.closed = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail("connection lost")

    def _fail(self, message: str) -> None:
        req, self.req = self.req, None
        if req is None:
            return
        req.error = message
        for fut in (req.first, req.done):
            if not fut.done():
                fut.set_result(False)
        if self.transport is not None:
            self.transport.abort()

    def start(self, req: _Request, raw: bytes) -> None:
        self.req = req
        self.in_body = False
        self.buf.clear()
        self.sse.clear()
        self.transport.write(raw)

    def data_received(self, data: bytes) -> None:
        req = self.req
        if req is None:
            return
        buf = self.buf
        buf += data
        if not self.in_body:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end]).decode("latin-1")
            del buf[: end + 4]
            if head.split(" ", 2)[1] != "200" or "chunked" not in head.lower():
                self._fail(f"unexpected response head {head[:80]!r}")
                return
            self.in_body = True
        sse = self.sse
        while True:
            nl = buf.find(b"\r\n")
            if nl < 0:
                return
            size = int(buf[:nl].split(b";", 1)[0], 16)
            if size == 0:
                if len(buf) < nl + 4:
                    return
                del buf[: nl + 4]
                self.req = None
                if not req.first.done():
                    req.first.set_result(True)
                req.done.set_result(True)
                self.pool.append(self)
                return
            if len(buf) < nl + 2 + size + 2:
                return
            sse += buf[nl + 2 : nl + 2 + size]
            del buf[: nl + 2 + size + 2]
            while (end := sse.find(b"\n\n")) >= 0:
                event = bytes(sse[:end])
                del sse[: end + 2]
                if not event.startswith(b"data:"):
                    continue
                payload = event[5:].strip()
                if payload == b"[DONE]":
                    continue
                obj = json.loads(payload)
                usage = obj.get("usage")
                if usage:
                    req.usage = usage.get("completion_tokens")
                for choice in obj.get("choices") or ():
                    if choice.get("token_ids"):
                        req.ids.extend(choice["token_ids"])
                    if choice.get("text"):
                        req.texts.append(choice["text"])
                    if choice.get("finish_reason"):
                        req.finish = choice["finish_reason"]
                if not req.first.done() and (req.ids or req.texts):
                    req.first.set_result(True)


_POOLS: dict[str, list[_Connection]] = {}


async def _connection(ep: Any, loop: asyncio.AbstractEventLoop) -> _Connection:
    pool = _POOLS.setdefault(ep.url, [])
    while pool:
        conn = pool.pop()
        if not conn.closed:
            return conn
    _, conn = await loop.create_connection(lambda: _Connection(pool), ep.host, ep.port)
    return conn


async def _stream(self: Any, ep: Any, request: Any) -> Any:
    path, body = self._body(request)
    payload = json.dumps(body, separators=(",", ":")).encode()
    raw = (
        f"POST {ep.base_path}{path} HTTP/1.1\r\nHost: {ep.host}:{ep.port}\r\nAccept: text/event-stream\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    loop = asyncio.get_running_loop()
    req = _Request(loop)
    conn = await _connection(ep, loop)
    conn.start(req, raw)
    await req.first
    if req.error:
        yield Failed(error=EngineError(kind=ErrorKind.RESET, message=req.error, endpoint=ep.url))
        return
    yield FirstToken(token_ids=tuple(req.ids[:1]))
    await req.done
    if req.error or req.usage is None:
        message = req.error or "no usage"
        yield Failed(error=EngineError(kind=ErrorKind.RESET, message=message, endpoint=ep.url))
        return
    yield Finished(
        token_ids=tuple(req.ids), n_tokens=req.usage, ids_from_engine=bool(req.ids), finish_reason=req.finish
    )


if openai_http is not None:
    openai_http.OpenAIEngine._stream = _stream  # type: ignore[method-assign]
