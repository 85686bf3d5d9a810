"""A recording OpenAI-compatible streaming server: the reference clock for the fidelity benchmark.

It answers ``POST /v1/completions`` and ``POST /v1/chat/completions`` with a fixed timing: the first token
``ttft_ms`` after the request arrived, then one token every ``tpot_ms``, ``tokens`` tokens in all (fewer when
the request's ``max_tokens`` asks for fewer). With ``"stream": true`` each token is one SSE event; with
``"stream_options": {"include_usage": true}`` a last chunk carries ``usage`` (prompt/completion/total tokens);
then ``data: [DONE]``. Without ``stream`` the whole completion is sent once the last token is due.

With ``--max-concurrency N`` at most N requests are served at once (a slot is held from the start of a request's
generation to its last token); the others wait in one FIFO queue, and the wait counts in their TTFT (the first
token is due ``ttft_ms`` after the request got its slot). The server's capacity is then known exactly:
``N / (ttft_ms + (tokens - 1) * tpot_ms)`` requests per second (``inference-audit sweep`` finds it as its knee).
Without it (the default) every request starts at once, as before.

For every request it records, in wall-clock nanoseconds (``time.time_ns``):

* ``recv_ns``: when the first byte of the request reached the server (entry of ``data_received``);
* ``send_ns``: when each token event was handed to the socket (just before ``transport.write``, so no client
  can have seen the token earlier).

``GET /_bench/records`` returns them as JSON (``?reset=1`` also clears them), ``GET /_bench/stats`` returns
the request count and the server's own CPU time (``resource.getrusage``), so a benchmark can show that the
server was not the bottleneck. ``GET /v1/models`` and ``GET /health`` exist for clients that probe them.

The server is one asyncio process with a hand-written HTTP/1.1 parser (keep-alive, chunked responses) and one
loop timer for all streams (two FIFO queues of due token events): no framework, no per-token coroutine or timer. It uses uvloop when it is importable and
``--loop`` allows it.

It stands in for a submitter's OpenAI-compatible server in the documented first-submission path (docs/run.md, "Your
server, a trial tree, its check"; ``tests/sut/test_first_submission_path.py`` runs it): it serves the model id
``token-server``, and the tokenizer of its one word is ``examples/token-server-tokenizer``.

It is also the tests' local engine (``tests/sut/sse_server.py``): :class:`ServerThread` runs a
:class:`TokenServer` on its own loop in a daemon thread, and a subclass may override
:meth:`TokenServer.stream_plan`, which says what one streamed answer writes and when (a :class:`StreamPlan`:
other tokens, merged events, and faults such as a reset, a stall or a truncated stream).

    python3 bench/token_server.py --port 8011 --ttft-ms 200 --tpot-ms 20 --tokens 64
    python3 bench/token_server.py --port 8011 --ttft-ms 100 --tpot-ms 20 --tokens 16 --max-concurrency 8  # 20 req/s
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import signal
import sys
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

try:  # optional accelerator: a faster event loop, same semantics
    import uvloop
except ImportError:  # pragma: no cover - depends on the environment
    uvloop = None

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
TOKEN_TEXT = " tok"
TOKEN_ID = (
    3  # the id of "tok" in examples/token-server-tokenizer (bench/peers/make_tokenizer.py's vocabulary)
)


@dataclass(frozen=True)
class Timing:
    """The server's fixed generation timing."""

    ttft_ms: float
    tpot_ms: float
    tokens: int

    def capacity_rps(self, max_concurrency: int | None) -> float | None:
        """Requests per second N slots serve with full-length responses (None: no limit, or no time per request)."""
        service_ms = self.ttft_ms + (self.tokens - 1) * self.tpot_ms
        if max_concurrency is None or service_ms <= 0:
            return None
        return max_concurrency * 1000.0 / service_ms

    def n_tokens(self, requested: object) -> int:
        """Tokens to emit for a request whose ``max_tokens`` (or ``max_completion_tokens``) is ``requested``."""
        if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 1:
            return min(self.tokens, requested)
        return self.tokens


@dataclass
class RequestRecord:
    """What the server observed for one generation request."""

    seq: int
    path: str
    recv_ns: int
    n_tokens: int
    prompt_tokens: int
    stream: bool
    send_ns: array = field(default_factory=lambda: array("q"))
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "path": self.path,
            "recv_ns": self.recv_ns,
            "n_tokens": self.n_tokens,
            "prompt_tokens": self.prompt_tokens,
            "stream": self.stream,
            "complete": self.complete,
            "send_ns": self.send_ns.tolist(),
        }


class Recorder:
    """Requests since the last reset (at most ``max_records``, the oldest dropped first), plus lifetime counters."""

    def __init__(self, max_records: int) -> None:
        self.records: deque[RequestRecord] = deque(maxlen=max_records)
        self.total_requests = 0
        self.active_streams = 0

    def new(self, path: str, recv_ns: int, n_tokens: int, prompt_tokens: int, stream: bool) -> RequestRecord:
        self.total_requests += 1
        record = RequestRecord(self.total_requests, path, recv_ns, n_tokens, prompt_tokens, stream)
        self.records.append(record)
        return record

    def take(self, reset: bool) -> list[RequestRecord]:
        records = list(self.records)
        if reset:
            self.records.clear()
        return records


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _count_prompt_tokens(prompt: object) -> int:
    """Token ids count as themselves; text counts whitespace-separated words (the server has no tokenizer)."""
    if isinstance(prompt, str):
        return len(prompt.split())
    if isinstance(prompt, list):
        if all(isinstance(p, int) for p in prompt):
            return len(prompt)
        return sum(_count_prompt_tokens(p) for p in prompt)
    return 0


def _chat_prompt_tokens(messages: object) -> int:
    if not isinstance(messages, list):
        return 0
    total = 0
    for message in messages:
        if isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str):
                total += len(content.split())
            elif isinstance(content, list):
                total += sum(
                    len(str(part.get("text", "")).split()) for part in content if isinstance(part, dict)
                )
    return total


def chunk(payload: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def sse_event(obj: dict[str, Any]) -> bytes:
    return chunk(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")


class _StreamEvents:
    """The pre-encoded bytes of one streamed response."""

    def __init__(
        self,
        chat: bool,
        model: str,
        rid: str,
        n_tokens: int,
        prompt_tokens: int,
        usage: bool,
        token_ids: bool,
    ) -> None:
        created = int(time.time())
        if chat:
            base: dict[str, Any] = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
            }
            first = {
                **base,
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": TOKEN_TEXT}, "finish_reason": None}
                ],
            }
            middle = {
                **base,
                "choices": [{"index": 0, "delta": {"content": TOKEN_TEXT}, "finish_reason": None}],
            }
            last = {
                **base,
                "choices": [{"index": 0, "delta": {"content": TOKEN_TEXT}, "finish_reason": "length"}],
            }
        else:
            base = {"id": rid, "object": "text_completion", "created": created, "model": model}
            middle = {
                **base,
                "choices": [{"index": 0, "text": TOKEN_TEXT, "logprobs": None, "finish_reason": None}],
            }
            first = middle
            last = {
                **base,
                "choices": [{"index": 0, "text": TOKEN_TEXT, "logprobs": None, "finish_reason": "length"}],
            }
        for event in (first, middle, last):
            if token_ids:  # vLLM's "return_token_ids": the generated ids of this event
                event["choices"][0]["token_ids"] = [TOKEN_ID]
            if usage:
                event["usage"] = None
        self.first = sse_event(first)
        self.middle = sse_event(middle)
        self.last = sse_event(last)
        tail = b""
        if usage:
            tail += sse_event(
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": n_tokens,
                        "total_tokens": prompt_tokens + n_tokens,
                    },
                }
            )
        tail += chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
        self.last_and_tail = self.last + tail  # one write: the last token, usage, [DONE], end of body


def _full_body(chat: bool, model: str, rid: str, n_tokens: int, prompt_tokens: int, token_ids: bool) -> bytes:
    text = TOKEN_TEXT * n_tokens
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": n_tokens,
        "total_tokens": prompt_tokens + n_tokens,
    }
    created = int(time.time())
    if chat:
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "length",
        }
        obj: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
    else:
        obj = {
            "id": rid,
            "object": "text_completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}],
            "usage": usage,
        }
    if token_ids:
        obj["choices"][0]["token_ids"] = [TOKEN_ID] * n_tokens
    return json.dumps(obj, separators=(",", ":")).encode()


def response(
    status: str, body: bytes, content_type: str = "application/json", keep_alive: bool = True
) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
        f"connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    ).encode()
    return head + body


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n"
)


FINISH = "finish"
"""End of a :class:`StreamPlan`: the response is complete (the connection serves the next request)."""
ABORT = "abort"
"""End of a :class:`StreamPlan`: reset the connection."""
HOLD = "hold"
"""End of a :class:`StreamPlan`: send nothing more, keep the connection open ``hold_s``, then reset it."""
SHUTDOWN = "shutdown"
"""End of a :class:`StreamPlan`: the response is complete, then the server stops listening and drops every
connection (clients get 'connection refused' after)."""


class StreamPlan:
    """What one streamed answer writes: ``head`` at once, then ``writes`` one by one at their due times (the
    first ``ttft_ms`` after the request got its slot, each next one the server's ``gap_s`` later), then
    ``end`` (:data:`FINISH`, :data:`ABORT`, :data:`HOLD` or :data:`SHUTDOWN`); with no writes, ``end`` at once.
    ``n_tokens`` is what the request record says it generated."""

    __slots__ = ("end", "head", "hold_s", "n_tokens", "writes")

    def __init__(
        self, head: bytes, writes: list[bytes], n_tokens: int, end: str = FINISH, hold_s: float = 0.0
    ) -> None:
        if end not in (FINISH, ABORT, HOLD, SHUTDOWN):
            raise ValueError(f"unknown end of a stream plan: {end!r}")
        self.head = head
        self.writes = writes
        self.n_tokens = n_tokens
        self.end = end
        self.hold_s = hold_s


class _Stream:
    """One streamed response in flight: its next write is due at ``due`` (``time.monotonic()``)."""

    __slots__ = ("conn", "due", "index", "keep_alive", "last", "plan", "record", "writes")

    def __init__(
        self,
        conn: HttpConnection,
        record: RequestRecord,
        plan: StreamPlan,
        first_due: float,
        keep_alive: bool,
    ) -> None:
        self.conn = conn
        self.record = record
        self.plan = plan
        self.writes = plan.writes
        self.last = len(plan.writes) - 1
        self.index = 0
        self.due = first_due
        self.keep_alive = keep_alive


class HttpConnection(asyncio.Protocol):
    """A minimal HTTP/1.1 server connection (one request at a time, keep-alive)."""

    def __init__(self, server: TokenServer) -> None:
        self.server = server
        self.transport: Any = None  # an asyncio.Transport, or uvloop's (not a subclass)
        self.buffer = bytearray()
        self.recv_ns = 0
        self.busy = False  # a response is in flight; further bytes wait in the buffer
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)

    def data_received(self, data: bytes) -> None:
        if not self.buffer:
            self.recv_ns = time.time_ns()
        self.buffer += data
        if not self.busy:
            self._process()

    def _process(self) -> None:
        while self.buffer and not self.busy and not self.closed:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    self._fail("431 Request Header Fields Too Large", "header too large")
                return
            head = bytes(self.buffer[:end]).decode("latin-1")
            lines = head.split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3:
                self._fail("400 Bad Request", "bad request line")
                return
            method, target, _version = parts
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._fail("411 Length Required", "chunked request bodies are not supported")
                return
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                self._fail("400 Bad Request", "bad content-length")
                return
            if length > MAX_BODY_BYTES:
                self._fail("413 Payload Too Large", "body too large")
                return
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            body = bytes(self.buffer[end + 4 : total])
            del self.buffer[:total]
            recv_ns = self.recv_ns
            if self.buffer:  # a pipelined next request arrived with this one
                self.recv_ns = time.time_ns()
            keep_alive = headers.get("connection", "").lower() != "close"
            self.server.handle(self, method, target, body, recv_ns, keep_alive)

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(data)

    def finish(self, keep_alive: bool) -> None:
        """The current response is complete: accept the next request."""
        self.busy = False
        if not keep_alive:
            self.close()
        elif self.buffer:
            self._process()

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()
        self.closed = True

    def abort(self) -> None:
        """Reset the connection (unsent bytes are dropped)."""
        if self.transport is not None and not self.closed:
            self.transport.abort()
        self.closed = True

    def _fail(self, status: str, message: str) -> None:
        self.write(response(status, json.dumps({"error": {"message": message}}).encode(), keep_alive=False))
        self.close()


class TokenServer:
    """Routes requests and drives the token timers (:meth:`listen` starts it on the running loop)."""

    def __init__(
        self,
        timing: Timing,
        model: str = "token-server",
        owned_by: str = "token-server",
        *,
        max_records: int = 1_000_000,
        max_concurrency: int | None = None,
        version: str = "token-server",
    ) -> None:
        self.timing = timing
        self.gap_s = timing.tpot_ms / 1000.0  # between two writes of a stream
        self.version = version  # GET /version
        self.max_concurrency = max_concurrency  # None: every request starts at once
        self.running = 0  # requests holding a slot (generating)
        # requests waiting for a slot, first come first served: (connection, start it, a stream?)
        self.waiting: deque[tuple[HttpConnection, Callable[[float], None], bool]] = deque()
        self.model = model
        self.owned_by = owned_by
        self.loop: asyncio.AbstractEventLoop  # the loop listen() runs on
        self.listener: asyncio.Server | None = None
        self.connections: set[HttpConnection] = set()
        self.recorder = Recorder(max_records)
        self.first_q: deque[_Stream] = deque()
        self.next_q: deque[_Stream] = deque()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_due = 0.0

    async def listen(self, host: str, port: int) -> int:
        """Serve on ``host:port`` (0: a free port) from the running loop; returns the bound port."""
        self.loop = asyncio.get_running_loop()
        self.listener = await self.loop.create_server(
            lambda: HttpConnection(self), host, port, backlog=4096, reuse_address=True
        )
        return int(self.listener.sockets[0].getsockname()[1])

    def shutdown(self) -> None:
        """Stop listening and drop every connection (on the server's loop)."""
        if self.listener is not None:
            self.listener.close()
        for conn in list(self.connections):
            conn.abort()

    def handle(
        self, conn: HttpConnection, method: str, target: str, body: bytes, recv_ns: int, keep_alive: bool
    ) -> None:
        url = urlsplit(target)
        path = url.path
        conn.busy = True
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            self._generate(conn, path, body, recv_ns, keep_alive)
            return
        if method == "GET" and path in ("/health", "/v1/health", "/ping"):
            reply = response("200 OK", b"ok", "text/plain", keep_alive)
        elif method == "GET" and path == "/v1/models":
            models = {
                "object": "list",
                "data": [
                    {
                        "id": self.model,
                        "object": "model",
                        "created": 0,
                        "owned_by": self.owned_by,
                        "max_model_len": 1 << 20,
                    }
                ],
            }
            reply = response("200 OK", json.dumps(models).encode(), keep_alive=keep_alive)
        elif method == "GET" and path == "/version":
            reply = response(
                "200 OK",
                json.dumps({"version": self.version}, separators=(",", ":")).encode(),
                keep_alive=keep_alive,
            )
        elif method == "GET" and path == "/_bench/stats":
            stats = {
                "requests": self.recorder.total_requests,
                "records": len(self.recorder.records),
                "active_streams": self.recorder.active_streams,
                "cpu_s": _cpu_s(),
                "max_concurrency": self.max_concurrency,
                "running": self.running,
                "waiting": len(self.waiting),
                "timing": {
                    "ttft_ms": self.timing.ttft_ms,
                    "tpot_ms": self.timing.tpot_ms,
                    "tokens": self.timing.tokens,
                },
            }
            reply = response("200 OK", json.dumps(stats).encode(), keep_alive=keep_alive)
        elif method == "GET" and path == "/_bench/records":
            reset = parse_qs(url.query).get("reset", ["0"])[0] not in ("0", "", "false")
            records = [r.to_json() for r in self.recorder.take(reset)]
            reply = response("200 OK", json.dumps({"records": records}).encode(), keep_alive=keep_alive)
        else:
            reply = response(
                "404 Not Found",
                json.dumps({"error": {"message": f"no route {method} {path}"}}).encode(),
                keep_alive=keep_alive,
            )
        conn.write(reply)
        conn.finish(keep_alive)

    def _generate(self, conn: HttpConnection, path: str, body: bytes, recv_ns: int, keep_alive: bool) -> None:
        start = time.monotonic()  # not loop.time(): uvloop's is cached per loop iteration, in whole ms
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            conn.write(
                response(
                    "400 Bad Request",
                    b'{"error":{"message":"body is not a JSON object"}}',
                    keep_alive=keep_alive,
                )
            )
            conn.finish(keep_alive)
            return
        chat = path.endswith("/chat/completions")
        prompt_tokens = (
            _chat_prompt_tokens(request.get("messages"))
            if chat
            else _count_prompt_tokens(request.get("prompt"))
        )
        stream = bool(request.get("stream"))
        ttft_s = self.timing.ttft_ms / 1000.0
        if not stream:
            n_tokens = self.timing.n_tokens(request.get("max_completion_tokens", request.get("max_tokens")))
            token_ids = bool(request.get("return_token_ids"))
            model = str(request.get("model") or self.model)
            record = self.recorder.new(path, recv_ns, n_tokens, prompt_tokens, stream)
            rid = f"cmpl-{record.seq}"
            whole_s = ttft_s + (n_tokens - 1) * self.timing.tpot_ms / 1000.0
            reply = response(
                "200 OK",
                _full_body(chat, model, rid, n_tokens, prompt_tokens, token_ids),
                keep_alive=keep_alive,
            )

            def begin_whole(begin: float) -> None:
                due = begin + whole_s
                self.loop.call_later(
                    due - time.monotonic(), self._send_whole, conn, record, reply, keep_alive
                )

            self._when_free(conn, start, begin_whole, False)
            return
        plan = self.stream_plan(request, chat, self.recorder.total_requests + 1, prompt_tokens)
        record = self.recorder.new(path, recv_ns, plan.n_tokens, prompt_tokens, stream)
        if plan.head:
            conn.write(plan.head)
        if not plan.writes:
            record.complete = plan.end in (FINISH, SHUTDOWN)
            self._end(conn, plan, keep_alive)
            return
        self.recorder.active_streams += 1

        def begin_stream(begin: float) -> None:
            self._enqueue_first(_Stream(conn, record, plan, begin + ttft_s, keep_alive))

        self._when_free(conn, start, begin_stream, True)

    def stream_plan(self, request: dict[str, Any], chat: bool, seq: int, prompt_tokens: int) -> StreamPlan:
        """What the streamed answer to ``request`` (the ``seq``-th generation request) writes: ``tokens`` tokens
        (fewer when its ``max_tokens`` asks for fewer), one event each with the text " tok" (and the id
        ``TOKEN_ID`` with ``return_token_ids``), the last with ``finish_reason`` "length", then the usage chunk
        (``stream_options.include_usage``), ``[DONE]`` and the end of the body in the last token's write."""
        n_tokens = self.timing.n_tokens(request.get("max_completion_tokens", request.get("max_tokens")))
        options = request.get("stream_options")
        usage = isinstance(options, dict) and bool(options.get("include_usage"))
        model = str(request.get("model") or self.model)
        token_ids = bool(request.get("return_token_ids"))
        events = _StreamEvents(chat, model, f"cmpl-{seq}", n_tokens, prompt_tokens, usage, token_ids)
        if n_tokens == 1:
            writes = [events.last_and_tail]
        else:
            writes = [events.first, *[events.middle] * (n_tokens - 2), events.last_and_tail]
        return StreamPlan(STREAM_HEAD, writes, n_tokens)

    def _end(self, conn: HttpConnection, plan: StreamPlan, keep_alive: bool) -> None:
        """After a stream plan's last write."""
        end = plan.end
        if end == FINISH:
            conn.finish(keep_alive)
        elif end == ABORT:
            conn.abort()
        elif end == HOLD:
            self.loop.call_later(plan.hold_s, conn.abort)
        else:  # SHUTDOWN
            conn.finish(keep_alive)
            self.shutdown()

    # --max-concurrency: a request holds a slot from the start of its generation to its last token; without a
    # free slot it waits in ``waiting`` (FIFO) and starts, first token ttft_ms later, when one is released.
    def _when_free(
        self, conn: HttpConnection, start: float, begin: Callable[[float], None], stream: bool
    ) -> None:
        if self.max_concurrency is None or self.running < self.max_concurrency:
            self.running += 1
            begin(start)
        else:
            self.waiting.append((conn, begin, stream))

    def _release(self) -> None:
        self.running -= 1
        while self.waiting and (self.max_concurrency is None or self.running < self.max_concurrency):
            conn, begin, stream = self.waiting.popleft()
            if conn.closed:  # the client went away while it waited
                if stream:
                    self.recorder.active_streams -= 1
                continue
            self.running += 1
            begin(time.monotonic())

    def _send_whole(
        self, conn: HttpConnection, record: RequestRecord, reply: bytes, keep_alive: bool
    ) -> None:
        record.send_ns.append(time.time_ns())
        conn.write(reply)
        record.complete = not conn.closed
        self._release()
        conn.finish(keep_alive)

    # Token events are not one loop timer each: every stream's next event is TPOT after its previous one and
    # every first event TTFT after the request, so two FIFO queues (first tokens, next tokens) hold the events
    # in due order, and one timer, armed for the earliest due event, emits everything due when it fires.
    def _enqueue_first(self, state: _Stream) -> None:
        self.first_q.append(state)
        if self.timer is None or state.due < self.timer_due:
            self._arm(state.due)

    def _arm(self, due: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer_due = due
        # at least 1 ms: loop timers have ms granularity (uvloop truncates, so a shorter wait would spin)
        self.timer = self.loop.call_later(max(0.001, due - time.monotonic()), self._tick)

    def _tick(self) -> None:
        self.timer = None
        first_q = self.first_q
        next_q = self.next_q
        gap_s = self.gap_s
        time_ns = time.time_ns
        now = time.monotonic()
        while True:
            if first_q and (not next_q or first_q[0].due <= next_q[0].due):
                queue = first_q
            elif next_q:
                queue = next_q
            else:
                return
            state = queue[0]
            if state.due > now:
                now = time.monotonic()
                if state.due > now:
                    self._arm(state.due)
                    return
            queue.popleft()
            conn = state.conn
            if conn.closed:  # the client went away: stop generating
                self.recorder.active_streams -= 1
                self._release()
                continue
            record = state.record
            index = state.index
            if index == state.last:
                record.send_ns.append(time_ns())
                conn.transport.write(state.writes[index])
                plan = state.plan
                record.complete = plan.end in (FINISH, SHUTDOWN)
                self.recorder.active_streams -= 1
                self._release()
                self._end(conn, plan, state.keep_alive)
                continue
            record.send_ns.append(time_ns())
            conn.transport.write(state.writes[index])
            state.index = index + 1
            state.due += gap_s
            next_q.append(state)


def _new_loop(kind: str) -> asyncio.AbstractEventLoop:
    if kind == "uvloop" and uvloop is None:
        raise SystemExit("token_server: --loop uvloop asked for, but uvloop is not installed")
    if kind in ("uvloop", "auto") and uvloop is not None:
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


async def _serve(args: argparse.Namespace, ready: Callable[[int], None]) -> None:
    app = TokenServer(
        Timing(args.ttft_ms, args.tpot_ms, args.tokens),
        args.model,
        args.owned_by,
        max_records=args.max_records,
        max_concurrency=args.max_concurrency,
    )
    ready(await app.listen(args.host, args.port))
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    app.shutdown()


class ServerThread:
    """A :class:`TokenServer` on its own (standard asyncio) event loop in a daemon thread: the local engine
    of tests and in-process benchmarks. ``start()`` returns once it listens; ``stop()`` drops every
    connection and ends the thread."""

    def __init__(self, app: TokenServer, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="token-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        self.port = asyncio.run_coroutine_threadsafe(
            self.app.listen(self.host, self.port), self._loop
        ).result(10)
        return self

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        self.app.shutdown()
        # the dropped connections' callbacks run (their sockets close) before the loop stops
        await asyncio.sleep(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Recording OpenAI-compatible SSE server with fixed token timing: the stand-in for your engine. "
        "It serves the model id 'token-server' (--model) and answers ' tok' per token, token id 3 when a request asks "
        "for vLLM's return_token_ids; its tokenizer (for `inference-audit run --tokenizer`) is "
        "examples/token-server-tokenizer (bench/peers/make_tokenizer.py writes it).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (loopback)")
    parser.add_argument("--port", type=int, default=8011, help="port; 0 picks a free one (see --port-file)")
    parser.add_argument(
        "--port-file", help="write the bound port to this file once listening (None: no file)"
    )
    parser.add_argument("--ttft-ms", type=float, default=200.0, help="time to first token (ms)")
    parser.add_argument("--tpot-ms", type=float, default=20.0, help="time between tokens (ms)")
    parser.add_argument("--tokens", type=int, default=64, help="tokens per response (capped by max_tokens)")
    parser.add_argument(
        "--model",
        default="token-server",
        help="model id reported by /v1/models (inference-audit run --model)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="serve at most N requests at once, the others wait (FIFO; the wait counts in their TTFT): "
        "capacity = N / (ttft + (tokens - 1) * tpot) requests/s; None: no limit",
    )
    parser.add_argument(
        "--max-records",
        type=int,
        default=1_000_000,
        help="keep at most this many request records (oldest dropped; GET /_bench/records?reset=1 clears them)",
    )
    parser.add_argument(
        "--owned-by",
        default="token-server",
        help="owned_by in /v1/models ('vllm' makes clients pick their vLLM request flavour)",
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="event loop: uvloop when importable (auto), or plain asyncio",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.tokens < 1 or args.ttft_ms < 0 or args.tpot_ms < 0:
        print("token_server: --tokens must be >= 1 and the times >= 0", file=sys.stderr)
        return 2
    if args.max_concurrency is not None and args.max_concurrency < 1:
        print("token_server: --max-concurrency must be >= 1", file=sys.stderr)
        return 2
    timing = Timing(args.ttft_ms, args.tpot_ms, args.tokens)
    capacity = timing.capacity_rps(args.max_concurrency)
    limit = (
        ""
        if args.max_concurrency is None
        else f", at most {args.max_concurrency} at once"
        + (f": capacity {capacity:.6g} req/s" if capacity is not None else "")
    )

    def ready(port: int) -> None:
        if args.port_file:
            with open(args.port_file, "w", encoding="utf-8") as handle:
                handle.write(f"{port}\n")
        print(
            f"token_server listening on http://{args.host}:{port} (ttft {args.ttft_ms} ms, "
            f"tpot {args.tpot_ms} ms, {args.tokens} tokens{limit}, {type(asyncio.get_running_loop()).__module__} loop)",
            flush=True,
        )

    loop = _new_loop(args.loop)
    try:
        loop.run_until_complete(_serve(args, ready))
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
