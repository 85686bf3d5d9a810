"""The checker's fast paths read exactly what the general parsers read (speed on whole rounds, issue 20)."""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.checks.power import POWER_TIME_FORMAT, _parse_time
from checker.parsers.mllog import parse_detail_text
from checker.parsers.mllog_values import as_int

KEY = "generated_query_count"


def _record(value: str, time_ms: str = "1808.626066", tail: str = "") -> str:
    return (
        f':::MLLOG {{"key": "{KEY}", "value": {value}, "time_ms": {time_ms}, "namespace": "mlperf::logging", '
        '"event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, "file": "loadgen.cc", '
        f'"line_no": 427, "pid": 54407, "tid": 54407}}}}{tail}'
    )


def _decoded(line: str) -> object:
    """What the general decoder reads for a record line: its value, or the problem it reports."""
    log = parse_detail_text(line + "\n", "x")
    return [r.value for r in log.records(KEY)], [p.message[:20] for p in log.problems]


@settings(max_examples=400, deadline=None)
@given(
    value=st.one_of(
        st.integers(-(10**20), 10**20).map(str),
        st.sampled_from(["01", "-0", "1.5", "1e3", "true", '"7"', "null", "[1]", "0x10", " 5"]),
    ),
    time_ms=st.sampled_from(["1808.626066", "0", "007", "1.", "12.5e3"]),
    tail=st.sampled_from(["", " ", "\r", " x", "}"]),
)
def test_int_values_read_as_the_decoder_reads(value: str, time_ms: str, tail: str) -> None:
    line = _record(value, time_ms, tail)
    fast = parse_detail_text(line + "\n", "x").int_values(KEY)
    values, _problems = _decoded(line)  # type: ignore[misc]
    want = [as_int(v) for v in values]  # DetailLog.int_value's reading of a value
    assert fast == want, line
    if values:
        json.loads(line[len(":::MLLOG") :])  # a record the fast path read is one json.loads reads


@settings(max_examples=2000, deadline=None)
@given(
    st.tuples(
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 9999),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 62),
        st.text("0123456789", min_size=0, max_size=7),
    ).map(lambda t: f"{t[0]:02d}-{t[1]:02d}-{t[2]:04d} {t[3]:02d}:{t[4]:02d}:{t[5]:02d}.{t[6]}")
    | st.text(max_size=30)
)
def test_power_times_read_as_strptime_reads(text: str) -> None:
    try:
        want: dt.datetime | None = dt.datetime.strptime(text, POWER_TIME_FORMAT)
    except ValueError:
        want = None
    assert _parse_time(text) == want
