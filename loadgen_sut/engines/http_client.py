"""The engine's HTTP/1.1 client: one response framer for every request, kept-alive connections per endpoint.

:class:`Connection` is an :class:`asyncio.Protocol` that parses the response of the request it carries as
bytes arrive, inside ``data_received``: the status line and headers, the body (``Transfer-Encoding: chunked``,
``Content-Length`` or read-to-close) and, for a streamed answer, its SSE events (``data:`` lines, a blank
line ends an event). Every request goes through it: the streamed completions of
:mod:`loadgen_sut.engines.sse_protocol` and the small JSON answers of :meth:`HttpClient.get_json`
(``/v1/models``, ``/version``) before a run; ``http`` and ``https``.

Why a protocol and not streams: the SUT runs every sample on one event-loop thread, and LoadGen measures TTFT
on that thread's schedule. Reading an SSE body through ``StreamReader`` and nested async generators costs
~65-110 µs per token event and wakes the sample's task once or twice per event; the loop saturates near
200 req/s with 64-token streams and the queueing lands in TTFT. Here a token event is parsed in the read
callback and handed to the request's :class:`EventSink` there.

The connection, its framer and the bounds on a response are :mod:`loadgen_sut.engines.http_connection`; this
module keeps the connections per endpoint and the small JSON requests.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from loadgen_sut.engines.base import ErrorKind
from loadgen_sut.engines.http_connection import MAX_EVENT_BYTES, MAX_RESPONSE_BYTES, Connection, HttpError

MAX_JSON_BYTES = 1 << 20
"""The most body bytes :meth:`HttpClient.get_json` reads by default."""
_ERROR_START_BYTES = 4096  # of a JSON request's error answer: enough for its message


@dataclass
class Endpoint:
    """One engine replica: base URL (``http://host:port`` or with a path prefix) and its requests in flight."""

    url: str
    host: str = ""
    port: int = 0
    base_path: str = ""
    tls: bool = False
    outstanding: int = 0

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        """Raises ``ValueError`` naming the URL when it is not an ``http(s)://host[:port][/path]``."""
        try:
            parts = urlsplit(url if "://" in url else f"http://{url}")
            port = parts.port  # raises on a port that is not a number in 0-65535
        except ValueError as exc:
            raise ValueError(f"not an http(s) URL: {url!r} ({exc})") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        base = parts.path.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        tls = parts.scheme == "https"
        return cls(
            url=f"{parts.scheme}://{parts.netloc}{base}",
            host=parts.hostname,
            port=port or (443 if tls else 80),
            base_path=base,
            tls=tls,
        )


class HttpClient:
    """Requests to engine endpoints, on kept-alive connections per endpoint (each response read by a
    :class:`Connection`). :meth:`get_json` is for small JSON answers; streamed completions are
    :class:`loadgen_sut.engines.sse_protocol.SSEStreamClient` (a subclass)."""

    def __init__(
        self,
        connect_timeout_s: float = 10.0,
        api_key: str | None = None,
        max_event_bytes: int = MAX_EVENT_BYTES,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.api_key = api_key
        self.max_event_bytes = max_event_bytes
        self.max_response_bytes = max_response_bytes
        self._pools: dict[str, list[Connection]] = {}
        self._ssl: ssl.SSLContext | None = None  # created on the first https connection

    def idle_connections(self, ep: Endpoint) -> int:
        return sum(not c.closed for c in self._pools.get(ep.url, ()))

    def close(self) -> None:
        for pool in self._pools.values():
            for conn in list(pool):
                conn.abort()
            pool.clear()

    def request_bytes(
        self, ep: Endpoint, method: str, path: str, payload: bytes | None, accept: str
    ) -> bytes:
        """One request: ``payload`` is a JSON body (None: no body)."""
        head = f"{method} {ep.base_path}{path} HTTP/1.1\r\nHost: {ep.host}:{ep.port}\r\nAccept: {accept}\r\n"
        if payload is None:
            head += "Content-Length: 0\r\n"
        else:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        if self.api_key:
            head += f"Authorization: Bearer {self.api_key}\r\n"
        return (head + "\r\n").encode("latin-1") + (payload or b"")

    def idle(self, ep: Endpoint) -> Connection | None:
        """A kept-alive connection to ``ep`` no request uses (taken from the pool), if there is one."""
        pool = self._pools.setdefault(ep.url, [])
        while pool:
            conn = pool.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    async def connect(self, ep: Endpoint, loop: asyncio.AbstractEventLoop) -> Connection:
        """A new connection; raises ``ConnectionError`` with a message."""
        pool = self._pools.setdefault(ep.url, [])
        if ep.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(pool, loop.time, self.max_event_bytes, self.max_response_bytes),
                    ep.host,
                    ep.port,
                    ssl=self._ssl if ep.tls else None,
                ),
                self.connect_timeout_s,
            )
        except asyncio.TimeoutError as exc:
            raise ConnectionError(f"{ep.url}: connect timed out after {self.connect_timeout_s:g} s") from exc
        except OSError as exc:
            raise ConnectionError(f"{ep.url}: {exc.strerror or exc}") from exc
        return conn

    async def get_json(
        self, ep: Endpoint, path: str, *, timeout_s: float = 30.0, limit: int = MAX_JSON_BYTES
    ) -> tuple[int, Any]:
        """GET ``path``: (status, the body's JSON), for a 2xx status. Raises :class:`HttpError`:
        ``timeout`` when the whole exchange takes over ``timeout_s``; ``http_status`` for a non-2xx
        status (its message quotes the body's start); ``too_large`` over ``limit`` bytes; ``not_json``
        (an empty body too, and JSON nested too deep to parse); and the connection's kinds."""
        try:
            status, data = await asyncio.wait_for(self._get(ep, path, limit), timeout_s)
        except asyncio.TimeoutError as exc:
            raise HttpError("timeout", f"no complete answer within {timeout_s:g} s") from exc
        if not data.strip():
            raise HttpError("not_json", "the answer is empty, not JSON")
        try:
            return status, json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to parse
            what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:100]
            start = data[:60].decode("utf-8", errors="replace")
            raise HttpError("not_json", f"the answer is not JSON ({what}): {start!r}") from exc

    async def _get(self, ep: Endpoint, path: str, limit: int) -> tuple[int, bytes]:
        """A 2xx answer's status and body; a kept-alive connection the server closed meanwhile is retried
        once on a fresh one (only when no response byte came back)."""
        loop = asyncio.get_running_loop()
        raw = self.request_bytes(ep, "GET", path, None, "application/json")
        for attempt in (0, 1):
            conn = self.idle(ep)
            reused = conn is not None
            if conn is None:
                try:
                    conn = await self.connect(ep, loop)
                except ConnectionError as exc:
                    raise HttpError("connect", str(exc)) from exc
            fetch = _Fetch(loop, limit)
            conn.start(fetch, raw)
            try:
                await fetch.end
            finally:
                if not fetch.end.done():  # cancelled (the deadline): the connection is mid-response
                    fetch.fail(ErrorKind.RESET, "request cancelled")
            if fetch.error is None:
                return fetch.status, fetch.body
            if reused and attempt == 0 and fetch.error.kind == ErrorKind.RESET.value and not fetch.got_bytes:
                continue
            raise fetch.error
        raise AssertionError("unreachable: the second attempt returns or raises")  # pragma: no cover


class _Fetch:
    """A request whose 2xx body is read whole, up to ``limit`` bytes (an :class:`Exchange`)."""

    __slots__ = ("body", "conn", "end", "error", "got_bytes", "got_head", "last_rx", "limit", "status")

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self.end: asyncio.Future[None] = loop.create_future()
        self.limit = limit
        self.conn: Connection | None = None
        self.got_bytes = False
        self.got_head = False
        self.last_rx = loop.time()
        self.status = 0
        self.body = b""
        self.error: HttpError | None = None

    def fail(self, kind: ErrorKind | str, message: str) -> None:
        if self.end.done():
            return
        self.error = HttpError(kind.value if isinstance(kind, ErrorKind) else kind, message)
        self.end.set_result(None)
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.req = None
            conn.abort()

    def on_head(self, status: int, reason: str, content_length: int | None) -> int:
        if not 200 <= status < 300:
            return _ERROR_START_BYTES  # an error answer: its start is enough for the message
        if content_length is not None and content_length > self.limit:
            self.fail("too_large", f"response body of {content_length} bytes (the limit is {self.limit})")
        return self.limit

    def on_whole_body(self, status: int, reason: str, body: bytes, complete: bool) -> None:
        if not 200 <= status < 300:
            text = body[:200].decode("utf-8", errors="replace").strip()
            self.fail("http_status", f"HTTP {status}" + (f": {text}" if text else ""))
        elif not complete and len(body) > self.limit:
            self.fail("too_large", f"response body over {self.limit} bytes")
        elif not complete:
            self.fail(ErrorKind.RESET, "connection closed in the middle of the response body")
        elif not self.end.done():
            self.status = status
            self.body = body
            self.end.set_result(None)
