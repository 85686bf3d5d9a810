"""LoadGen log parsers: ``mlperf_log_detail.txt`` (``:::MLLOG {json}`` lines) and ``mlperf_log_summary.txt``.

Public API
----------
- :func:`parse_detail_text(text, path)` -> :class:`DetailLog`; :func:`parse_detail_file(path)` reads then parses
  (a regular file under the read cap, UTF-8, else :class:`~checker.findings.UnusableInput` naming it; the checker
  reads through :mod:`checker.safe_io` instead).
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

Values are parsed lazily (the record index, :mod:`checker.parsers.mllog_index`; how a value reads as a number,
:mod:`checker.parsers.mllog_values`). LoadGen's own layout (every line one record, ``:::MLLOG {"key": "...`` ... ``}``) is
indexed with O(1) work per line: the key is sliced out and the ``is_error``/``is_warning`` flags are read from the
metadata at the end of the line; the JSON of a record is decoded only when its value is asked for. Any other
layout goes through a general per-line path that also reports structurally broken lines. So checking a whole results
repository stays fast (thousands of logs, some lines ~100 KB), with one known limit: a record whose JSON is broken
*inside* an otherwise well-formed line is reported (in ``problems``, value None) only when it is read; call
:meth:`DetailLog.validate_all` to decode every record, as the official parser does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.findings import UnusableInput
from checker.parsers.mllog_index import LOADGEN_INT_RECORD, MllogRecord, RecordIndex
from checker.parsers.mllog_values import as_bool, as_float, as_int
from checker.safe_io import display_name, read_input_bytes

PERCENTILE_KINDS = {
    # kind -> (prefix, suffix) of the LoadGen key
    "latency": ("result_", "_percentile_latency_ns"),
    "first_token": ("result_first_token_", "_percentile_latency_ns"),
    "time_per_output_token": ("result_time_per_output_token_", "_percentile_ns"),
}


@dataclass(frozen=True, slots=True)
class LoadgenSeeds:
    qsl_rng_seed: int | None
    sample_index_rng_seed: int | None
    schedule_rng_seed: int | None


class DetailLog(RecordIndex):
    """A parsed ``mlperf_log_detail.txt`` (see the module docstring)."""

    __slots__ = ()

    def has(self, key: str) -> bool:
        return key in self._first

    def keys(self) -> list[str]:
        return list(self._first)  # first occurrences, in file order

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
        """The value of the first well-formed record with ``key`` (as ``record(key).value``, without building the
        record)."""
        first = self._first.get(key)
        if first is None:
            return None
        obj = self._objs.get(first)
        if obj is None:
            obj = self._obj(first)
        if obj is not None:
            return obj.get("value")
        for idx in self._occurrences(key):
            obj = self._obj(idx)
            if obj is not None:
                return obj.get("value")
        return None

    def values(self, key: str) -> list[Any]:
        return [r.value for r in self.records(key)]

    def int_values(self, key: str) -> list[int | None]:
        """The value of every well-formed record with ``key``, as an integer (None where it is not one), in file
        order. A record in LoadGen's own form with an integer value is read without decoding its JSON
        (:data:`LOADGEN_INT_RECORD` accepts exactly such records, which ``json.loads`` reads to the same value): an
        accuracy run of a large data set logs one generated_query_count / generated_samples_per_query pair per
        loaded set (a retinanet run: 388 of each)."""
        out: list[int | None] = []
        for idx in self._occurrences(key):
            obj = self._objs.get(idx)
            if obj is None and idx not in self._bad:
                s, start, end = self._span(idx)
                m = LOADGEN_INT_RECORD.fullmatch(s, start, end)
                if m is not None and m.group(1) == key:
                    out.append(int(m.group(2)))
                    continue
                obj = self._obj(idx)
            if obj is not None:
                out.append(as_int(obj.get("value")))
        return out

    def line_of(self, key: str) -> int | None:
        idx = self._first.get(key)
        return None if idx is None else self._line(idx)

    # ---- the run-log interface the rules judge both result formats through (EndpointsDetailLog overrides) ---
    def document(self, key: str | None, default: str) -> str:
        """The file holding ``key``'s value: the log itself (``default``, its tree path)."""
        return default

    def label(self, key: str) -> str:
        """``key`` as a message names it."""
        return key

    def carries(self, key: str) -> bool:
        """Whether the run's format records ``key`` at all (LoadGen logs every setting; a format without the
        setting is exempt from the rule that reads it, as the official checker exempts it)."""
        return True

    def count(self, key: str) -> int:
        return len(self._occurrences(key))

    def str_value(self, key: str) -> str | None:
        v = self.value(key)
        return None if v is None else str(v)

    def int_value(self, key: str) -> int | None:
        return as_int(self.value(key))

    def float_value(self, key: str) -> float | None:
        return as_float(self.value(key))

    def bool_value(self, key: str) -> bool | None:
        return as_bool(self.value(key))

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
    def loadgen_release(self) -> tuple[int, ...] | None:
        """The version number as integers (``"5.0.25"`` -> ``(5, 0, 25)``), for comparing releases; None when the
        number is missing or not dotted digits."""
        parts = (self.loadgen_version_number or "").split(".")
        if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
            return None
        return tuple(int(p) for p in parts)

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


def parse_detail_text(text: str, path: str | None = None) -> DetailLog:
    return DetailLog(path, text)


def parse_detail_file(path: Path) -> DetailLog:
    """Read a log the user named (a run's, for ``package``, ``verify``, ``sweep``): a regular file under the read
    cap (:func:`checker.safe_io.read_input_bytes`), UTF-8; :class:`UnusableInput` naming the file otherwise."""
    data = read_input_bytes(path, what="LoadGen detail log")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnusableInput(f"not UTF-8 text (byte {exc.start})", display_name(str(path)), line) from None
    return DetailLog(str(path), text)


# ---- mlperf_log_summary.txt ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SummaryEntry:
    key: str
    value: str
    line: int


@dataclass(frozen=True)
class SummaryLog:
    """``key : value`` lines of ``mlperf_log_summary.txt``; first occurrence of a key wins.

    Kept as plain tuples (a summary has ~80 such lines and the checks read a few); :attr:`entries` and
    :attr:`all_entries` give them as :class:`SummaryEntry` records."""

    path: str | None
    rows: tuple[
        tuple[str, str, int], ...
    ] = ()  # (key, value, line) of every ``key : value`` line, in file order
    first: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line) of its first line

    @property
    def entries(self) -> dict[str, SummaryEntry]:
        """The first line of each key, in file order."""
        return {k: SummaryEntry(k, v, line) for k, (v, line) in self.first.items()}

    @property
    def all_entries(self) -> tuple[SummaryEntry, ...]:
        return tuple(SummaryEntry(k, v, line) for k, v, line in self.rows)

    def value(self, key: str) -> str | None:
        e = self.first.get(key)
        return None if e is None else e[0]

    def line_of(self, key: str) -> int | None:
        e = self.first.get(key)
        return None if e is None else e[1]

    def float_value(self, key: str) -> float | None:
        return as_float(self.value(key))

    def int_value(self, key: str) -> int | None:
        return as_int(self.value(key))

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
    rows: list[tuple[str, str, int]] = []
    first: dict[str, tuple[str, int]] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        key, sep, value = raw.partition(":")
        if not sep:
            continue
        key = key.strip()
        if not key or key[0] in "=*":  # a ==== rule or a * note line
            continue
        value = value.strip()
        rows.append((key, value, lineno))
        if key not in first:
            first[key] = (value, lineno)
    return SummaryLog(path, tuple(rows), first)


def parse_summary_file(path: Path) -> SummaryLog:
    return parse_summary_text(path.read_text(encoding="utf-8"), str(path))
