"""A lean HTTP/1.1 client on asyncio streams, for the engine's small JSON endpoints (``/v1/models``,
``/version``) before a run; completions go through :mod:`loadgen_sut.engines.sse_protocol`.

Supports ``Content-Length``, ``Transfer-Encoding: chunked`` and read-to-close bodies; ``http``
and ``https``. Failures raise :class:`HttpError` with a kind the engine maps to a message.
Whatever the server does, :meth:`HttpClient.get_json` is bounded: in time (``timeout_s`` for the
whole exchange), in memory (the head at most 64 KiB, the body at most ``limit`` bytes) and in nesting
(JSON too deep to parse is "not JSON", not a ``RecursionError``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 1 << 16
MAX_HEADERS = 100
MAX_JSON_BYTES = 1 << 20
_READ = 1 << 16


class HttpError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "connect", "reset", "malformed", "too_large", "not_json", "timeout"


@dataclass
class Endpoint:
    """One engine replica: base URL (``http://host:port`` or with a path prefix), idle connections."""

    url: str
    host: str = ""
    port: int = 0
    base_path: str = ""
    tls: bool = False
    outstanding: int = 0
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(default_factory=list)

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


class Response:
    """A response whose body is read incrementally."""

    def __init__(self, endpoint: Endpoint, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.endpoint = endpoint
        self.reader = reader
        self.writer = writer
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self._reusable = False
        self._done = False

    async def _line(self, where: str) -> bytes:
        try:
            return await self.reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            raise HttpError("reset", f"connection closed {where}") from exc
        except asyncio.LimitOverrunError as exc:  # a line over the reader's limit (MAX_HEAD_BYTES)
            raise HttpError("malformed", f"line too long {where}") from exc

    async def read_head(self) -> None:
        line = await self._line("before the response status line")
        parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise HttpError("malformed", f"not an HTTP/1.x status line: {line[:80]!r}")
        self.status = int(parts[1])
        self.reason = parts[2][:200] if len(parts) > 2 else ""
        size = len(line)
        for _ in range(MAX_HEADERS + 1):
            h = await self._line("inside the response headers")
            if h == b"\r\n":
                break
            size += len(h)
            if size > MAX_HEAD_BYTES:
                raise HttpError("malformed", f"response head over {MAX_HEAD_BYTES} bytes")
            name, sep, value = h.decode("latin-1").partition(":")
            if not sep:
                raise HttpError("malformed", f"bad header line {h[:80]!r}")
            self.headers[name.strip().lower()] = value.strip()
        else:
            raise HttpError("malformed", f"response head with over {MAX_HEADERS} header lines")
        if "content-length" in self.headers and not self._chunked:
            length = self.headers["content-length"]
            if not length.isdigit():
                raise HttpError("malformed", f"bad Content-Length {length[:40]!r}")
        keep = self.headers.get("connection", "").lower() != "close"
        self._reusable = keep and ("content-length" in self.headers or self._chunked)

    @property
    def _chunked(self) -> bool:
        return "chunked" in self.headers.get("transfer-encoding", "").lower()

    @property
    def content_length(self) -> int | None:
        if self._chunked or "content-length" not in self.headers:
            return None
        return int(self.headers["content-length"])  # digits: checked by read_head

    async def _exactly(self, n: int) -> AsyncIterator[bytes]:
        """``n`` body bytes in pieces of at most 64 KiB (never one buffer of a size the server chose)."""
        while n > 0:
            data = await self.reader.read(min(n, _READ))
            if not data:
                raise HttpError("reset", f"connection closed with {n} body bytes missing")
            n -= len(data)
            yield data

    async def iter_body(self) -> AsyncIterator[bytes]:
        r = self.reader
        try:
            if self._chunked:
                while True:
                    size_line = await self._line("inside a chunk size line")
                    try:
                        size = int(size_line.split(b";", 1)[0].strip(), 16)
                    except ValueError:
                        size = -1
                    if size < 0:
                        raise HttpError("malformed", f"bad chunk size line {size_line[:40]!r}")
                    if size == 0:
                        for _ in range(MAX_HEADERS + 1):
                            if (await self._line("inside the chunk trailers")) == b"\r\n":
                                break
                        else:
                            raise HttpError("malformed", f"over {MAX_HEADERS} chunk trailer lines")
                        break
                    async for data in self._exactly(size):
                        yield data
                    if await r.readexactly(2) != b"\r\n":
                        raise HttpError("malformed", "chunk not followed by CRLF")
            elif (length := self.content_length) is not None:
                async for data in self._exactly(length):
                    yield data
            else:
                while True:
                    data = await r.read(_READ)
                    if not data:
                        break
                    yield data
        except asyncio.IncompleteReadError as exc:
            raise HttpError("reset", "connection closed in the middle of the response body") from exc
        except (ConnectionError, OSError) as exc:
            raise HttpError("reset", f"connection error while reading: {exc}") from exc
        self._done = True

    async def read_all(self, limit: int = MAX_JSON_BYTES) -> bytes:
        """The whole body; ``too_large`` as soon as it is known to be over ``limit`` bytes."""
        length = self.content_length
        if length is not None and length > limit:
            raise HttpError("too_large", f"response body of {length} bytes (the limit is {limit})")
        out = bytearray()
        async for chunk in self.iter_body():
            out += chunk
            if len(out) > limit:
                raise HttpError("too_large", f"response body over {limit} bytes")
        return bytes(out)

    def release(self) -> None:
        """Return the connection to the pool when the body was fully read, else close it."""
        if self._done and self._reusable and not self.writer.is_closing():
            self.endpoint.idle.append((self.reader, self.writer))
        else:
            self.abort()

    def abort(self) -> None:
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


class HttpClient:
    def __init__(self, connect_timeout_s: float = 10.0, api_key: str | None = None) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.api_key = api_key
        self._ssl: ssl.SSLContext | None = None  # created on the first https connection

    async def _connection(self, ep: Endpoint) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while ep.idle:
            reader, writer = ep.idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.transport.abort()
        if ep.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(ep.host, ep.port, ssl=self._ssl if ep.tls else None, limit=MAX_HEAD_BYTES),
                self.connect_timeout_s,
            )
        except asyncio.TimeoutError as exc:
            raise HttpError("connect", f"{ep.url}: connect timed out after {self.connect_timeout_s:g} s") from exc
        except OSError as exc:
            raise HttpError("connect", f"{ep.url}: {exc.strerror or exc}") from exc

    async def request(
        self, ep: Endpoint, method: str, path: str, body: dict[str, Any] | None = None, accept: str = "application/json"
    ) -> Response:
        """Send a request and read the status line and headers; the caller reads the body."""
        payload = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
        head = [
            f"{method} {ep.base_path}{path} HTTP/1.1",
            f"Host: {ep.host}:{ep.port}",
            f"Accept: {accept}",
            f"Content-Length: {len(payload)}",
        ]
        if body is not None:
            head.append("Content-Type: application/json")
        if self.api_key:
            head.append(f"Authorization: Bearer {self.api_key}")
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload
        for attempt in (0, 1):
            reused = bool(ep.idle)
            reader, writer = await self._connection(ep)
            resp = Response(ep, reader, writer)
            try:
                writer.write(raw)
                await resp.read_head()
                return resp
            except asyncio.CancelledError:  # a deadline (get_json's): the connection is in an unknown state
                resp.abort()
                raise
            except (HttpError, ConnectionError, OSError) as exc:
                resp.abort()
                # a kept-alive connection the server closed meanwhile: retry once on a fresh one
                if reused and attempt == 0 and not (isinstance(exc, HttpError) and exc.kind == "malformed"):
                    continue
                if isinstance(exc, HttpError):
                    raise
                raise HttpError("reset", f"{ep.url}: {exc}") from exc
        raise HttpError("reset", f"{ep.url}: connection closed")  # pragma: no cover - loop always returns/raises

    async def get_json(
        self, ep: Endpoint, path: str, *, timeout_s: float = 30.0, limit: int = MAX_JSON_BYTES
    ) -> tuple[int, Any]:
        """GET ``path``: (status, the body's JSON), for a 2xx status. Raises :class:`HttpError`:
        ``timeout`` when the whole exchange takes over ``timeout_s``; ``http_status`` for a non-2xx
        status (its message quotes the body's start); ``too_large`` over ``limit`` bytes; ``not_json``
        (an empty body too); and the connection's kinds."""
        try:
            status, data = await asyncio.wait_for(self._get(ep, path, limit), timeout_s)
        except asyncio.TimeoutError as exc:
            raise HttpError("timeout", f"no complete answer within {timeout_s:g} s") from exc
        if not 200 <= status < 300:
            text = data[:200].decode("utf-8", errors="replace").strip()
            raise HttpError("http_status", f"HTTP {status}" + (f": {text}" if text else ""))
        if not data.strip():
            raise HttpError("not_json", "the answer is empty, not JSON")
        try:
            return status, json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to parse
            what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:100]
            start = data[:60].decode("utf-8", errors="replace")
            raise HttpError("not_json", f"the answer is not JSON ({what}): {start!r}") from exc

    async def _get(self, ep: Endpoint, path: str, limit: int) -> tuple[int, bytes]:
        resp = await self.request(ep, "GET", path)
        try:
            if 200 <= resp.status < 300:
                return resp.status, await resp.read_all(limit)
            try:  # an error answer: its start is enough for the message
                return resp.status, await resp.read_all(4096)
            except HttpError:
                return resp.status, b""
        finally:
            resp.release()

