"""The wire between the LoadGen process and its HTTP client workers (``loadgen_sut.client_workers``).

One ``AF_UNIX`` stream socket per worker (a ``socketpair``; the kernel closes the worker's end when it dies, so a dead
worker is an end of file, never a silent hang). Frames: a 5-byte head ``<IB`` (body length, kind) and a body.

LoadGen process -> worker:

- ``SAMPLES``: ``n`` x ``<QI`` (the LoadGen process's sequence number of the sample, its QSL index): start them;
- ``BEGIN`` / ``END``: the test starts (probes installed, CPU snapshot) / ended (snapshot, then a ``REPORT`` back);
- ``CANCEL``: fail every outstanding sample and every later one at once (the test's deadline; the run ended).

Worker -> LoadGen process:

- ``READY``: JSON (``ok``; else ``status`` and ``error``) once the engine started (or could not);
- ``FIRST``: ``<Qq`` (sequence, first-token time) + the first token's response bytes, already converted;
- ``DONE``: ``<QqqqqBI`` (sequence, dispatched, first-token and completion times, token count, flags, response
  length) + the response bytes + for a failed sample ``kind\\0message\\0endpoint`` (UTF-8);
- ``REPORT``: JSON (the worker's engine info and client diagnostics), after ``END``.

Times are ``time.perf_counter_ns`` of the worker: on Linux ``CLOCK_MONOTONIC``, one clock for every process of the
machine, so the LoadGen process subtracts them from its own issue times without conversion.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from pydantic import BaseModel, ConfigDict

HEAD = struct.Struct("<IB")
SAMPLE = struct.Struct("<QI")
FIRST = struct.Struct("<Qq")
DONE = struct.Struct("<QqqqqBI")

# kinds, LoadGen process -> worker
SAMPLES = 1
BEGIN = 2
END = 3
CANCEL = 4
# kinds, worker -> LoadGen process
READY = 10
FIRST_TOKEN = 11
COMPLETE = 12
REPORT = 13

# DONE flags
OK = 1
RETOKENIZED = 2
FT_SENT = 4  # the worker handed over a first token (a FIRST frame came before)

MAX_FRAME_BYTES = (256 << 20) + (1 << 16)
"""A frame's body at most: one streamed response's cap (``http_connection.MAX_RESPONSE_BYTES``) and its head."""


class WorkerConfig(BaseModel):
    """What one worker is told on its command line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec_path: str  # the test's TestSpec JSON
    worker: int
    endpoints: tuple[str, ...]  # this worker's share of the engine's endpoints
    max_concurrency: int  # this worker's share of --max-concurrency
    report_first_token: bool
    start_timeout_s: float


def frame(kind: int, body: bytes = b"") -> bytes:
    return HEAD.pack(len(body), kind) + body


def json_frame(kind: int, obj: dict[str, Any]) -> bytes:
    return frame(kind, json.dumps(obj, separators=(",", ":")).encode())


def first_frame(seq: int, ft_ns: int, data: bytes) -> bytes:
    return HEAD.pack(FIRST.size + len(data), FIRST_TOKEN) + FIRST.pack(seq, ft_ns) + data


def done_frame(
    seq: int,
    dispatched_ns: int,
    ft_ns: int,
    completed_ns: int,
    n_tokens: int,
    flags: int,
    data: bytes,
    failure: tuple[str, str, str | None] | None,
) -> bytes:
    tail = b"" if failure is None else f"{failure[0]}\0{failure[1]}\0{failure[2] or ''}".encode("utf-8", "replace")
    body_len = DONE.size + len(data) + len(tail)
    return (
        HEAD.pack(body_len, COMPLETE)
        + DONE.pack(seq, dispatched_ns, ft_ns, completed_ns, n_tokens, flags, len(data))
        + data
        + tail
    )


def parse_failure(tail: bytes) -> tuple[str, str, str | None]:
    kind, _, rest = tail.decode("utf-8", "replace").partition("\0")
    message, _, endpoint = rest.partition("\0")
    return kind, message, endpoint or None
