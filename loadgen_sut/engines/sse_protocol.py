"""Streaming completions over HTTP/1.1 with an :class:`asyncio.Protocol`: low overhead per token event.

Why a protocol and not streams: the SUT runs every sample on one event-loop thread, and LoadGen
measures TTFT on that thread's schedule. Reading an SSE body through ``StreamReader`` and nested
async generators costs ~65-110 µs per token event and wakes the sample's task once or twice per
event; the loop saturates near 200 req/s with 64-token streams and the queueing lands in TTFT.
Here HTTP framing (chunked, ``Content-Length`` or read-to-close), SSE framing and each event's JSON
are handled inside ``data_received``; the sample's task wakes twice: at the first token and at the end.

The measured path is kept free of loop hops: :meth:`SSEStreamClient.begin` writes the request at once
on an idle kept-alive connection (the caller runs it inside the loop callback that LoadGen's issue
handed over), and the first token is passed to ``on_first`` from inside ``data_received``, before the
sample's task is even woken (``bench/sut_hops.py`` measures what each hop costs).

Behaviour (the same as the stream client it replaces):

- keep-alive connections per endpoint; a kept-alive connection the server closed meanwhile is
  retried once on a fresh one (only when no response byte came back);
- one watchdog timer per request: the total deadline and the idle gap between received bytes;
- every failure is a :class:`Failed` with an :class:`ErrorKind`: refused connection, reset
  mid-stream, HTTP status (with the body's error message), malformed HTTP/SSE/JSON, truncated
  stream (no ``[DONE]`` or no ``finish_reason``), in-band error event, missing ``usage``, engine
  token ids that disagree with ``usage``, timeout;
- token ids from the engine (vLLM ``return_token_ids``) or, for text-only servers, from the
  served model's tokenizer (``ids_from_engine=False``); the count is ``usage.completion_tokens``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

from loadgen_sut.engines.base import (
    EngineError,
    ErrorKind,
    Failed,
    Finished,
    FirstToken,
    FirstTokenCallback,
    GenerationEvent,
)
from loadgen_sut.engines.http_client import Endpoint
from loadgen_sut.engines.tokenizers import Tokenizer

_MAX_HEAD_BYTES = 1 << 16
# asyncio's selector transport allocates ``max_size`` (256 KiB) for every recv: above glibc's mmap threshold,
# so each read maps and unmaps pages. SSE events are well under 1 KiB; 16 KiB reads cut the client's CPU by
# about a third at 50 req/s (uvloop, the default loop when installed, reads into its own buffer).
_READ_SIZE = 1 << 14
_MAX_ERROR_BODY_BYTES = 1 << 16
_DETAIL_CHARS = 300

_decode = json.JSONDecoder().decode  # on str: skips json.loads' encoding sniffing of bytes

# body framing
_CHUNKED = 0
_LENGTH = 1
_TO_CLOSE = 2


class _Stream:
    """What one request has received so far, and the two futures its task waits on."""

    __slots__ = (
        "chat",
        "conn",
        "done",
        "end",
        "engine_ids",
        "error",
        "finish_reason",
        "first",
        "first_ids",
        "first_text",
        "got_bytes",
        "got_head",
        "ids",
        "last_rx",
        "on_first",
        "texts",
        "tokenizer",
        "usage_tokens",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        chat: bool,
        engine_ids: bool,
        on_first: FirstTokenCallback | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.first: asyncio.Future[None] = loop.create_future()
        self.on_first = on_first
        self.tokenizer = tokenizer
        self.end: asyncio.Future[None] = loop.create_future()
        self.chat = chat
        self.engine_ids = engine_ids
        self.conn: _Connection | None = None
        self.ids: list[int] = []
        self.texts: list[str] = []
        self.first_ids: tuple[int, ...] | None = None
        self.first_text: str | None = None
        self.usage_tokens: int | None = None
        self.finish_reason: str | None = None
        self.done = False  # saw [DONE]
        self.error: tuple[ErrorKind, str] | None = None
        self.got_bytes = False
        self.got_head = False
        self.last_rx = loop.time()

    @property
    def over(self) -> bool:
        return self.end.done()

    def fail(self, kind: ErrorKind, message: str) -> None:
        """Record the first failure, wake the task, and drop the connection (its state is unknown)."""
        if self.end.done():
            return
        self.error = (kind, message)
        self._wake()
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.req = None
            conn.abort()

    def body_complete(self) -> None:
        if not self.end.done():
            self._wake()

    def _wake(self) -> None:
        if not self.first.done():
            self.first.set_result(None)
        self.end.set_result(None)

    def first_token_ids(self) -> tuple[int, ...]:
        """The first token's ids: the engine's, or the served tokenizer's first id of the first text."""
        if self.first_ids is not None:
            return self.first_ids
        if self.first_text is not None and self.tokenizer is not None:
            return tuple(self.tokenizer.encode(self.first_text)[:1])
        return ()

    def _got_first(self) -> None:
        self.first.set_result(None)
        cb, self.on_first = self.on_first, None
        if cb is not None:
            # a failing callback must not kill the stream: the FirstToken event still follows
            with contextlib.suppress(Exception):
                cb(self.first_token_ids())

    def on_event(self, data: bytes) -> bool:
        """One SSE ``data`` payload; False when it ended the request (failure recorded)."""
        if data == b"[DONE]":
            self.done = True
            return True
        if self.done:
            self.fail(ErrorKind.MALFORMED, "data after [DONE]")
            return False
        try:
            event = _decode(data.decode())
        except ValueError:
            self.fail(ErrorKind.MALFORMED, f"not JSON in SSE data: {_text(data)[:80]!r}")
            return False
        if not isinstance(event, dict):
            self.fail(ErrorKind.MALFORMED, f"SSE data is not a JSON object: {_text(data)[:80]!r}")
            return False
        if "error" in event:
            err = event["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            self.fail(ErrorKind.ENGINE, f"engine error in stream: {msg}")
            return False
        usage = event.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.usage_tokens = usage["completion_tokens"]
        choices = event.get("choices")
        if not isinstance(choices, list):
            self.fail(ErrorKind.MALFORMED, f"event without a choices list: {_text(data)[:80]!r}")
            return False
        for ch in choices:
            if not isinstance(ch, dict):
                self.fail(ErrorKind.MALFORMED, "choice is not an object")
                return False
            if self.chat:
                delta = ch.get("delta") or {}
                text = delta.get("content") if isinstance(delta, dict) else None
            else:
                text = ch.get("text")
            new_ids = ch.get("token_ids") if self.engine_ids else None
            if self.engine_ids and text and not new_ids:
                self.engine_ids = False  # this server does not return ids after all
            if isinstance(new_ids, list) and new_ids:
                try:
                    self.ids.extend(int(t) for t in new_ids)
                except (TypeError, ValueError):
                    self.fail(ErrorKind.MALFORMED, f"token_ids are not integers: {_text(data)[:80]!r}")
                    return False
            if isinstance(text, str) and text:
                self.texts.append(text)
            if ch.get("finish_reason"):
                self.finish_reason = str(ch["finish_reason"])
            if not self.first.done():
                if self.engine_ids and self.ids:
                    self.first_ids = tuple(self.ids)
                    self._got_first()
                elif not self.engine_ids and self.texts:
                    self.first_text = self.texts[0]
                    self._got_first()
        return True


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _error_detail(body: bytes) -> str:
    """The error message of an HTTP error body (OpenAI ``{"error": {"message"}}``, FastAPI ``detail``), else its text."""
    text = _text(body).strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:_DETAIL_CHARS]
    if isinstance(obj, dict):
        err = obj.get("error")
        for cand in (err.get("message") if isinstance(err, dict) else err, obj.get("message"), obj.get("detail")):
            if isinstance(cand, str) and cand:
                return cand[:_DETAIL_CHARS]
    return text[:_DETAIL_CHARS]


class _Connection(asyncio.Protocol):
    """One keep-alive connection; parses the response of the request it carries as bytes arrive."""

    def __init__(self, pool: list[_Connection], now: Callable[[], float]) -> None:
        self.pool = pool
        self.now = now
        self.transport: Any = None  # an asyncio.Transport, or uvloop's (not a subclass of it)
        self.req: _Stream | None = None
        self.closed = False
        self.buf = bytearray()
        self.sse = bytearray()
        self.data_lines: list[bytes] = []
        self.in_body = False
        self.framing = _CHUNKED
        self.left = 0  # Content-Length bytes still to come
        self.reusable = False
        self.status = 0
        self.reason = ""
        self.error_body: bytearray | None = None  # collected for a non-200 status

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
        if self.in_body and self.error_body is not None:
            self._http_status_failure(req, complete=self.framing == _TO_CLOSE)
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

    def start(self, req: _Stream, raw: bytes) -> None:
        assert self.transport is not None
        self.req = req
        req.conn = self
        self.buf.clear()
        self.sse.clear()
        self.data_lines.clear()
        self.in_body = False
        self.error_body = None
        self.transport.write(raw)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    # ------------------------------------------------------------ parsing

    def _head(self, req: _Stream) -> bool:
        """Parse status line and headers once they are complete; True when the body starts."""
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > _MAX_HEAD_BYTES:
                req.fail(ErrorKind.MALFORMED, "response head too long")
            return False
        lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
        del buf[: end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            req.fail(ErrorKind.MALFORMED, f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            return False
        self.status = int(parts[1])
        self.reason = parts[2] if len(parts) > 2 else ""
        headers: dict[str, str] = {}
        for h in lines[1:]:
            name, sep, value = h.partition(":")
            if not sep:
                req.fail(ErrorKind.MALFORMED, f"bad header line {h[:80]!r}")
                return False
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.framing = _CHUNKED
            self.left = 0
        elif "content-length" in headers:
            try:
                self.left = int(headers["content-length"])
            except ValueError:
                req.fail(ErrorKind.MALFORMED, f"bad Content-Length {headers['content-length'][:40]!r}")
                return False
            self.framing = _LENGTH
        else:
            self.framing = _TO_CLOSE
        keep = headers.get("connection", "").lower() != "close"
        self.reusable = keep and self.framing != _TO_CLOSE
        self.in_body = True
        req.got_head = True
        if self.status != 200:
            self.error_body = bytearray()
        if self.framing == _LENGTH and self.left == 0:
            self._end_of_body(req)
            return False
        return True

    def _chunks(self, req: _Stream, data: bytes) -> None:
        """Chunked body bytes: whole chunks go to the SSE parser, a partial one waits in ``buf``."""
        if self.buf:
            self.buf += data
            data = bytes(self.buf)
            self.buf.clear()
        pos = 0
        n = len(data)
        while True:
            nl = data.find(b"\r\n", pos)
            if nl < 0:
                if n - pos > 1024:
                    req.fail(ErrorKind.MALFORMED, "chunk size line too long")
                    return
                break
            try:
                size = int(data[pos:nl].split(b";", 1)[0], 16)
            except ValueError:
                req.fail(ErrorKind.MALFORMED, f"bad chunk size line {data[pos:nl][:40]!r}")
                return
            if size == 0:  # last chunk, optional trailers, blank line
                if data.startswith(b"\r\n", nl + 2):
                    end = nl + 4
                else:
                    end = data.find(b"\r\n\r\n", nl + 2)
                    if end < 0:
                        break
                    end += 4
                self.buf += data[end:]  # anything after the body: the connection is not reused
                self._end_of_body(req)
                return
            start = nl + 2
            stop = start + size
            if n < stop + 2:
                break
            if data[stop : stop + 2] != b"\r\n":
                req.fail(ErrorKind.MALFORMED, "chunk not followed by CRLF")
                return
            pos = stop + 2
            if not self._body_bytes(req, data[start:stop]):
                return
        if pos < n:
            self.buf += data[pos:]

    def _body_bytes(self, req: _Stream, part: bytes) -> bool:
        """Body bytes, in order; False when the request ended (failure recorded)."""
        if self.error_body is not None:
            self.error_body += part
            if len(self.error_body) > _MAX_ERROR_BODY_BYTES:  # report it without reading the rest
                self._http_status_failure(req, complete=False)
                return False
            return True
        if (
            not self.sse
            and not self.data_lines
            and part.startswith(b"data:")
            and part.find(b"\n") == len(part) - 2
            and part.endswith(b"\n\n")
        ):  # the common case: one whole event "data: {...}\n\n" per chunk
            v = part[6:-2] if part.startswith(b"data: ") else part[5:-2]
            return req.on_event(v[:-1] if v.endswith(b"\r") else v)
        sse = self.sse
        sse += part
        pos = 0
        try:
            while True:
                nl = sse.find(b"\n", pos)
                if nl < 0:
                    return True
                line = sse[pos:nl]
                pos = nl + 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if not line:
                    if self.data_lines:
                        data = self.data_lines[0] if len(self.data_lines) == 1 else b"\n".join(self.data_lines)
                        self.data_lines.clear()
                        if not req.on_event(data):
                            return False
                elif line.startswith(b"data:"):
                    v = bytes(line[5:])
                    self.data_lines.append(v[1:] if v.startswith(b" ") else v)
                # other fields (event:, id:, retry:, comments) carry nothing for completions
        finally:
            if pos:
                del sse[:pos]

    def _end_of_body(self, req: _Stream) -> None:
        if self.error_body is not None:
            self._http_status_failure(req)
            return
        # an event not followed by a blank line still counts, as in the stream client
        line = bytes(self.sse).rstrip(b"\r")
        self.sse.clear()
        if line.startswith(b"data:"):
            v = line[5:]
            self.data_lines.append(v[1:] if v.startswith(b" ") else v)
        if self.data_lines:
            data = b"\n".join(self.data_lines)
            self.data_lines.clear()
            if not req.on_event(data):
                return
        self._release(req)
        req.body_complete()

    def _http_status_failure(self, req: _Stream, complete: bool = True) -> None:
        detail = _error_detail(bytes(self.error_body or b""))
        self.error_body = None
        if complete:
            self._release(req)
        req.fail(ErrorKind.HTTP_STATUS, f"HTTP {self.status} {self.reason}: {detail}".strip())

    def _release(self, req: _Stream) -> None:
        """The response was read to its end: back to the pool when kept alive, else closed."""
        self.req = None
        req.conn = None
        self.in_body = False
        if self.reusable and not self.closed and not self.buf:
            self.pool.append(self)
        else:
            self.abort()


class _Watchdog:
    """One timer per request: ends it on an idle gap (no bytes received) or at the total deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stream: _Stream, total_s: float, idle_s: float) -> None:
        self._loop = loop
        self.stream = stream
        self._deadline = loop.time() + total_s
        self._idle_s = idle_s
        self._handle = loop.call_at(min(self._deadline, stream.last_rx + idle_s), self._check)

    def _check(self) -> None:
        st = self.stream
        now = self._loop.time()
        if now >= self._deadline:
            what = "request timeout"
        elif now - st.last_rx >= self._idle_s:
            what = f"no data for {self._idle_s:g} s"
        else:
            self._handle = self._loop.call_at(min(self._deadline, st.last_rx + self._idle_s), self._check)
            return
        where = "stream aborted" if st.got_head else "before the response started"
        st.fail(ErrorKind.TIMEOUT, f"{what} ({where})")

    def cancel(self) -> None:
        self._handle.cancel()


class SSEStreamClient:
    """Streaming POSTs to OpenAI-compatible endpoints, with keep-alive pools per endpoint."""

    def __init__(
        self,
        connect_timeout_s: float = 10.0,
        api_key: str | None = None,
        request_timeout_s: float = 600.0,
        idle_timeout_s: float = 60.0,
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.api_key = api_key
        self.request_timeout_s = request_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self._pools: dict[str, list[_Connection]] = {}
        self._ssl: ssl.SSLContext | None = None

    def idle_connections(self, ep: Endpoint) -> int:
        return sum(not c.closed for c in self._pools.get(ep.url, ()))

    def close(self) -> None:
        for pool in self._pools.values():
            for conn in list(pool):
                conn.abort()
            pool.clear()

    @staticmethod
    def encode_body(body: dict[str, Any]) -> bytes:
        """The JSON payload of a request (callers may encode every request before the run starts)."""
        return json.dumps(body, separators=(",", ":")).encode()

    def _request_bytes(self, ep: Endpoint, path: str, payload: bytes) -> bytes:
        head = (
            f"POST {ep.base_path}{path} HTTP/1.1\r\nHost: {ep.host}:{ep.port}\r\nAccept: text/event-stream\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        )
        if self.api_key:
            head += f"Authorization: Bearer {self.api_key}\r\n"
        return (head + "\r\n").encode("latin-1") + payload

    def _idle(self, ep: Endpoint) -> _Connection | None:
        pool = self._pools.setdefault(ep.url, [])
        while pool:
            conn = pool.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    async def _connect(self, ep: Endpoint, loop: asyncio.AbstractEventLoop) -> _Connection:
        """A new connection; raises ``ConnectionError`` with a message."""
        pool = self._pools.setdefault(ep.url, [])
        if ep.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(
                    lambda: _Connection(pool, loop.time), ep.host, ep.port, ssl=self._ssl if ep.tls else None
                ),
                self.connect_timeout_s,
            )
        except asyncio.TimeoutError as exc:
            raise ConnectionError(f"{ep.url}: connect timed out after {self.connect_timeout_s:g} s") from exc
        except OSError as exc:
            raise ConnectionError(f"{ep.url}: {exc.strerror or exc}") from exc
        return conn

    def begin(
        self,
        ep: Endpoint,
        path: str,
        payload: bytes,
        *,
        chat: bool,
        engine_ids: bool,
        tokenizer: Tokenizer | None,
        on_first: FirstTokenCallback | None = None,
    ) -> PendingRequest:
        """Start a request now, on the loop thread: written at once when an idle kept-alive connection
        exists, else by :meth:`follow` after connecting. ``on_first`` gets the first token's ids from inside
        ``data_received``."""
        loop = asyncio.get_running_loop()
        st = _Stream(loop, chat, engine_ids, on_first, tokenizer)
        dog = _Watchdog(loop, st, self.request_timeout_s, self.idle_timeout_s)
        pending = PendingRequest(ep, self._request_bytes(ep, path, payload), st, dog)
        conn = self._idle(ep)
        if conn is not None:
            conn.start(st, pending.raw)
            pending.reused = True
        return pending

    async def follow(self, pending: PendingRequest) -> AsyncIterator[GenerationEvent]:
        """The events of a request :meth:`begin` started: FirstToken? then Finished | Failed."""
        ep = pending.ep

        def fail(kind: ErrorKind, msg: str, partial: tuple[int, ...] | list[int] = ()) -> Failed:
            return Failed(error=EngineError(kind=kind, message=msg, endpoint=ep.url), partial_token_ids=tuple(partial))

        loop = asyncio.get_running_loop()
        st = pending.st
        dog = pending.dog
        tokenizer = st.tokenizer
        try:
            written = pending.reused
            for attempt in (0, 1):
                if not written:
                    try:
                        conn = await self._connect(ep, loop)
                    except ConnectionError as exc:
                        if st.error is not None:  # the watchdog fired while connecting
                            yield fail(*st.error)
                        else:
                            yield fail(ErrorKind.CONNECT, str(exc))
                        return
                    if st.over:  # the watchdog fired while connecting
                        conn.pool.append(conn)
                        break
                    conn.start(st, pending.raw)
                await st.first
                # a kept-alive connection the server closed meanwhile: retry once on a fresh one
                if (
                    pending.reused
                    and attempt == 0
                    and st.error is not None
                    and st.error[0] is ErrorKind.RESET
                    and not st.got_bytes
                ):
                    st = _Stream(loop, st.chat, st.engine_ids, st.on_first, tokenizer)  # nothing came: all as begun
                    dog.stream = st
                    written = False
                    continue
                break
            if st.first_ids is not None:
                yield FirstToken(token_ids=st.first_ids)
            elif st.first_text is not None:
                yield FirstToken(token_ids=st.first_token_ids(), ids_from_engine=False)
            await st.end
        finally:
            dog.cancel()
            if not st.over:  # cancelled: the connection is mid-response
                st.fail(ErrorKind.RESET, "request cancelled")
        ids = st.ids
        if st.error is not None:
            yield fail(st.error[0], st.error[1], ids)
            return
        if not st.done or st.finish_reason is None:
            what = "no [DONE]" if not st.done else "no finish_reason"
            yield fail(ErrorKind.TRUNCATED, f"stream ended without completing ({what})", ids)
            return
        if not st.engine_ids:
            ids = tokenizer.encode("".join(st.texts)) if tokenizer else []
        usage_tokens = st.usage_tokens
        if usage_tokens is None:
            if st.engine_ids:
                usage_tokens = len(ids)
            else:
                yield fail(ErrorKind.MISSING_USAGE, "no usage.completion_tokens in the stream (stream_options ignored?)", ids)
                return
        if st.engine_ids and len(ids) != usage_tokens:
            yield fail(
                ErrorKind.TOKEN_MISMATCH,
                f"engine returned {len(ids)} token ids but usage says {usage_tokens} completion tokens",
                ids,
            )
            return
        if usage_tokens <= 0:
            yield fail(ErrorKind.EMPTY, "engine generated no tokens", ids)
            return
        yield Finished(
            token_ids=tuple(ids), n_tokens=usage_tokens, ids_from_engine=st.engine_ids, finish_reason=st.finish_reason
        )

    async def stream(
        self,
        ep: Endpoint,
        path: str,
        body: dict[str, Any],
        *,
        chat: bool,
        engine_ids: bool,
        tokenizer: Tokenizer | None,
        on_first: FirstTokenCallback | None = None,
    ) -> AsyncIterator[GenerationEvent]:
        """POST ``body`` to ``path`` and turn the SSE answer into FirstToken? then Finished | Failed."""
        pending = self.begin(
            ep, path, self.encode_body(body), chat=chat, engine_ids=engine_ids, tokenizer=tokenizer, on_first=on_first
        )
        async for ev in self.follow(pending):
            yield ev


class PendingRequest:
    """A request :meth:`SSEStreamClient.begin` started (``reused``: already written on a kept-alive connection)."""

    __slots__ = ("dog", "ep", "raw", "reused", "st")

    def __init__(self, ep: Endpoint, raw: bytes, st: _Stream, dog: _Watchdog) -> None:
        self.ep = ep
        self.raw = raw
        self.st = st
        self.dog = dog
        self.reused = False
