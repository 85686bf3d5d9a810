"""An SSE event's JSON decodes as ``json.loads(data.decode())`` does: the same value, or the same error.

``sse_protocol._decode`` asks msgspec first and falls back to the json module where msgspec refuses; these
properties hold the two paths to ``json.loads`` on valid JSON of every shape, on the forms only the json module takes
(NaN, Infinity, 1e400, lone surrogates, integers of thousands of digits), on invalid UTF-8 and on byte-level damage.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen_sut.engines.sse_protocol import _decode


def _outcome(fn: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "value", _canonical(fn(data))
    except RecursionError:
        return "error", "RecursionError"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits: the caller's "not JSON"
        return "error", type(exc).__name__


def _canonical(v: Any) -> Any:
    """A comparable form that keeps what == loses: int vs float vs bool, NaN, -0.0, key order."""
    if isinstance(v, bool) or v is None:
        return (type(v).__name__, v)
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v.hex())
    if isinstance(v, int | str):
        return (type(v).__name__, v)
    if isinstance(v, list):
        return ("list", tuple(_canonical(x) for x in v))
    assert isinstance(v, dict)
    return ("dict", tuple((k, _canonical(x)) for k, x in v.items()))


def _reference(data: bytes) -> Any:
    return json.loads(data.decode())


def _assert_same(data: bytes) -> None:
    assert _outcome(_decode, data) == _outcome(_reference, data), data[:200]


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=20)  # surrogates too
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None)
@given(value=_values, ascii_only=st.booleans(), spaced=st.booleans(), pad=st.sampled_from(["", " ", "\n", "\r\n\t "]))
def test_any_json_the_json_module_writes(value: Any, ascii_only: bool, spaced: bool, pad: str) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":"))
    data = (pad + text + pad).encode("utf-8", "surrogatepass")  # a lone surrogate: bytes that are not UTF-8
    _assert_same(data)


@settings(max_examples=600, deadline=None)
@given(value=_values, cuts=st.lists(st.tuples(st.integers(0, 400), st.binary(max_size=3)), min_size=1, max_size=3))
def test_damaged_json(value: Any, cuts: list[tuple[int, bytes]]) -> None:
    data = bytearray(json.dumps(value).encode())
    for at, junk in cuts:
        at %= len(data) + 1
        data[at : at + len(junk) % 2] = junk  # replace a byte or insert
    _assert_same(bytes(data))


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=64))
def test_any_bytes(data: bytes) -> None:
    _assert_same(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"id":"cmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the"}}]}',
        b"NaN",
        b'{"x": Infinity, "y": -Infinity}',
        b"[1e400, -1e400, 1e-400]",
        b'"\\ud800"',
        b'{"a":"\xed\xa0\x80"}',  # a surrogate written as UTF-8: not UTF-8
        b"\xef\xbb\xbf{}",  # a BOM
        b"1" * 4300,
        b"1" * 4301,  # over the int digits limit
        b"[" * 5000 + b"]" * 5000,
        b'{"a":1,"a":2}',
        b'{"a":1} x',
        b"",
        b"-0",
        b"-0.0",
    ],
)
def test_the_forms_only_json_takes(data: bytes) -> None:
    _assert_same(data)
