"""LoadGen log parsers: ``mlperf_log_detail.txt`` (``:::MLLOG {json}`` lines) and ``mlperf_log_summary.txt``.

Public API
----------
- :func:`parse_detail_text(text, path)` -> :class:`DetailLog`; :func:`parse_detail_file(path)` reads then parses
  (raises :class:`OSError` / :class:`UnicodeDecodeError`; the checker reads through :mod:`checker.safe_io` instead).
- :class:`DetailLog`:
  - ``value(key)`` the value of the **first** record with that key (as the official ``MLPerfLog``), None when absent;
    ``values(key)`` every value; ``line_of(key)`` the 1-based line of the first record; ``records(key)``;
    ``has(key)``; ``keys()``.
  - ``errors`` / ``warnings``: records with ``metadata.is_error`` / ``metadata.is_warning`` true;
    ``error_keys``: keys starting with ``error_``; ``num_errors()`` as the official parser (logged ``num_errors``
    when present, else the count of ``is_error`` records); ``logged_num_errors``.
  - ``problems``: :class:`ParseProblem` (line + message) for each malformed ``:::MLLOG`` line; never an exception.
  - typed accessors: ``result_validity``, ``effective_scenario``, ``effective(name)``, ``requested(name)``,
    ``seeds()``, ``loadgen_version``, ``early_stopping_met``, ``percentile_ns(kind, pct)``, ``int_value`` /
    ``float_value`` / ``bool_value`` / ``str_value``.
- :func:`parse_summary_text(text, path)` -> :class:`SummaryLog` (``key : value`` lines, first occurrence kept, with
  line numbers); :func:`parse_summary_file`.

Values are parsed lazily. LoadGen's own layout (every line one record, ``:::MLLOG {"key": "...`` ... ``}``) is
indexed with O(1) work per line: the key is sliced out and the ``is_error``/``is_warning`` flags are read from the
metadata at the end of the line; the JSON of a record is decoded only when its value is asked for. Any other
layout goes through a general per-line path that also reports structurally broken lines. So checking a whole results
repository stays fast (thousands of logs, some lines ~100 KB), with one known limit: a record whose JSON is broken
*inside* an otherwise well-formed line is reported (in ``problems``, value None) only when it is read; call
:meth:`DetailLog.validate_all` to decode every record, as the official parser does.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.safe_io import JsonProblem, parse_json

MLLOG_PREFIX = ":::MLLOG"
ENDPTS_PREFIX = ":::ENDPTS"

_KEY_RE = re.compile(r'\s*\{\s*"key"\s*:\s*"((?:[^"\\]|\\.)*)"')
_FAST_PREFIX = MLLOG_PREFIX + ' {"key": "'
_FLAG_TAIL = 400  # LoadGen writes the metadata (is_error / is_warning) at the end of each record
_IS_ERROR_TRUE = re.compile(r'"is_error"\s*:\s*true')
_IS_WARNING_TRUE = re.compile(r'"is_warning"\s*:\s*true')

PERCENTILE_KINDS = {
    # kind -> (prefix, suffix) of the LoadGen key
    "latency": ("result_", "_percentile_latency_ns"),
    "first_token": ("result_first_token_", "_percentile_latency_ns"),
    "time_per_output_token": ("result_time_per_output_token_", "_percentile_ns"),
}


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


@dataclass(frozen=True, slots=True)
class LoadgenSeeds:
    qsl_rng_seed: int | None
    sample_index_rng_seed: int | None
    schedule_rng_seed: int | None


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
    if isinstance(v, int | float):
        return bool(v)
    return None


def _as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            try:
                f = float(v.strip())
            except ValueError:
                return None
            return int(f) if f.is_integer() else None
    return None


def as_float(v: Any) -> float | None:
    """A logged value as a float: numbers, numeric strings ("NaN" too), booleans as 0/1; None otherwise."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:  # an integer beyond the float range: infinite for every check
            return math.copysign(math.inf, v)
    if isinstance(v, float):
        return v
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


class DetailLog:
    """A parsed ``mlperf_log_detail.txt`` (see the module docstring)."""

    __slots__ = (
        "_bad",
        "_error_lines",
        "_first",
        "_keys",
        "_linenos",
        "_multi",
        "_parsed",
        "_problems",
        "_raw",
        "_spans",
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
        self._text = text  # LoadGen's layout: record i is text[starts[i]:ends[i]] (no copy of the lines)
        self._spans: tuple[list[int], list[int]] | None = None
        self._linenos: list[int] | None = None  # None: record i is on line i + 1 (LoadGen's own layout)
        self._first: dict[str, int] = {}  # key -> index of its first record
        self._multi: dict[str, list[int]] | None = None  # key -> all its records, built on first need
        self._parsed: dict[int, MllogRecord] = {}
        self._bad: set[int] = set()
        self._problems: list[ParseProblem] = []
        self._error_lines: list[int] = []  # record indices
        self._warning_lines: list[int] = []
        stripped = text.lstrip()
        self.first_line_ok = stripped.startswith(MLLOG_PREFIX) or stripped.startswith(ENDPTS_PREFIX)
        if self._index_fast(text):
            self._raw = []
        else:
            self._text = ""
            self._index_slow(text.split("\n"))
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
        use the general path."""
        body_end = len(text) - 1 if text.endswith("\n") else len(text)  # one final newline ends the last line
        if body_end <= 0:
            return False
        find = text.find
        starts = [0]
        i = find("\n", 0, body_end)
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1, body_end)
        ends = [x - 1 for x in starts[1:]]
        ends.append(body_end)
        fast, nf = _FAST_PREFIX, len(_FAST_PREFIX)
        startswith = text.startswith
        keys: list[str] = []
        first: dict[str, int] = {}
        for idx, (s, e) in enumerate(zip(starts, ends, strict=True)):
            if not startswith(fast, s, e) or text[e - 1] != "}":
                self._error_lines.clear()
                self._warning_lines.clear()
                return False
            k_end = find('"', s + nf, e)
            key = text[s + nf : k_end]
            if k_end < 0 or key.endswith("\\"):
                self._error_lines.clear()
                self._warning_lines.clear()
                return False
            keys.append(key)
            if key not in first:
                first[key] = idx
            tail = text[max(s, e - _FLAG_TAIL) : e]
            self._flag(idx, tail if '"metadata"' in tail else text[s:e])
        self._keys, self._first, self._spans = keys, first, (starts, ends)
        return True

    def _record_text(self, idx: int) -> str:
        """Record ``idx`` without the ``:::MLLOG`` prefix."""
        if self._spans is None:
            return self._raw[idx][len(MLLOG_PREFIX) :]
        starts, ends = self._spans
        return self._text[starts[idx] + len(MLLOG_PREFIX) : ends[idx]]

    def _index_slow(self, lines: list[str]) -> None:
        keys, raws, linenos = self._keys, self._raw, []
        first: dict[str, int] = {}
        for lineno, raw in enumerate(lines, start=1):
            if not raw.startswith(MLLOG_PREFIX):
                continue
            raw = raw.removesuffix("\r")
            key: str | None = None
            km = _KEY_RE.match(raw, len(MLLOG_PREFIX))
            if km is not None:
                try:
                    key = json.loads('"' + km.group(1) + '"')
                except ValueError:
                    key = km.group(1)
            if key is None or not raw.rstrip().endswith("}"):
                self._problems.append(ParseProblem(lineno, _json_problem(raw[len(MLLOG_PREFIX) :])))
                continue
            idx = len(keys)
            keys.append(key)
            raws.append(raw)
            linenos.append(lineno)
            first.setdefault(key, idx)
            self._flag(idx, raw)
        self._linenos = linenos
        self._first = first

    def _line(self, idx: int) -> int:
        return idx + 1 if self._linenos is None else self._linenos[idx]

    def _occurrences(self, key: str) -> list[int]:
        if key not in self._first:
            return []
        if self._multi is None:
            multi: dict[str, list[int]] = {}
            for idx, k in enumerate(self._keys):
                multi.setdefault(k, []).append(idx)
            self._multi = multi
        return self._multi[key]

    # ---- low level -------------------------------------------------------------------------------------------
    def _parse(self, idx: int) -> MllogRecord | None:
        rec = self._parsed.get(idx)
        if rec is not None or idx in self._bad:
            return rec
        lineno = self._line(idx)
        try:
            obj = parse_json(self._record_text(idx))
        except JsonProblem as exc:  # malformed, nested too deeply, or a number too long to convert
            self._bad.add(idx)
            self._problems.append(ParseProblem(lineno, f"malformed :::MLLOG JSON: {exc.msg}"))
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
            self._bad.add(idx)
            self._problems.append(ParseProblem(lineno, ":::MLLOG payload is not a JSON object with a key"))
            return None
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        time_ms = obj.get("time_ms")
        src_line = meta.get("line_no")
        rec = MllogRecord(
            key=obj["key"],
            value=obj.get("value"),
            line=lineno,
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
        return sorted(self._problems, key=lambda p: p.line)

    def has(self, key: str) -> bool:
        return key in self._first

    def keys(self) -> list[str]:
        return list(dict.fromkeys(self._keys))

    def records(self, key: str) -> list[MllogRecord]:
        out = []
        for idx in self._occurrences(key):
            rec = self._parse(idx)
            if rec is not None:
                out.append(rec)
        return out

    def record(self, key: str) -> MllogRecord | None:
        """The first record with ``key`` (first well-formed one)."""
        first = self._first.get(key)
        if first is None:
            return None
        rec = self._parse(first)
        if rec is not None:
            return rec
        for idx in self._occurrences(key):
            rec = self._parse(idx)
            if rec is not None:
                return rec
        return None

    def value(self, key: str) -> Any:
        rec = self.record(key)
        return None if rec is None else rec.value

    def values(self, key: str) -> list[Any]:
        return [r.value for r in self.records(key)]

    def line_of(self, key: str) -> int | None:
        idx = self._first.get(key)
        return None if idx is None else self._line(idx)

    def count(self, key: str) -> int:
        return len(self._occurrences(key))

    def str_value(self, key: str) -> str | None:
        v = self.value(key)
        return None if v is None else str(v)

    def int_value(self, key: str) -> int | None:
        return _as_int(self.value(key))

    def float_value(self, key: str) -> float | None:
        return as_float(self.value(key))

    def bool_value(self, key: str) -> bool | None:
        return _as_bool(self.value(key))

    # ---- errors ---------------------------------------------------------------------------------------------
    @property
    def errors(self) -> list[MllogRecord]:
        out = []
        for idx in self._error_lines:
            rec = self._parse(idx)
            if rec is not None and rec.is_error:
                out.append(rec)
        return out

    @property
    def warnings(self) -> list[MllogRecord]:
        out = []
        for idx in self._warning_lines:
            rec = self._parse(idx)
            if rec is not None and rec.is_warning:
                out.append(rec)
        return out

    @property
    def error_keys(self) -> list[str]:
        return [k for k in self._first if k.startswith("error_")]

    @property
    def logged_num_errors(self) -> int | None:
        return self.int_value("num_errors")

    def num_errors(self) -> int:
        """As the official ``MLPerfLog.num_errors``: the logged ``num_errors`` if present, else ``is_error`` count."""
        logged = self.logged_num_errors
        return logged if logged is not None else len(self.errors)

    # ---- typed accessors ------------------------------------------------------------------------------------
    @property
    def result_validity(self) -> str | None:
        return self.str_value("result_validity")

    @property
    def effective_scenario(self) -> str | None:
        return self.str_value("effective_scenario")

    @property
    def effective_test_mode(self) -> str | None:
        return self.str_value("effective_test_mode")

    @property
    def loadgen_version(self) -> str | None:
        """The ``loadgen_version`` value, e.g. ``"5.0.25 @ 5232291860"``."""
        return self.str_value("loadgen_version")

    @property
    def loadgen_version_number(self) -> str | None:
        """Just the version number of ``loadgen_version`` (``"5.0.25"``)."""
        v = self.loadgen_version
        return v.split("@", 1)[0].strip() if v else None

    @property
    def early_stopping_met(self) -> bool | None:
        return self.bool_value("early_stopping_met")

    @property
    def sut_name(self) -> str | None:
        return self.str_value("sut_name")

    def effective(self, name: str) -> Any:
        return self.value("effective_" + name)

    def requested(self, name: str) -> Any:
        return self.value("requested_" + name)

    def seeds(self, prefix: str = "effective_") -> LoadgenSeeds:
        return LoadgenSeeds(
            qsl_rng_seed=self.int_value(prefix + "qsl_rng_seed"),
            sample_index_rng_seed=self.int_value(prefix + "sample_index_rng_seed"),
            schedule_rng_seed=self.int_value(prefix + "schedule_rng_seed"),
        )

    def percentile_ns(self, kind: str, pct: float) -> float | None:
        """E.g. ``percentile_ns("first_token", 99)`` reads ``result_first_token_99.00_percentile_latency_ns``."""
        prefix, suffix = PERCENTILE_KINDS[kind]
        return self.float_value(f"{prefix}{pct:.2f}{suffix}")


def _json_problem(body: str) -> str:
    try:
        obj = parse_json(body)
    except JsonProblem as exc:
        return f"malformed :::MLLOG JSON: {exc.msg}"
    if not isinstance(obj, dict):
        return ":::MLLOG payload is not a JSON object"
    return ':::MLLOG record has no leading "key" field'


def parse_detail_text(text: str, path: str | None = None) -> DetailLog:
    return DetailLog(path, text)


def parse_detail_file(path: Path) -> DetailLog:
    return DetailLog(str(path), path.read_text(encoding="utf-8"))


# ---- mlperf_log_summary.txt ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SummaryEntry:
    key: str
    value: str
    line: int


@dataclass(frozen=True)
class SummaryLog:
    """``key : value`` lines of ``mlperf_log_summary.txt``; first occurrence of a key wins."""

    path: str | None
    entries: dict[str, SummaryEntry] = field(default_factory=dict)
    all_entries: tuple[SummaryEntry, ...] = ()

    def value(self, key: str) -> str | None:
        e = self.entries.get(key)
        return None if e is None else e.value

    def line_of(self, key: str) -> int | None:
        e = self.entries.get(key)
        return None if e is None else e.line

    def float_value(self, key: str) -> float | None:
        return as_float(self.value(key))

    def int_value(self, key: str) -> int | None:
        return _as_int(self.value(key))

    @property
    def result_validity(self) -> str | None:
        """``Result is : VALID`` -> ``"VALID"``."""
        return self.value("Result is")

    @property
    def scenario(self) -> str | None:
        return self.value("Scenario")

    @property
    def mode(self) -> str | None:
        return self.value("Mode")


def parse_summary_text(text: str, path: str | None = None) -> SummaryLog:
    entries: dict[str, SummaryEntry] = {}
    all_entries: list[SummaryEntry] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        key, sep, value = raw.partition(":")
        key = key.strip()
        if not sep or not key or key.startswith(("=", "*")):
            continue
        e = SummaryEntry(key, value.strip(), lineno)
        all_entries.append(e)
        entries.setdefault(e.key, e)
    return SummaryLog(path, entries, tuple(all_entries))


def parse_summary_file(path: Path) -> SummaryLog:
    return parse_summary_text(path.read_text(encoding="utf-8"), str(path))
