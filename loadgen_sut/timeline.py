"""The per-sample timeline of one LoadGen test, as the SUT saw it: ``sut_timeline.jsonl`` beside LoadGen's logs.

One JSON object per line, one line per issued sample, in completion order. Times are integer nanoseconds on the
SUT process's monotonic clock (``time.perf_counter_ns``) measured from ``t0_ns``, the first line's header::

    {"timeline": 1, "t0_ns": 123456789, "clock": "perf_counter_ns"}
    {"qsl_idx": 7, "issued_ns": 1200, "dispatched_ns": 1900, "first_token_ns": 51000000, "completed_ns": 90000000,
     "output_tokens": 17, "ok": true}

- ``issued_ns``: LoadGen's issue callback handed the sample over (the scheduled issue, as near as the SUT sees it);
- ``dispatched_ns``: the request was handed to the socket (None where the engine has no socket: in-process engines);
- ``first_token_ns`` / ``completed_ns``: the first token / the completion reached the SUT (None when it never did);
- ``output_tokens``: tokens reported to LoadGen for the sample (None for a failed sample);
- ``ok``: completed normally (False: failed, expired at the deadline, or a bad output).

"Not measured" is ``None``, never 0. Readers refuse a malformed file with the line named.

The SUT records into :class:`TimelineColumns` (one ``array('q')`` per field: 49 bytes a sample, no object per
sample once it completed; a 270,000-sample Server run holds about 13 MB) and writes the file once the test ended.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from checker.findings import UnusableInput
from checker.report.atomic import atomic_file
from checker.safe_json import parse_json

TIMELINE_FILE = "sut_timeline.jsonl"
TIMELINE_VERSION: Literal[1] = 1
_MAX_LINE_BYTES = 4096


class TimelineHeader(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    timeline: Literal[1] = TIMELINE_VERSION
    t0_ns: int  # perf_counter_ns of the SUT process at the start of the test
    clock: Literal["perf_counter_ns"] = "perf_counter_ns"


class SampleTiming(BaseModel):
    """One issued sample: nanoseconds since ``t0_ns``; None where not measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qsl_idx: int
    issued_ns: int
    dispatched_ns: int | None = None
    first_token_ns: int | None = None
    completed_ns: int | None = None
    output_tokens: int | None = None
    ok: bool

    @property
    def ttft_ns(self) -> int | None:
        """Issue to first token, as the SUT saw it."""
        return None if self.first_token_ns is None else self.first_token_ns - self.issued_ns

    @property
    def tpot_ns(self) -> float | None:
        """Mean time per output token after the first (None for one-token or failed outputs)."""
        if self.first_token_ns is None or self.completed_ns is None or self.output_tokens is None:
            return None
        if self.output_tokens < 2:
            return None
        return (self.completed_ns - self.first_token_ns) / (self.output_tokens - 1)

    @property
    def dispatch_lag_ns(self) -> int | None:
        """Issue to request on the socket: the client's own delay."""
        return None if self.dispatched_ns is None else self.dispatched_ns - self.issued_ns


class Timeline(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    header: TimelineHeader
    samples: tuple[SampleTiming, ...]


NOT_MEASURED = -1
"""The columns' marker for None (every time is >= 0 since t0 and every count >= 0, so -1 is never a value)."""


class TimelineColumns:
    """The per-sample timeline as it is recorded: absolute ``perf_counter_ns`` times, ``NOT_MEASURED`` for None.

    :meth:`append` is called once per sample on the SUT's loop thread (seven array appends, ~0.3 us).
    """

    __slots__ = ("completed", "dispatched", "first_token", "issued", "ok", "output_tokens", "qsl_idx")

    def __init__(self) -> None:
        self.qsl_idx = array("q")
        self.issued = array("q")
        self.dispatched = array("q")
        self.first_token = array("q")
        self.completed = array("q")
        self.output_tokens = array("q")
        self.ok = array("b")

    def __len__(self) -> int:
        return len(self.qsl_idx)

    def append(
        self, qsl_idx: int, issued: int, dispatched: int, first_token: int, completed: int, output_tokens: int, ok: bool
    ) -> None:
        self.qsl_idx.append(qsl_idx)
        self.issued.append(issued)
        self.dispatched.append(dispatched)
        self.first_token.append(first_token)
        self.completed.append(completed)
        self.output_tokens.append(output_tokens)
        self.ok.append(ok)

    def lines(self, t0_ns: int) -> Iterator[str]:
        """The file's sample lines (times made relative to ``t0_ns``); the same JSON a :class:`SampleTiming` reads."""

        def rel(v: int) -> str:
            return "null" if v == NOT_MEASURED else str(v - t0_ns)

        for i in range(len(self.qsl_idx)):
            n = self.output_tokens[i]
            yield (
                f'{{"qsl_idx":{self.qsl_idx[i]},"issued_ns":{self.issued[i] - t0_ns},'
                f'"dispatched_ns":{rel(self.dispatched[i])},"first_token_ns":{rel(self.first_token[i])},'
                f'"completed_ns":{rel(self.completed[i])},"output_tokens":{"null" if n == NOT_MEASURED else n},'
                f'"ok":{"true" if self.ok[i] else "false"}}}\n'
            )

    def samples(self, t0_ns: int) -> Iterator[SampleTiming]:
        for line in self.lines(t0_ns):
            yield SampleTiming.model_validate_json(line)

    def write(self, path: Path, t0_ns: int) -> None:
        """Write ``sut_timeline.jsonl`` (via a temporary beside it, then rename)."""
        with atomic_file(path) as fh:
            fh.write((TimelineHeader(t0_ns=t0_ns).model_dump_json() + "\n").encode("utf-8"))
            fh.writelines(line.encode("utf-8") for line in self.lines(t0_ns))


def timeline_lines(header: TimelineHeader, samples: Iterable[SampleTiming]) -> Iterator[str]:
    yield header.model_dump_json() + "\n"
    for s in samples:
        yield s.model_dump_json() + "\n"


def write_timeline(path: Path, header: TimelineHeader, samples: Iterable[SampleTiming]) -> None:
    """Write the file (via a temporary beside it, then rename: a reader never sees half a file)."""
    with atomic_file(path) as fh:
        fh.writelines(line.encode("utf-8") for line in timeline_lines(header, samples))


def parse_timeline(text_lines: Sequence[bytes], where: str) -> Timeline:
    if not text_lines:
        raise UnusableInput("empty timeline file", where)
    header: TimelineHeader | None = None
    samples: list[SampleTiming] = []
    for number, raw in enumerate(text_lines, start=1):
        if len(raw) > _MAX_LINE_BYTES:
            raise UnusableInput(f"line longer than {_MAX_LINE_BYTES} bytes", where, number)
        if not raw.strip():
            continue
        try:
            obj = parse_json(raw.decode("utf-8"))
            if header is None:
                header = TimelineHeader.model_validate(obj)
            else:
                samples.append(SampleTiming.model_validate(obj))
        except (UnicodeDecodeError, ValueError, ValidationError) as exc:
            detail = str(exc).splitlines()[0][:200]
            raise UnusableInput(f"not a timeline {'header' if header is None else 'sample'}: {detail}", where, number) from None
    if header is None:
        raise UnusableInput("no timeline header line", where)
    return Timeline(header=header, samples=tuple(samples))


def read_timeline(path: Path) -> Timeline:
    """Read ``sut_timeline.jsonl``; a missing, unreadable or malformed file is an UnusableInput naming it."""
    try:
        with path.open("rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise UnusableInput(f"cannot read the timeline: {exc.strerror or exc}", str(path)) from exc
    return parse_timeline(lines, str(path))
