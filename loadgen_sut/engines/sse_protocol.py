"""Streaming completions (OpenAI SSE) on the HTTP client's framer: low overhead per token event.

HTTP framing (chunked, ``Content-Length`` or read-to-close) and SSE framing are
:class:`loadgen_sut.engines.http_connection.Connection`'s, inside ``data_received`` (why a protocol and not
streams: see there); here each event's JSON is handled as it is framed (:class:`_Stream`), and the sample's
task wakes twice: at the first token and at the end.

The measured path is kept free of loop hops: :meth:`SSEStreamClient.begin` writes the request at once
on an idle kept-alive connection (the caller runs it inside the loop callback that LoadGen's issue
handed over), and the first token is passed to ``on_first`` from inside ``data_received``, before the
sample's task is even woken (``bench/sut_hops.py`` measures what each hop costs).

Behaviour:

- keep-alive connections per endpoint; a kept-alive connection the server closed meanwhile is
  retried once on a fresh one (only when no response byte came back);
- one watchdog timer per request: the total deadline and the idle gap between received bytes;
- every failure is a :class:`Failed` with an :class:`ErrorKind`: refused connection, reset
  mid-stream, HTTP status (with the body's error message), malformed HTTP/SSE/JSON, truncated
  stream (no ``[DONE]`` or no ``finish_reason``), in-band error event, missing ``usage``, a
  ``usage.completion_tokens`` that is not a non-negative integer, a count the text contradicts
  (see below), one SSE event or the whole response over the size caps, timeout;
- linear in the response size and bounded (the framer's bounds): one SSE event may hold at most
  :data:`MAX_EVENT_BYTES`, one response at most :data:`MAX_RESPONSE_BYTES` (``stream_too_large`` fails
  that sample, not the run);
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
import json.scanner
import math
import reprlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

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
from loadgen_sut.engines.http_client import Endpoint, HttpClient
from loadgen_sut.engines.http_connection import MAX_EVENT_BYTES, MAX_RESPONSE_BYTES, Connection
from loadgen_sut.engines.tokenizers import Tokenizer

_MAX_ERROR_BODY_BYTES = 1 << 16
_DETAIL_CHARS = 300
_MAX_TOKEN_ID = (1 << 31) - 1  # ids travel to LoadGen as int32
_MAX_COUNT = (1 << 63) - 1  # LoadGen's n_tokens is an int64

# count checks of text-only streams (see the module docstring)
RETOKENIZE_SLACK_TOKENS = 3
RETOKENIZE_SLACK_FRACTION = 0.10
PLAUSIBLE_EXTRA_TOKENS = 2

_FAST_DECODE = msgspec.json.Decoder().decode  # any JSON value, from bytes
_DECODER = json.JSONDecoder()
# the C scanner: (value, end) of the JSON value at an index, else StopIteration (typeshed types its argument as itself)
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]
_decode_whole = _DECODER.decode  # on str: skips json.loads' encoding sniffing of bytes


def _decode(data: bytes) -> Any:
    """``json.loads(data.decode())``, the same value or the same error, at a third of its cost for an event.

    msgspec's decoder is asked first (0.5 us for a 200-byte vLLM chat chunk against 1.3 us for the json module's C
    scanner and 1.9 for ``json.loads``): where it returns a value, that value is json's (integers of any size it
    takes, the last of duplicate keys, correctly rounded floats); what it refuses, json may take (NaN, Infinity,
    1e400, lone surrogates, integers of more digits than it holds) or refuse with another error (invalid UTF-8,
    garbage after the value), so that goes the old way, which returns or raises what it always did
    (``tests/sut/test_sse_json_equivalence.py`` holds the two to each other)."""
    try:
        return _FAST_DECODE(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    text = data.decode()  # strict: invalid UTF-8 raises UnicodeDecodeError, a ValueError
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return _decode_whole(text)
    return value if end == len(text) else _decode_whole(text)


class _Stream:
    """What one request has received so far, and the two futures its task waits on (the framer's
    :class:`~loadgen_sut.engines.http_connection.Exchange`; its own :class:`~loadgen_sut.engines.http_connection.EventSink`)."""

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
        self.conn: Connection | None = None
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

    def on_head(self, status: int, reason: str, content_length: int | None) -> _Stream | int:
        """A 200 answer streams its events here; any other is read whole (its start) for the message."""
        return self if status == 200 else _MAX_ERROR_BODY_BYTES

    def on_whole_body(self, status: int, reason: str, body: bytes, complete: bool) -> None:
        self.fail(ErrorKind.HTTP_STATUS, f"HTTP {status} {reason}: {_error_detail(body)}".strip())

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
            event = _decode(data)
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


class SSEStreamClient(HttpClient):
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
        super().__init__(connect_timeout_s, api_key, max_event_bytes, max_response_bytes)
        self.request_timeout_s = request_timeout_s
        self.idle_timeout_s = idle_timeout_s

    @staticmethod
    def encode_body(body: dict[str, Any]) -> bytes:
        """The JSON payload of a request (callers may encode every request before the run starts)."""
        return json.dumps(body, separators=(",", ":")).encode()

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
        pending = PendingRequest(ep, self.request_bytes(ep, "POST", path, payload, "text/event-stream"), st, dog)
        pending.on_sent = on_sent
        conn = self.idle(ep)
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
                        conn = await self.connect(ep, loop)
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
            text=text if not st.engine_ids else "".join(st.texts),  # the content (reasoning text not included)
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
