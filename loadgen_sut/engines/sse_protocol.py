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
  stream (no ``[DONE]`` or no ``finish_reason``), in-band error event, missing ``usage``, a
  ``usage.completion_tokens`` that is not a non-negative integer, a count the text contradicts
  (see below), one SSE event or the whole response over the size caps, timeout;
- linear in the response size: a long line is scanned once (only its new bytes), a long HTTP chunk is
  passed on as it arrives; one SSE event may hold at most :data:`MAX_EVENT_BYTES`, one response at
  most :data:`MAX_RESPONSE_BYTES` (``stream_too_large`` fails that sample, not the run);
- token ids from the engine (vLLM ``return_token_ids``) or, for text-only servers, from the
  served model's tokenizer (``ids_from_engine=False``); the count is ``usage.completion_tokens``,
  checked per sample (``Finished.count_check`` says how):

  * engine ids: ``usage`` must equal their number (``token_mismatch``);
  * a tokenizer, text only: ``usage`` must lie within ``max(3, 10 %)`` of the tokenizer's count of the
    streamed text, plus one per text-less event above it (``token_mismatch``) — re-encoding the text can
    merge or split a few tokens at boundaries, drop the end-of-sequence token and the like, no more;
  * neither: every real token decodes to at least one UTF-8 byte except special tokens, which arrive in
    events of their own, so ``usage`` above ``bytes(text) + events + 2`` is ``implausible_token_count``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import reprlib
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

from loadgen_sut.engines.base import (
    CountCheck,
    DispatchCallback,
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
_MAX_CHUNK_LINE = 1024  # a chunk size line (hex size and extensions)
_MAX_TOKEN_ID = (1 << 31) - 1  # ids travel to LoadGen as int32
_MAX_COUNT = (1 << 63) - 1  # LoadGen's n_tokens is an int64

MAX_EVENT_BYTES = 16 << 20
"""The most bytes one SSE event (its lines together) may hold: far above any token event (well under
1 KiB), low enough that a broken server cannot make the client hold gigabytes for one line."""
MAX_RESPONSE_BYTES = 256 << 20
"""The most body bytes one streamed response may have (a 128k-token answer with token ids is ~40 MB)."""

# count checks of text-only streams (see the module docstring)
RETOKENIZE_SLACK_TOKENS = 3
RETOKENIZE_SLACK_FRACTION = 0.10
PLAUSIBLE_EXTRA_TOKENS = 2

_decode = json.JSONDecoder().decode  # on str: skips json.loads' encoding sniffing of bytes

# body framing
_CHUNKED = 0
_LENGTH = 1
_TO_CLOSE = 2


class _Stream:
    """What one request has received so far, and the two futures its task waits on."""

    __slots__ = (
        "blank",
        "chat",
        "choices",
        "conn",
        "done",
        "end",
        "engine_ids",
        "error",
        "extra_texts",
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
        self.extra_texts: list[str] = []  # chat reasoning text (``reasoning_content``): generated tokens too
        self.choices = 0  # choice objects received (each may carry tokens)
        self.blank = 0  # of them, those without text (special tokens leave none)
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
            try:
                return tuple(self.tokenizer.encode(self.first_text)[:1])
            except Exception:  # text it cannot encode: the end of the stream reports it
                return ()
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
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            self.fail(ErrorKind.MALFORMED, f"not JSON in SSE data: {_head_text(data)!r}")
            return False
        if not isinstance(event, dict):
            self.fail(ErrorKind.MALFORMED, f"SSE data is not a JSON object: {_head_text(data)!r}")
            return False
        if "error" in event:
            err = event["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            msg = msg if isinstance(msg, str) else reprlib.repr(msg)
            self.fail(ErrorKind.ENGINE, f"engine error in stream: {msg[:_DETAIL_CHARS]}")
            return False
        usage = event.get("usage")
        if usage is not None and not self._usage(usage):
            return False
        choices = event.get("choices")
        if not isinstance(choices, list):
            self.fail(ErrorKind.MALFORMED, f"event without a choices list: {_head_text(data)!r}")
            return False
        for ch in choices:
            if not isinstance(ch, dict):
                self.fail(ErrorKind.MALFORMED, "choice is not an object")
                return False
            self.choices += 1
            thought = None
            if self.chat:
                delta = ch.get("delta") or {}
                text = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(delta, dict):  # reasoning parsers move thinking tokens out of content
                    r = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(r, str) and r:
                        self.extra_texts.append(r)
                        thought = r
            else:
                text = ch.get("text")
            new_ids = ch.get("token_ids") if self.engine_ids else None
            if self.engine_ids and text and not new_ids:
                self.engine_ids = False  # this server does not return ids after all
            if isinstance(new_ids, list) and new_ids:
                for t in new_ids:
                    if type(t) is not int or not 0 <= t <= _MAX_TOKEN_ID:
                        self.fail(ErrorKind.MALFORMED, f"token_ids are not integers in [0, 2^31): {_head_text(data)!r}")
                        return False
                self.ids.extend(new_ids)
            if isinstance(text, str) and text:
                self.texts.append(text)
            elif not thought:
                self.blank += 1
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

    def _usage(self, usage: object) -> bool:
        """An event's ``usage`` (not null); False when it is unusable (failure recorded)."""
        if not isinstance(usage, dict):
            self.fail(ErrorKind.BAD_USAGE, f"usage is not a JSON object: {reprlib.repr(usage)[:80]}")
            return False
        n = usage.get("completion_tokens")
        if n is None:  # some servers send usage without it on every event; the last one counts
            return True
        if type(n) is not int or not 0 <= n <= _MAX_COUNT:  # bool is an int subclass: refused too
            self.fail(
                ErrorKind.BAD_USAGE,
                f"usage.completion_tokens is not a non-negative integer: {reprlib.repr(n)[:80]}",
            )
            return False
        self.usage_tokens = n
        return True


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n} bytes"


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _head_text(data: bytes | bytearray, chars: int = 80) -> str:
    """The start of a (maybe huge) payload, for a message: decodes only what it shows."""
    return _text(data[: chars * 4])[:chars]


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


def retokenize_tolerance(n_text: int) -> int:
    """How far ``usage`` may be from the tokenizer's count ``n_text`` of the streamed text."""
    return max(RETOKENIZE_SLACK_TOKENS, math.ceil(n_text * RETOKENIZE_SLACK_FRACTION))


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def count_check(
    usage_tokens: int, st: _Stream, text: str, n_text: int | None, n_ids: int
) -> CountCheck | tuple[ErrorKind, str]:
    """What ``usage`` was checked against, or the failure when the stream contradicts it.

    ``n_text``: the tokenizer's count of the streamed text (None: no tokenizer); ``n_ids``: the engine's ids.
    """
    if st.engine_ids:
        if n_ids != usage_tokens:
            return (
                ErrorKind.TOKEN_MISMATCH,
                f"engine returned {n_ids} token ids but usage says {usage_tokens} completion tokens",
            )
        return "engine_ids"
    if n_text is not None:
        tol = retokenize_tolerance(n_text)
        if usage_tokens < n_text - tol or usage_tokens > n_text + tol + st.blank:
            extra = f" + {st.blank} text-less events" if st.blank else ""
            return (
                ErrorKind.TOKEN_MISMATCH,
                f"usage says {usage_tokens} completion tokens but the tokenizer counts {n_text} in the streamed "
                f"text (allowed: {n_text} ± {tol}{extra}); a wrong count from the engine, or not its --tokenizer?",
            )
        return "tokenizer"
    n_bytes = utf8_size(text) + sum(utf8_size(t) for t in st.extra_texts)
    bound = n_bytes + st.choices + PLAUSIBLE_EXTRA_TOKENS
    if usage_tokens > bound:
        return (
            ErrorKind.IMPLAUSIBLE_COUNT,
            f"implausible token count: usage says {usage_tokens} completion tokens for {n_bytes} bytes of text "
            f"in {st.choices} events (at most {bound}: a token is at least one byte of text, or an event of its "
            "own); pass --tokenizer DIR to check counts against the text",
        )
    return "plausibility"


class _Connection(asyncio.Protocol):
    """One keep-alive connection; parses the response of the request it carries as bytes arrive."""

    def __init__(
        self,
        pool: list[_Connection],
        now: Callable[[], float],
        max_event_bytes: int = MAX_EVENT_BYTES,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.pool = pool
        self.now = now
        self.max_event = max_event_bytes
        self.max_response = max_response_bytes
        self.transport: Any = None  # an asyncio.Transport, or uvloop's (not a subclass of it)
        self.req: _Stream | None = None
        self.closed = False
        self.buf = bytearray()  # unparsed HTTP bytes: the head, a chunk size line, trailers (all bounded)
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
        self.event_bytes = 0
        self.body_bytes = 0
        self.chunk_left = 0
        self.chunk_crlf = False
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
            self.chunk_left = 0
            self.chunk_crlf = False
        elif "content-length" in headers:
            try:
                self.left = int(headers["content-length"])
            except ValueError:
                self.left = -1
            if self.left < 0:
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
        """Chunked body bytes: chunk data goes to the SSE parser as it arrives (a long chunk is not
        collected first); only a partial size line, CRLF or trailers wait in ``buf`` (all bounded)."""
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
                        if n - pos > _MAX_HEAD_BYTES:
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

    def _body_bytes(self, req: _Stream, part: bytes) -> bool:
        """Body bytes, in order; False when the request ended (failure recorded)."""
        if self.error_body is not None:
            self.error_body += part
            if len(self.error_body) > _MAX_ERROR_BODY_BYTES:  # report it without reading the rest
                self._http_status_failure(req, complete=False)
                return False
            return True
        self.body_bytes += len(part)
        if self.body_bytes > self.max_response:
            req.fail(ErrorKind.TOO_LARGE, f"stream too large: the response is over {_size(self.max_response)}")
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
            return req.on_event(v[:-1] if v.endswith(b"\r") else v)
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
                        if not req.on_event(data):
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

    def _too_large(self, req: _Stream) -> bool:
        req.fail(ErrorKind.TOO_LARGE, f"stream too large: one SSE event is over {_size(self.max_event)}")
        return False

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
        max_event_bytes: int = MAX_EVENT_BYTES,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.api_key = api_key
        self.request_timeout_s = request_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.max_event_bytes = max_event_bytes
        self.max_response_bytes = max_response_bytes
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
                    lambda: _Connection(pool, loop.time, self.max_event_bytes, self.max_response_bytes),
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
        on_sent: DispatchCallback | None = None,
    ) -> PendingRequest:
        """Start a request now, on the loop thread: written at once when an idle kept-alive connection
        exists, else by :meth:`follow` after connecting. ``on_first`` gets the first token's ids from inside
        ``data_received``; ``on_sent()`` is called right after each write of the request to a socket."""
        loop = asyncio.get_running_loop()
        st = _Stream(loop, chat, engine_ids, on_first, tokenizer)
        dog = _Watchdog(loop, st, self.request_timeout_s, self.idle_timeout_s)
        pending = PendingRequest(ep, self._request_bytes(ep, path, payload), st, dog)
        pending.on_sent = on_sent
        conn = self._idle(ep)
        if conn is not None:
            conn.start(st, pending.raw)
            if on_sent is not None:
                on_sent()
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
                    if pending.on_sent is not None:
                        pending.on_sent()
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
        text = "" if st.engine_ids else "".join(st.texts)
        n_text = 0  # the tokenizer's count of all streamed text (reasoning included)
        if not st.engine_ids:
            if tokenizer is None:
                ids = []
            else:
                try:
                    ids = tokenizer.encode(text)
                    n_text = len(ids) + (len(tokenizer.encode("".join(st.extra_texts))) if st.extra_texts else 0)
                except Exception as exc:  # e.g. lone surrogates from a JSON \ud800 escape
                    yield fail(ErrorKind.MALFORMED, f"the tokenizer cannot encode the streamed text: {exc}"[:300])
                    return
        usage_tokens = st.usage_tokens
        if usage_tokens is None:
            if st.engine_ids:
                usage_tokens = len(ids)
            else:
                yield fail(ErrorKind.MISSING_USAGE, "no usage.completion_tokens in the stream (stream_options ignored?)", ids)
                return
        check = count_check(usage_tokens, st, text, n_text if tokenizer is not None else None, len(ids))
        if isinstance(check, tuple):
            yield fail(check[0], check[1], ids)
            return
        if usage_tokens <= 0:
            yield fail(ErrorKind.EMPTY, "engine generated no tokens", ids)
            return
        yield Finished(
            token_ids=tuple(ids),
            n_tokens=usage_tokens,
            ids_from_engine=st.engine_ids,
            finish_reason=st.finish_reason,
            count_check=check,
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

    __slots__ = ("dog", "ep", "on_sent", "raw", "reused", "st")

    def __init__(self, ep: Endpoint, raw: bytes, st: _Stream, dog: _Watchdog) -> None:
        self.ep = ep
        self.raw = raw
        self.st = st
        self.dog = dog
        self.reused = False
        self.on_sent: DispatchCallback | None = None  # called after each write of the request
