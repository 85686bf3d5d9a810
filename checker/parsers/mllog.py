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

Values are parsed lazily: the key of every line is read at load time (a cheap prefix scan), the JSON of a line only
when its value is asked for. That keeps checking a whole results repository (thousands of logs whose
``loadgen_file_sha1`` line alone is ~100 KB) fast. A line whose JSON turns out malformed on access is reported in
``problems`` and its value reads as None.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MLLOG_PREFIX = ":::MLLOG"
ENDPTS_PREFIX = ":::ENDPTS"

_KEY_RE = re.compile(r'\s*\{\s*"key"\s*:\s*"((?:[^"\\]|\\.)*)"')
_FAST_PREFIX = MLLOG_PREFIX + ' {"key": "'
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


def _as_float(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return float(v)
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
        "_ends",
        "_error_lines",
        "_index",
        "_linenos",
        "_parsed",
        "_problems",
        "_starts",
        "_text",
        "_warning_lines",
        "first_line_ok",
        "path",
    )

    def __init__(self, path: str | None, text: str) -> None:
        self.path = path
        self._text = text
        self._starts: list[int] = []  # offset of each record's line (its ":::MLLOG" prefix)
        self._ends: list[int] = []  # offset just past the record's JSON
        self._linenos: list[int] = []  # 1-based line of each record
        self._parsed: dict[int, MllogRecord] = {}
        self._bad: set[int] = set()
        self._index: dict[str, list[int]] = {}
        self._problems: list[ParseProblem] = []
        self._error_lines: list[int] = []  # indices into _starts
        self._warning_lines: list[int] = []
        stripped = text.lstrip()
        self.first_line_ok = stripped.startswith(MLLOG_PREFIX) or stripped.startswith(ENDPTS_PREFIX)
        fast = _FAST_PREFIX
        nfast = len(fast)
        index = self._index
        starts, ends = self._starts, self._ends
        bad_offsets: list[int] = []
        find = text.find
        linenos = self._linenos
        line_starts = _line_starts(text)
        total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        every_line_is_a_record = len(line_starts) == total_lines  # LoadGen's own logs: line = position + 1
        line, prev, line_at_prev = 0, 0, 1
        count = text.count
        for s in line_starts:
            if every_line_is_a_record:
                line += 1
            else:
                line = line_at_prev + count("\n", prev, s)
                prev, line_at_prev = s, line
            e = find("\n", s)
            if e < 0:
                e = len(text)
            if text[e - 1 : e] == "\r":
                e -= 1
            key: str | None = None
            if text.startswith(fast, s):
                k_end = find('"', s + nfast, e)
                if k_end > 0 and find("\\", s + nfast, k_end) < 0:
                    key = text[s + nfast : k_end]
            if key is None:
                km = _KEY_RE.match(text, s + len(MLLOG_PREFIX), e)
                if km is not None:
                    try:
                        key = json.loads('"' + km.group(1) + '"')
                    except ValueError:
                        key = km.group(1)
            if key is None or (text[e - 1 : e] != "}" and not text[s:e].rstrip().endswith("}")):
                bad_offsets.append(s)
                continue
            idx = len(starts)
            starts.append(s)
            ends.append(e)
            linenos.append(line)
            got = index.get(key)
            if got is None:
                index[key] = [idx]
            else:
                got.append(idx)
        for s in bad_offsets:
            e = find("\n", s)
            body = text[s + len(MLLOG_PREFIX) : e if e >= 0 else len(text)]
            self._problems.append(ParseProblem(self._lineno(s), _json_problem(body)))
        # error / warning flags: one scan of the whole text, mapped back to records
        if starts:
            for name, bucket in (("is_error", self._error_lines), ("is_warning", self._warning_lines)):
                seen: set[int] = set()
                for pos in _flag_positions(text, name, len(starts) + len(bad_offsets)):
                    idx = bisect.bisect_right(starts, pos) - 1
                    if idx >= 0 and pos < ends[idx] and idx not in seen:
                        seen.add(idx)
                        bucket.append(idx)
                bucket.sort()
        # records flagged as error/warning are parsed now, so a malformed one is reported
        for idx in self._error_lines + self._warning_lines:
            self._parse(idx)

    def _lineno(self, offset: int) -> int:
        return self._text.count("\n", 0, offset) + 1

    # ---- low level -------------------------------------------------------------------------------------------
    def _parse(self, idx: int) -> MllogRecord | None:
        rec = self._parsed.get(idx)
        if rec is not None or idx in self._bad:
            return rec
        lineno = self._linenos[idx]
        try:
            obj = json.loads(self._text[self._starts[idx] + len(MLLOG_PREFIX) : self._ends[idx]])
        except ValueError as exc:
            self._bad.add(idx)
            self._problems.append(ParseProblem(lineno, f"malformed :::MLLOG JSON: {exc}"))
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
            time_ms=float(time_ms)
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
        for idx in range(len(self._starts)):
            self._parse(idx)
        return self.problems

    # ---- generic access -------------------------------------------------------------------------------------
    @property
    def problems(self) -> list[ParseProblem]:
        return sorted(self._problems, key=lambda p: p.line)

    def has(self, key: str) -> bool:
        return key in self._index

    def keys(self) -> list[str]:
        return list(self._index)

    def records(self, key: str) -> list[MllogRecord]:
        out = []
        for idx in self._index.get(key, ()):
            rec = self._parse(idx)
            if rec is not None:
                out.append(rec)
        return out

    def record(self, key: str) -> MllogRecord | None:
        """The first record with ``key`` (first well-formed one)."""
        for idx in self._index.get(key, ()):
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
        idxs = self._index.get(key)
        return self._linenos[idxs[0]] if idxs else None

    def count(self, key: str) -> int:
        return len(self._index.get(key, ()))

    def str_value(self, key: str) -> str | None:
        v = self.value(key)
        return None if v is None else str(v)

    def int_value(self, key: str) -> int | None:
        return _as_int(self.value(key))

    def float_value(self, key: str) -> float | None:
        return _as_float(self.value(key))

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
        return [k for k in self._index if k.startswith("error_")]

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


def _line_starts(text: str) -> list[int]:
    """Offsets of the lines that start with ``:::MLLOG`` (str.find loops: far faster than a MULTILINE regex)."""
    out = [0] if text.startswith(MLLOG_PREFIX) else []
    needle = "\n" + MLLOG_PREFIX
    pos = text.find(needle)
    while pos >= 0:
        out.append(pos + 1)
        pos = text.find(needle, pos + 1)
    return out


def _flag_positions(text: str, name: str, n_records: int) -> list[int]:
    """Offsets of ``"<name>": true`` (any spacing). LoadGen writes exactly one ``"<name>": true|false`` per record;
    when the counts say so, two C scans suffice, else a regex finds the other spellings."""
    out = []
    needle = f'"{name}": true'
    pos = text.find(needle)
    while pos >= 0:
        out.append(pos)
        pos = text.find(needle, pos + 1)
    if len(out) + text.count(f'"{name}": false') != n_records:
        rx = _IS_ERROR_TRUE if name == "is_error" else _IS_WARNING_TRUE
        out = sorted({m.start() for m in rx.finditer(text)} | set(out))
    return out


def _json_problem(body: str) -> str:
    try:
        obj = json.loads(body)
    except ValueError as exc:
        return f"malformed :::MLLOG JSON: {exc}"
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
        return _as_float(self.value(key))

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
