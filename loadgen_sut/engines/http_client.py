"""A lean HTTP/1.1 client on asyncio streams, for streaming (SSE) completions.

Why not aiohttp/httpx: per-query client CPU in the LoadGen process matters (every microsecond
of Python work competes with LoadGen's threads for the GIL); this client does one write per
request, reads with ``readuntil``/``readexactly`` and keeps connections alive per endpoint.

Supports ``Content-Length``, ``Transfer-Encoding: chunked`` and read-to-close bodies; ``http``
and ``https``. Failures raise :class:`HttpError` with a kind the engine maps to an EngineError.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


class HttpError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "connect", "reset", "malformed", "http_status", "timeout"


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
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        base = parts.path.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        tls = parts.scheme == "https"
        return cls(
            url=f"{parts.scheme}://{parts.netloc}{base}",
            host=parts.hostname,
            port=parts.port or (443 if tls else 80),
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

    async def read_head(self) -> None:
        try:
            line = await self.reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            raise HttpError("reset", "connection closed before the response status line") from exc
        except asyncio.LimitOverrunError as exc:
            raise HttpError("malformed", "response status line too long") from exc
        parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError("malformed", f"not an HTTP/1.x status line: {line[:80]!r}")
        self.status = int(parts[1])
        self.reason = parts[2] if len(parts) > 2 else ""
        while True:
            try:
                h = await self.reader.readuntil(b"\r\n")
            except asyncio.IncompleteReadError as exc:
                raise HttpError("reset", "connection closed inside the response headers") from exc
            if h == b"\r\n":
                break
            name, sep, value = h.decode("latin-1").partition(":")
            if not sep:
                raise HttpError("malformed", f"bad header line {h[:80]!r}")
            self.headers[name.strip().lower()] = value.strip()
        keep = self.headers.get("connection", "").lower() != "close"
        self._reusable = keep and ("content-length" in self.headers or self._chunked)

    @property
    def _chunked(self) -> bool:
        return "chunked" in self.headers.get("transfer-encoding", "").lower()

    async def iter_body(self) -> AsyncIterator[bytes]:
        r = self.reader
        try:
            if self._chunked:
                while True:
                    size_line = await r.readuntil(b"\r\n")
                    try:
                        size = int(size_line.split(b";", 1)[0].strip(), 16)
                    except ValueError as exc:
                        raise HttpError("malformed", f"bad chunk size line {size_line[:40]!r}") from exc
                    if size == 0:
                        while (await r.readuntil(b"\r\n")) != b"\r\n":
                            pass
                        break
                    data = await r.readexactly(size + 2)
                    yield data[:-2]
            elif "content-length" in self.headers:
                left = int(self.headers["content-length"])
                while left > 0:
                    data = await r.read(min(left, 65536))
                    if not data:
                        raise HttpError("reset", f"connection closed with {left} body bytes missing")
                    left -= len(data)
                    yield data
            else:
                while True:
                    data = await r.read(65536)
                    if not data:
                        break
                    yield data
        except asyncio.IncompleteReadError as exc:
            raise HttpError("reset", "connection closed in the middle of the response body") from exc
        except (ConnectionError, OSError) as exc:
            raise HttpError("reset", f"connection error while reading: {exc}") from exc
        self._done = True

    async def read_all(self, limit: int = 1 << 20) -> bytes:
        out = bytearray()
        async for chunk in self.iter_body():
            out += chunk
            if len(out) > limit:
                raise HttpError("malformed", "response body too large")
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
                asyncio.open_connection(ep.host, ep.port, ssl=self._ssl if ep.tls else None, limit=1 << 20),
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
            except (HttpError, ConnectionError, OSError) as exc:
                resp.abort()
                # a kept-alive connection the server closed meanwhile: retry once on a fresh one
                if reused and attempt == 0 and not (isinstance(exc, HttpError) and exc.kind == "malformed"):
                    continue
                if isinstance(exc, HttpError):
                    raise
                raise HttpError("reset", f"{ep.url}: {exc}") from exc
        raise HttpError("reset", f"{ep.url}: connection closed")  # pragma: no cover - loop always returns/raises

    async def get_json(self, ep: Endpoint, path: str) -> tuple[int, Any]:
        resp = await self.request(ep, "GET", path)
        try:
            data = await resp.read_all()
        finally:
            resp.release()
        try:
            return resp.status, json.loads(data) if data else None
        except ValueError:
            return resp.status, None


async def iter_sse_data(resp: Response) -> AsyncIterator[str]:
    """The ``data:`` payloads of a server-sent-events body, one per event (multi-line joined)."""
    buf = b""
    data_lines: list[str] = []
    async for chunk in resp.iter_body():
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1 :]
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data_lines:
                    yield "\n".join(data_lines)
                    data_lines = []
                continue
            if line.startswith(b"data:"):
                v = line[5:]
                data_lines.append((v[1:] if v.startswith(b" ") else v).decode("utf-8", errors="replace"))
            # other fields (event:, id:, retry:, comments) carry nothing for completions
    if buf.strip():
        line = buf.rstrip(b"\r")
        if line.startswith(b"data:"):
            v = line[5:]
            data_lines.append((v[1:] if v.startswith(b" ") else v).decode("utf-8", errors="replace"))
    if data_lines:
        yield "\n".join(data_lines)
