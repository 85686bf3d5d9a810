"""One HTTP/1.1 connection of the engine's client, and the response framer every request goes through.

:class:`Connection` is an :class:`asyncio.Protocol` that parses the response of the request it carries as
bytes arrive, inside ``data_received``: the status line and headers, the body (``Transfer-Encoding: chunked``,
``Content-Length`` or read-to-close) and, for a streamed answer, its SSE events (``data:`` lines, a blank
line ends an event), each handed to the request's :class:`EventSink` there (why a protocol and not streams:
:mod:`loadgen_sut.engines.http_client`).

Whatever the server sends, one response is bounded: the head at most :data:`MAX_HEAD_BYTES` and
:data:`MAX_HEADERS` header lines, a chunk size line at most 1 KiB, chunk trailers at most
:data:`MAX_HEAD_BYTES`; a streamed body at most :data:`MAX_RESPONSE_BYTES`, one SSE event at most
:data:`MAX_EVENT_BYTES`; a body read whole (a JSON answer, an error answer) at most the limit its request
set. Parsing is linear in the response size: a long line is scanned once (only its new bytes), a long HTTP
chunk is passed on as it arrives. Each failure reaches the request as one ``fail(kind, message)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from loadgen_sut.engines.base import ErrorKind

MAX_HEAD_BYTES = 1 << 16
"""The most bytes a response head (status line and headers) may have; chunk trailers too."""
MAX_HEADERS = 100
MAX_EVENT_BYTES = 16 << 20
"""The most bytes one SSE event (its lines together) may hold: far above any token event (well under
1 KiB), low enough that a broken server cannot make the client hold gigabytes for one line."""
MAX_RESPONSE_BYTES = 256 << 20
"""The most body bytes one streamed response may have (a 128k-token answer with token ids is ~40 MB)."""

# asyncio's selector transport allocates ``max_size`` (256 KiB) for every recv: above glibc's mmap threshold,
# so each read maps and unmaps pages. SSE events are well under 1 KiB; 16 KiB reads cut the client's CPU by
# about a third at 50 req/s (uvloop, the default loop when installed, reads into its own buffer).
_READ_SIZE = 1 << 14
_MAX_CHUNK_LINE = 1024  # a chunk size line (hex size and extensions)
_MAX_REASON_CHARS = 200

# body framing
_CHUNKED = 0
_LENGTH = 1
_TO_CLOSE = 2


class HttpError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "connect", "reset", "malformed", "http_status", "too_large", "not_json", "timeout"


class EventSink(Protocol):
    """Where a streamed (SSE) body goes, as its events are framed."""

    def on_event(self, data: bytes) -> bool:
        """One event's ``data`` (its lines joined by ``\\n``); False when it ended the request."""
        ...

    def body_complete(self) -> None:
        """The body ended after its last event."""
        ...


class Exchange(Protocol):
    """One request on a :class:`Connection`: what the framer reports to."""

    conn: Connection | None  # set while the connection carries it
    got_bytes: bool  # a response byte arrived
    got_head: bool  # the response head was parsed
    last_rx: float  # when bytes last arrived (the connection's clock)

    def fail(self, kind: ErrorKind, message: str) -> None:
        """The request failed; drops the connection (``conn``) when it still carries it."""
        ...

    def on_head(self, status: int, reason: str, content_length: int | None) -> EventSink | int:
        """The head was parsed: where its body goes (SSE events), or how many bytes of it to read whole."""
        ...

    def on_whole_body(self, status: int, reason: str, body: bytes, complete: bool) -> None:
        """A body read whole; ``complete`` False: what came of it, over the limit or cut by the connection's end."""
        ...


class Connection(asyncio.Protocol):
    """One keep-alive connection; parses the response of the request it carries as bytes arrive."""

    def __init__(
        self,
        pool: list[Connection],
        now: Callable[[], float],
        max_event_bytes: int = MAX_EVENT_BYTES,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.pool = pool
        self.now = now
        self.max_event = max_event_bytes
        self.max_response = max_response_bytes
        self.transport: Any = None  # an asyncio.Transport, or uvloop's (not a subclass of it)
        self.req: Exchange | None = None
        self.events: EventSink | None = None  # a streamed body's sink; None: the body is read whole
        self.collect: bytearray | None = None  # a body read whole, so far
        self.collect_limit = 0
        self.closed = False
        self.buf = bytearray()  # unparsed HTTP bytes: the head, a chunk size line, trailers (all bounded)
        self.head_pos = 0  # where the head's first unparsed line starts in buf
        self.head_lines = 0  # of the head parsed so far (the status line and headers)
        self.headers: dict[str, str] = {}
        self.sse = bytearray()  # an SSE line not yet ended by a newline (holds no newline)
        self.data_lines: list[bytes] = []
        self.event_bytes = 0  # in data_lines
        self.body_bytes = 0  # of this response so far
        self.in_body = False
        self.framing = _CHUNKED
        self.left = 0  # Content-Length bytes still to come
        self.chunk_left = 0  # bytes of the current chunk's data still to come
        self.chunk_crlf = False  # the CRLF after a chunk's data is due
        self.reusable = False
        self.status = 0
        self.reason = ""

    # ------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if hasattr(transport, "max_size"):  # asyncio's selector transport (see _READ_SIZE)
            transport.max_size = _READ_SIZE

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self in self.pool:
            self.pool.remove(self)
        req = self.req
        if req is None:
            return
        if self.in_body and self.framing == _TO_CLOSE:
            self._end_of_body(req)
            return
        if self.in_body and self.collect is not None:
            self._whole(req, complete=False)
            return
        why = f" ({exc})" if exc else ""
        if not req.got_bytes:
            req.fail(ErrorKind.RESET, f"connection closed before the response status line{why}")
        elif not self.in_body:
            req.fail(ErrorKind.RESET, f"connection closed inside the response headers{why}")
        else:
            req.fail(ErrorKind.RESET, f"connection closed in the middle of the response body{why}")

    def data_received(self, data: bytes) -> None:
        req = self.req
        if req is None:  # bytes on an idle connection: its state is unknown
            self.abort()
            return
        req.last_rx = self.now()
        req.got_bytes = True
        if self.in_body and self.framing == _CHUNKED:  # the hot path: SSE events in chunks
            self._chunks(req, data)
            return
        buf = self.buf
        buf += data
        if not self.in_body and not self._head(req):
            return
        if self.framing == _CHUNKED:
            self._chunks(req, b"")
        elif self.framing == _LENGTH:
            n = min(self.left, len(buf))
            self.left -= n
            part = bytes(buf[:n])
            del buf[:n]
            if self._body_bytes(req, part) and self.left == 0:
                self._end_of_body(req)
        else:
            part = bytes(buf)
            buf.clear()
            self._body_bytes(req, part)

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost judges what came

    # ------------------------------------------------------------ requests

    def start(self, req: Exchange, raw: bytes) -> None:
        """Write request ``raw`` now; its response goes to ``req``."""
        assert self.transport is not None
        self.req = req
        req.conn = self
        self.buf.clear()
        self.sse.clear()
        self.data_lines.clear()
        self.event_bytes = 0
        self.body_bytes = 0
        self.chunk_left = 0
        self.chunk_crlf = False
        self.in_body = False
        self.head_pos = 0
        self.head_lines = 0
        self.headers = {}
        self.events = None
        self.collect = None
        self.transport.write(raw)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    # ------------------------------------------------------------ parsing

    def _head(self, req: Exchange) -> bool:
        """Parse the status line and headers, each line as it completes (a bad one fails at once); True when
        the head is complete and the body starts."""
        buf = self.buf
        pos = self.head_pos
        while (nl := buf.find(b"\r\n", pos)) >= 0:
            if nl + 2 > MAX_HEAD_BYTES:
                return self._head_too_long(req, nl - pos)
            line = bytes(buf[pos:nl]).decode("latin-1")
            pos = nl + 2
            if self.head_lines == 0:
                parts = line.split(" ", 2)
                if (
                    len(parts) < 2
                    or not parts[0].startswith("HTTP/1.")
                    or not _is_digits(parts[1])
                    or len(parts[1]) != 3
                ):
                    req.fail(ErrorKind.MALFORMED, f"not an HTTP/1.x status line: {line[:80]!r}")
                    return False
                self.status = int(parts[1])
                self.reason = parts[2][:_MAX_REASON_CHARS] if len(parts) > 2 else ""
            elif not line:  # the blank line that ends the head
                del buf[:pos]
                self.head_pos = 0
                return self._head_done(req)
            else:
                name, sep, value = line.partition(":")
                if not sep:
                    req.fail(ErrorKind.MALFORMED, f"bad header line {line[:80]!r}")
                    return False
                if self.head_lines > MAX_HEADERS:
                    req.fail(ErrorKind.MALFORMED, f"response head with over {MAX_HEADERS} header lines")
                    return False
                self.headers[name.strip().lower()] = value.strip()
            self.head_lines += 1
        self.head_pos = pos
        if len(buf) > MAX_HEAD_BYTES:
            return self._head_too_long(req, len(buf) - pos)
        return False

    def _head_too_long(self, req: Exchange, line: int) -> bool:
        if line > MAX_HEAD_BYTES // 2:
            req.fail(ErrorKind.MALFORMED, f"line too long in the response head (over {line} bytes)")
        else:
            req.fail(ErrorKind.MALFORMED, f"response head over {MAX_HEAD_BYTES} bytes")
        return False

    def _head_done(self, req: Exchange) -> bool:
        """The head is complete: the body's framing and sink; True when body bytes may follow."""
        headers = self.headers
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.framing = _CHUNKED
            self.left = 0
        elif "content-length" in headers:
            length = headers["content-length"]
            if not _is_digits(length):
                req.fail(ErrorKind.MALFORMED, f"bad Content-Length {length[:40]!r}")
                return False
            self.left = int(length)
            self.framing = _LENGTH
        else:
            self.framing = _TO_CLOSE
        self.chunk_left = 0
        self.chunk_crlf = False
        keep = headers.get("connection", "").lower() != "close"
        self.reusable = keep and self.framing != _TO_CLOSE
        self.in_body = True
        req.got_head = True
        sink = req.on_head(self.status, self.reason, self.left if self.framing == _LENGTH else None)
        if self.req is not req:  # on_head failed the request
            return False
        if isinstance(sink, int):
            self.collect = bytearray()
            self.collect_limit = sink
        else:
            self.events = sink
        if self.framing == _LENGTH and self.left == 0:
            self._end_of_body(req)
            return False
        return True

    def _chunks(self, req: Exchange, data: bytes) -> None:
        """Chunked body bytes: chunk data goes on as it arrives (a long chunk is not collected first); only
        a partial size line, CRLF or trailers wait in ``buf`` (all bounded)."""
        buf = self.buf
        if buf:
            buf += data
            data = bytes(buf)
            buf.clear()
        pos = 0
        n = len(data)
        while pos < n:
            left = self.chunk_left
            if left:  # inside a chunk that did not come whole
                take = min(left, n - pos)
                self.chunk_left = left - take
                if not self._body_bytes(req, data[pos : pos + take]):
                    return
                pos += take
                if self.chunk_left:
                    return
                self.chunk_crlf = True
                continue
            if self.chunk_crlf:
                if n - pos < 2:
                    buf += data[pos:]
                    return
                if data[pos : pos + 2] != b"\r\n":
                    req.fail(ErrorKind.MALFORMED, "chunk not followed by CRLF")
                    return
                pos += 2
                self.chunk_crlf = False
                continue
            nl = data.find(b"\r\n", pos)
            if nl < 0:
                if n - pos > _MAX_CHUNK_LINE:
                    req.fail(ErrorKind.MALFORMED, "chunk size line too long")
                    return
                buf += data[pos:]
                return
            if nl - pos > _MAX_CHUNK_LINE:
                req.fail(ErrorKind.MALFORMED, "chunk size line too long")
                return
            try:
                size = int(data[pos:nl].split(b";", 1)[0], 16)
            except ValueError:
                size = -1
            if size < 0:
                req.fail(ErrorKind.MALFORMED, f"bad chunk size line {data[pos:nl][:40]!r}")
                return
            if size == 0:  # last chunk, optional trailers, blank line
                if data.startswith(b"\r\n", nl + 2):
                    end = nl + 4
                else:
                    end = data.find(b"\r\n\r\n", nl + 2)
                    if end < 0:
                        if n - pos > MAX_HEAD_BYTES:
                            req.fail(ErrorKind.MALFORMED, "chunk trailers too long")
                            return
                        buf += data[pos:]
                        return
                    end += 4
                buf += data[end:]  # anything after the body: the connection is not reused
                self._end_of_body(req)
                return
            start = nl + 2
            stop = start + size
            if stop + 2 <= n:  # the common case: the whole chunk is here
                if data[stop : stop + 2] != b"\r\n":
                    req.fail(ErrorKind.MALFORMED, "chunk not followed by CRLF")
                    return
                pos = stop + 2
                if not self._body_bytes(req, data[start:stop]):
                    return
                continue
            pos = start
            self.chunk_left = size

    def _body_bytes(self, req: Exchange, part: bytes) -> bool:
        """Body bytes, in order; False when the request ended (failure recorded)."""
        events = self.events
        if events is None:  # read whole
            collect = self.collect
            assert collect is not None
            collect += part
            if len(collect) > self.collect_limit:  # report it without reading the rest
                self._whole(req, complete=False)
                return False
            return True
        self.body_bytes += len(part)
        if self.body_bytes > self.max_response:
            req.fail(
                ErrorKind.TOO_LARGE, f"stream too large: the response is over {_size(self.max_response)}"
            )
            return False
        sse = self.sse
        if (
            not sse
            and not self.data_lines
            and part.startswith(b"data:")
            and part.find(b"\n") == len(part) - 2
            and part.endswith(b"\n\n")
        ):  # the common case: one whole event "data: {...}\n\n" per chunk
            v = part[6:-2] if part.startswith(b"data: ") else part[5:-2]
            return events.on_event(v[:-1] if v.endswith(b"\r") else v)
        scanned = len(sse)  # what sse holds has no newline: scan only the new bytes
        sse += part
        nl = sse.find(b"\n", scanned)
        if nl < 0:
            if self.event_bytes + len(sse) > self.max_event:
                return self._too_large(req)
            return True
        pos = 0
        try:
            while nl >= 0:
                stop = nl - 1 if nl > pos and sse[nl - 1] == 13 else nl  # without the CR of a CRLF
                if stop == pos:  # a blank line ends the event
                    if self.data_lines:
                        lines = self.data_lines
                        data = lines[0] if len(lines) == 1 else b"\n".join(lines)
                        lines.clear()
                        self.event_bytes = 0
                        if not events.on_event(data):
                            return False
                elif sse.startswith(b"data:", pos):
                    v0 = pos + 6 if sse.startswith(b" ", pos + 5) and stop > pos + 5 else pos + 5
                    v = bytes(sse[v0:stop])
                    self.event_bytes += len(v) + 1
                    if self.event_bytes > self.max_event:
                        return self._too_large(req)
                    self.data_lines.append(v)
                # other fields (event:, id:, retry:, comments) carry nothing for completions
                pos = nl + 1
                nl = sse.find(b"\n", pos)
            if self.event_bytes + len(sse) - pos > self.max_event:
                return self._too_large(req)
            return True
        finally:
            if pos:
                del sse[:pos]

    def _too_large(self, req: Exchange) -> bool:
        req.fail(ErrorKind.TOO_LARGE, f"stream too large: one SSE event is over {_size(self.max_event)}")
        return False

    def _end_of_body(self, req: Exchange) -> None:
        events = self.events
        if events is None:
            self._whole(req, complete=True)
            return
        # an event not followed by a blank line still counts
        line = bytes(self.sse).rstrip(b"\r")
        self.sse.clear()
        if line.startswith(b"data:"):
            v = line[5:]
            self.data_lines.append(v[1:] if v.startswith(b" ") else v)
        if self.data_lines:
            data = b"\n".join(self.data_lines)
            self.data_lines.clear()
            if not events.on_event(data):
                return
        self._release(req)
        events.body_complete()

    def _whole(self, req: Exchange, complete: bool) -> None:
        """Hand over a body read whole (or its start, over the limit: the connection is then dropped)."""
        body = bytes(self.collect or b"")
        self.collect = None
        if complete:
            self._release(req)
        req.on_whole_body(self.status, self.reason, body, complete)
        if not complete and self.req is req:  # the request did not fail: still drop the connection
            self.req = None
            req.conn = None
            self.abort()

    def _release(self, req: Exchange) -> None:
        """The response was read to its end: back to the pool when kept alive, else closed."""
        self.req = None
        req.conn = None
        self.in_body = False
        if self.reusable and not self.closed and not self.buf:
            self.pool.append(self)
        else:
            self.abort()


def _is_digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n} bytes"
