"""The record index of a LoadGen ``mlperf_log_detail.txt`` (``:::MLLOG {json}`` lines): each record's key and
error/warning flags found with O(1) work per line, its JSON decoded only when its value is read, and the malformed
lines reported (never an exception). :class:`checker.parsers.mllog.DetailLog` adds what LoadGen's keys mean.

LoadGen's own layout (every line one record, ``:::MLLOG {"key": "...`` ... ``}``) is indexed without splitting the
text: the key is sliced out and the ``is_error``/``is_warning`` flags are read from the metadata at the end of the
line. Any other layout goes through a general per-line path that also reports structurally broken lines. A record
whose JSON is broken *inside* an otherwise well-formed line is reported (in ``problems``, value None) only when it
is read; :meth:`RecordIndex.validate_all` decodes every record, as the official parser does.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import count
from typing import Any

from checker.parsers.mllog_values import as_float
from checker.safe_json import MAX_JSON_DEPTH, MAX_NUMBER_DIGITS, JsonProblem, parse_json

MLLOG_PREFIX = ":::MLLOG"
ENDPTS_PREFIX = ":::ENDPTS"

MAX_PROBLEMS = 10  # malformed lines listed per log; the rest are counted in one more problem
_KEY_RE = re.compile(r'\s*\{\s*"key"\s*:\s*"((?:[^"\\]|\\.)*)"')
_FAST_PREFIX = MLLOG_PREFIX + ' {"key": "'
_FLAG_TAIL = 400  # LoadGen writes the metadata (is_error / is_warning) at the end of each record
_IS_ERROR_TRUE = re.compile(r'"is_error"\s*:\s*true')
_IS_WARNING_TRUE = re.compile(r'"is_warning"\s*:\s*true')
# what LoadGen writes in every record's metadata: a line whose tail holds it is neither an error nor a warning
_CLEAN_FLAGS = '"is_error": false, "is_warning": false'


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """A line that could not be parsed (1-based line number)."""

    line: int
    message: str


@dataclass(frozen=True, slots=True)
class MllogRecord:
    """One parsed ``:::MLLOG`` record."""

    key: str
    value: Any
    line: int
    time_ms: float | None = None
    event_type: str | None = None
    is_error: bool = False
    is_warning: bool = False
    source_file: str | None = None  # metadata.file (LoadGen source), when logged
    source_line: int | None = None  # metadata.line_no


class RecordIndex:
    """The records of an ``mlperf_log_detail.txt`` text, indexed by key, each decoded on first read (the reading
    half of :class:`checker.parsers.mllog.DetailLog`; see the module docstring)."""

    __slots__ = (
        "_bad",
        "_ends",
        "_error_lines",
        "_first",
        "_keys",
        "_linenos",
        "_more",
        "_multi",
        "_objs",
        "_parsed",
        "_problems",
        "_raw",
        "_text",
        "_warning_lines",
        "first_line_ok",
        "path",
    )

    def __init__(self, path: str | None, text: str) -> None:
        self.path = path
        self._keys: list[str] = []  # key of each record, in file order
        self._raw: list[
            str
        ] = []  # general path: line of each record (prefix included); JSON parsed on demand
        self._text = (
            text  # LoadGen's layout: record i is text[ends[i - 1] + 1 : ends[i]] (no copy of the lines)
        )
        self._ends: list[int] | None = (
            None  # LoadGen's layout: where each record's line ends (None: general path)
        )
        self._linenos: list[int] | None = None  # None: record i is on line i + 1 (LoadGen's own layout)
        self._first: dict[str, int] = {}  # key -> index of its first record
        self._multi: dict[str, list[int]] | None = None  # key -> all its records, built on first need
        self._objs: dict[int, dict[str, Any]] = {}  # decoded JSON of the well-formed records read so far
        self._parsed: dict[int, MllogRecord] = {}
        self._bad: set[int] = set()
        self._problems: list[ParseProblem] = []  # at most MAX_PROBLEMS
        self._more: list[int] = []  # (count, first line) of the malformed lines beyond MAX_PROBLEMS
        self._error_lines: list[int] = []  # record indices
        self._warning_lines: list[int] = []
        stripped = text.lstrip()
        self.first_line_ok = stripped.startswith(MLLOG_PREFIX) or stripped.startswith(ENDPTS_PREFIX)
        if self._index_fast(text):
            self._raw = []
        else:
            self._text = ""
            self._index_slow(text)
        # records flagged as error/warning are parsed now, so a malformed one is reported
        for idx in self._error_lines + self._warning_lines:
            self._parse(idx)

    def _flag(self, idx: int, line: str) -> None:
        tail = line[-_FLAG_TAIL:]
        if '"metadata"' not in tail:
            tail = line  # unusual layout: look at the whole line
        if '"is_error": false' not in tail and ('"is_error": true' in tail or _IS_ERROR_TRUE.search(tail)):
            self._error_lines.append(idx)
        if '"is_warning": false' not in tail and (
            '"is_warning": true' in tail or _IS_WARNING_TRUE.search(tail)
        ):
            self._warning_lines.append(idx)

    def _index_fast(self, text: str) -> bool:
        """LoadGen's layout: every line one record starting ``:::MLLOG {"key": "`` and ending ``}``; the key is
        sliced out without a parse, and lines are kept as offsets into ``text`` (no split). False (nothing kept):
        use the general path.

        One pass, O(1) Python operations per line: the newline is found with ``str.find`` (memchr), and a line
        whose last :data:`_FLAG_TAIL` characters hold LoadGen's ``"is_error": false, "is_warning": false`` is
        neither an error nor a warning (:meth:`_flag` would find both ``false`` in its tail); every other line goes
        through :meth:`_flag`."""
        body_end = len(text) - 1 if text.endswith("\n") else len(text)  # one final newline ends the last line
        if body_end <= 0:
            return False
        find, rfind = text.find, text.rfind
        startswith = text.startswith
        fast, nf = _FAST_PREFIX, len(_FAST_PREFIX)
        clean, tail_n = _CLEAN_FLAGS, _FLAG_TAIL
        keys: list[str] = []
        ends: list[int] = []
        unclean: list[int] = []
        s = 0
        while True:
            e = find("\n", s, body_end)
            if e < 0:
                e = body_end
            if not startswith(fast, s, e) or text[e - 1] != "}":
                return False
            k_end = find('"', s + nf, e)
            if k_end < 0:
                return False
            if rfind(clean, e - tail_n if e - tail_n > s else s, e) < 0:  # from the end: the metadata is last
                unclean.append(len(keys))
            keys.append(text[s + nf : k_end])
            ends.append(e)
            if e == body_end:
                break
            s = e + 1
        first: dict[str, int] = {}
        deque(map(first.setdefault, keys, count()), maxlen=0)  # key -> its first index, in file order
        if "\\" in "".join(first) and any(key.endswith("\\") for key in first):  # an escaped quote in a key
            return False
        self._keys, self._first, self._ends = keys, first, ends
        for idx in unclean:
            s = ends[idx - 1] + 1 if idx else 0
            e = ends[idx]
            tail = text[max(s, e - _FLAG_TAIL) : e]
            self._flag(idx, tail if '"metadata"' in tail else text[s:e])
        return True

    def _index_slow(self, text: str) -> None:
        keys, raws, linenos = self._keys, self._raw, []
        first: dict[str, int] = {}
        find, startswith = text.find, text.startswith
        lineno, s, n = 0, 0, len(text)
        while s <= n:  # line by line without splitting the text (a log of 30 million empty lines is 30 MB)
            e = find("\n", s)
            if e < 0:
                e = n
            lineno += 1
            if not startswith(MLLOG_PREFIX, s, e):
                s = e + 1
                continue
            raw = text[s:e].removesuffix("\r")
            s = e + 1
            key: str | None = None
            km = _KEY_RE.match(raw, len(MLLOG_PREFIX))
            if km is not None:
                try:
                    key = json.loads('"' + km.group(1) + '"')
                except ValueError:
                    key = km.group(1)
            if key is None or not raw.rstrip().endswith("}"):
                self._problem(lineno, partial(_json_problem, raw[len(MLLOG_PREFIX) :]))
                continue
            idx = len(keys)
            keys.append(key)
            raws.append(raw)
            linenos.append(lineno)
            first.setdefault(key, idx)
            self._flag(idx, raw)
        self._linenos = linenos
        self._first = first

    def _problem(self, line: int, message: str | Callable[[], str]) -> None:
        """Record a malformed line; beyond :data:`MAX_PROBLEMS` only counted (a message given as a function is not
        even built)."""
        if len(self._problems) < MAX_PROBLEMS:
            self._problems.append(ParseProblem(line, message if isinstance(message, str) else message()))
        elif self._more:
            self._more[0] += 1
            self._more[1] = min(self._more[1], line)
        else:
            self._more = [1, line]

    def _line(self, idx: int) -> int:
        return idx + 1 if self._linenos is None else self._linenos[idx]

    def _occurrences(self, key: str) -> list[int]:
        first = self._first.get(key)
        if first is None:
            return []
        if self._multi is None:
            # the usual cases: no key repeats, or this one does not (no index of every key needed)
            if len(self._first) == len(self._keys) or self._keys.count(key) == 1:
                return [first]
            multi: dict[str, list[int]] = {}
            for idx, k in enumerate(self._keys):
                multi.setdefault(k, []).append(idx)
            self._multi = multi
        return self._multi[key]

    # ---- low level -------------------------------------------------------------------------------------------
    def _obj(self, idx: int) -> dict[str, Any] | None:
        """The decoded JSON object of record ``idx``; None (and a problem, once) when it is malformed."""
        obj = self._objs.get(idx)
        if obj is not None or idx in self._bad:
            return obj
        s, start, end = self._span(idx)
        try:
            got = _decode_record(s, start, end)
        except JsonProblem as exc:  # malformed, nested too deeply, or a number too long to convert
            self._bad.add(idx)
            self._problem(self._line(idx), f"malformed :::MLLOG JSON: {exc.msg}")
            return None
        if not isinstance(got, dict) or not isinstance(got.get("key"), str):
            self._bad.add(idx)
            self._problem(self._line(idx), ":::MLLOG payload is not a JSON object with a key")
            return None
        self._objs[idx] = got
        return got

    def _span(self, idx: int) -> tuple[str, int, int]:
        """Record ``idx``'s JSON text: (the string holding it, start, end), without copying it out."""
        ends = self._ends  # the record's span in the text (this runs for every value read)
        if ends is None:
            s = self._raw[idx]
            return s, len(MLLOG_PREFIX), len(s)
        return self._text, (ends[idx - 1] + 1 if idx else 0) + len(MLLOG_PREFIX), ends[idx]

    def _parse(self, idx: int) -> MllogRecord | None:
        rec = self._parsed.get(idx)
        if rec is not None:
            return rec
        obj = self._obj(idx)
        if obj is None:
            return None
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        time_ms = obj.get("time_ms")
        src_line = meta.get("line_no")
        rec = MllogRecord(
            key=obj["key"],
            value=obj.get("value"),
            line=self._line(idx),
            time_ms=as_float(time_ms)
            if isinstance(time_ms, int | float) and not isinstance(time_ms, bool)
            else None,
            event_type=obj.get("event_type") if isinstance(obj.get("event_type"), str) else None,
            is_error=meta.get("is_error") is True,
            is_warning=meta.get("is_warning") is True,
            source_file=meta.get("file") if isinstance(meta.get("file"), str) else None,
            source_line=src_line if isinstance(src_line, int) and not isinstance(src_line, bool) else None,
        )
        self._parsed[idx] = rec
        return rec

    def validate_all(self) -> list[ParseProblem]:
        """Parse every line (slow on big logs); returns all problems."""
        for idx in range(len(self._keys)):
            self._parse(idx)
        return self.problems

    # ---- generic access -------------------------------------------------------------------------------------
    @property
    def problems(self) -> list[ParseProblem]:
        """The malformed lines, by line: the first :data:`MAX_PROBLEMS` found, then (when there are more) one
        problem at the first line not listed saying how many more there are."""
        out = sorted(self._problems, key=lambda p: p.line)
        if self._more:
            more, line = self._more
            out.append(
                ParseProblem(
                    line, f"… and {more:,} more malformed line{'s' if more != 1 else ''} (not listed)"
                )
            )
        return out


# the C scanner of a decoder with json.loads' own settings (strict strings; NaN / Infinity accepted; a key given
# twice keeps its last value, as the official parser's json.loads does): no hook, which would cost a third more per
# record; a number too long for parse_json is refused after the decode, from the record's value (below)
_SCAN: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009
_MAX_INT = 10**MAX_NUMBER_DIGITS  # an integer this large has more digits than parse_json accepts


def _too_long(value: list[Any] | dict[str, Any]) -> bool:
    """True when a list or object value holds an integer of more than :data:`MAX_NUMBER_DIGITS` digits."""
    stack: list[Any] = [value]
    while stack:
        c = stack.pop()
        for x in c.values() if isinstance(c, dict) else c:
            if type(x) is int and not -_MAX_INT < x < _MAX_INT:
                return True
            if isinstance(x, list | dict):
                stack.append(x)
    return False


_JSON_WS = re.compile(r"[ \t\n\r]*")  # the whitespace json.loads skips around a document
# a record exactly as LoadGen writes an integer POINT_IN_TIME value: valid JSON by construction (JSON's number and
# string grammar, no repeated key), a number of at most 18 digits (within every bound parse_json applies)
_JSON_UINT = r"(?:0|[1-9]\d{0,%d})"  # a JSON unsigned integer of at most 1 + N digits
LOADGEN_INT_RECORD = re.compile(
    r' ?\{"key": "([A-Za-z0-9_.]+)", "value": (-?'
    + _JSON_UINT % 17
    + r'), "time_ms": '
    + _JSON_UINT % 14
    + r"(?:\.\d{1,9})?, "
    r'"namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": \{"is_error": (?:false|true), '
    r'"is_warning": (?:false|true), "file": "[^"\\\x00-\x1f]*", "line_no": '
    + _JSON_UINT % 8
    + r', "pid": '
    + _JSON_UINT % 9
    + r', "tid": '
    + _JSON_UINT % 19
    + r"\}\}[ \t\r]*"
)


def _decode_record(s: str, start: int, end: int) -> Any:
    """``parse_json(s[start:end])`` without copying the record out of the log: the C scanner of ``json.loads``
    decodes it in place; anything it does not accept exactly as ``json.loads`` would (an error, trailing text, a
    bracket count that calls for the depth check) goes through :func:`parse_json` on the slice, which gives the
    same value or raises the same :class:`JsonProblem`."""
    # LoadGen's ":::MLLOG {": one space, then the object; else what json.loads skips (always matches, maybe empty)
    ws = _JSON_WS.match
    pos = start + 1 if s.startswith(" {", start, end) else ws(s, start, end).end()  # type: ignore[union-attr]
    try:
        obj, stop = _SCAN(s, pos)
    except Exception:  # every failure is reported by parse_json below, exactly as json.loads reports it
        return parse_json(s[start:end], repeated_keys=True)
    if stop != end and (stop > end or ws(s, stop, end).end() != end):  # type: ignore[union-attr]
        return parse_json(
            s[start:end], repeated_keys=True
        )  # text after the document (or it ran past the record)
    if s.count("[", start, end) + s.count("{", start, end) > MAX_JSON_DEPTH:
        return parse_json(s[start:end], repeated_keys=True)  # parse_json's depth check
    v: Any = (
        obj.get("value") if type(obj) is dict else None
    )  # a float, a string or a small integer: nothing to do
    kind = type(v)  # (type tests only: this runs for every record read)
    if (kind is int and not -_MAX_INT < v < _MAX_INT) or ((kind is list or kind is dict) and _too_long(v)):
        return parse_json(s[start:end], repeated_keys=True)  # parse_json's refusal of the long number
    return obj


def _json_problem(body: str) -> str:
    try:
        obj = parse_json(body)
    except JsonProblem as exc:
        return f"malformed :::MLLOG JSON: {exc.msg}"
    if not isinstance(obj, dict):
        return ":::MLLOG payload is not a JSON object"
    return ':::MLLOG record has no leading "key" field'
