"""The framer's fast path (a chunk that is one whole ``data:`` event, handed on inline) frames exactly what its
general path does: for any body (events with ``data:`` or ``data: ``, LF or CRLF line ends, several data lines,
comments and other fields, an event cut by the body's end) cut into any HTTP chunks and delivered in any reads,
the events handed on are those of a plain reference reading of the de-chunked body (below), in order; and the
response cap fails the request exactly when the body is over it."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadgen_sut.engines.base import ErrorKind
from loadgen_sut.engines.http_connection import Connection

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


class _Transport:
    def write(self, data: bytes) -> None:
        return None

    def is_closing(self) -> bool:
        return False

    def abort(self) -> None:
        return None


class _Sink:
    """The request and its event sink: records what the framer hands on."""

    def __init__(self) -> None:
        self.events: list[bytes] = []
        self.failures: list[tuple[ErrorKind, str]] = []
        self.completed = False
        self.got_bytes = False
        self.got_head = False
        self.last_rx = 0.0
        self.conn: Any = None

    def fail(self, kind: ErrorKind, message: str) -> None:
        self.failures.append((kind, message))
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.req = None
            conn.abort()

    def on_head(self, status: int, reason: str, content_length: int | None) -> _Sink:
        return self

    def on_whole_body(self, status: int, reason: str, body: bytes, complete: bool) -> None:
        raise AssertionError("a 200 stream is not read whole")

    def on_event(self, data: bytes) -> bool:
        self.events.append(data)
        return True

    def body_complete(self) -> None:
        self.completed = True


def reference_events(body: bytes) -> list[bytes]:
    """The events of a de-chunked SSE body as the framer defines them: lines end at LF (a CR before it is
    dropped), ``data:`` lines (one space after the colon dropped) gather until a blank line, other lines carry
    nothing, and data lines left at the body's end make one last event."""
    events: list[bytes] = []
    data: list[bytes] = []
    lines = body.split(b"\n")
    tail = lines.pop()  # after the last LF: a line the body's end cuts
    for raw in lines:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line:
            if data:
                events.append(b"\n".join(data))
                data = []
        elif line.startswith(b"data:"):
            v = line[5:]
            data.append(v[1:] if v.startswith(b" ") else v)
    tail = tail.rstrip(b"\r")
    if tail.startswith(b"data:"):
        v = tail[5:]
        data.append(v[1:] if v.startswith(b" ") else v)
    if data:
        events.append(b"\n".join(data))
    return events


_text = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b""))
_line = st.one_of(
    st.tuples(st.sampled_from([b"data:", b"data: "]), _text).map(b"".join),
    st.sampled_from([b": keep-alive", b"event: message", b"id: 7", b"retry: 10", b""]),
)
_ending = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """SSE bodies: mostly one-line events (the fast path's case), some of several lines or other fields."""
    out = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.booleans()):
            out.append(b"data: " + draw(_text) + b"\n\n")
            continue
        for line in draw(st.lists(_line, min_size=1, max_size=4)):
            out.append(line + draw(_ending))
        out.append(draw(_ending))
    if draw(st.booleans()):  # an event the body's end cuts (no blank line after it)
        out.append(b"data: " + draw(_text) + draw(st.sampled_from([b"", b"\n", b"\r"])))
    return b"".join(out)


def _cuts(draw: st.DrawFn, n: int) -> list[int]:
    return sorted(set(draw(st.lists(st.integers(0, n), max_size=12))) | {0, n})


@st.composite
def deliveries(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A body, its bytes cut into HTTP chunks (anywhere: often one event a chunk), the wire cut into reads."""
    body = draw(bodies())
    if draw(st.booleans()):  # one chunk per event, as engines send them
        pieces = [p + b"\n\n" for p in body.split(b"\n\n")[:-1]]
        rest = body[sum(len(p) for p in pieces) :]
        pieces += [rest] if rest else []
    else:
        cuts = _cuts(draw, len(body))
        pieces = [body[a:b] for a, b in itertools.pairwise(cuts) if b > a]
    wire = HEAD + b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"
    cuts = _cuts(draw, len(wire))
    return body, [wire[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def _frame(reads: list[bytes], max_response_bytes: int = 1 << 20) -> _Sink:
    conn = Connection([], lambda: 0.0, max_response_bytes=max_response_bytes)
    conn.connection_made(_Transport())  # type: ignore[arg-type]
    sink = _Sink()
    conn.start(sink, b"")
    for data in reads:
        if conn.req is None:
            break
        conn.data_received(data)
    return sink


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deliveries())
def test_any_chunking_and_reads_give_the_reference_events(delivery: tuple[bytes, list[bytes]]) -> None:
    body, reads = delivery
    sink = _frame(reads)
    assert sink.failures == []
    assert sink.events == reference_events(body)
    assert sink.completed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deliveries(), st.integers(0, 400))
def test_the_response_cap_fails_exactly_the_bodies_over_it(delivery: tuple[bytes, list[bytes]], cap: int) -> None:
    body, reads = delivery
    sink = _frame(reads, max_response_bytes=cap)
    if len(body) > cap:
        assert [k for k, _ in sink.failures] == [ErrorKind.TOO_LARGE]
        assert not sink.completed
        assert sink.events == reference_events(body)[: len(sink.events)]
    else:
        assert sink.failures == [] and sink.completed
        assert sink.events == reference_events(body)
