"""Read a results table into :class:`~checker.audit.table.model.ResultTable`.

Shapes:

- the official ``summary_results.json`` (a JSON list of objects with ``ID``, ``Performance_Result``, ...);
- the checker's summary CSV (header :data:`checker.results.SUMMARY_CSV_COLUMNS`);
- any other CSV or JSON list of objects: columns are matched to canonical fields by their canonical name, by an
  official column name, or by the user's ``--map FIELD=COLUMN,...`` (FIELD is a canonical field or an official
  column name).

Bad input raises :class:`~checker.findings.UnusableInput` naming the file (and line where known).

Memory: a CSV is streamed (a first pass checks that it is UTF-8 and reads the first characters the dialect is
sniffed from, a second parses it row by row), never held whole; cells that repeat across rows (submitters,
benchmarks, units, ...) are kept once; rows are built with ``TableRow.model_construct`` from the values typed
here, which are what validation would produce (no per-row copy of ``extra``, no per-row set of the fields
given). :func:`open_table` gives the rows one at a time, re-reading the file for each pass, so that
``inference-audit table`` holds no row it has checked; :func:`load_table` holds them all (the claim audit).
``bench/table_memory.py`` measures it.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from checker.audit.table.formats import CHECKER_HEAD_COLUMNS, FORMATS, detect_format
from checker.audit.table.model import CANONICAL_FIELDS, ResultTable, TableFormat, TableRow
from checker.findings import UnusableInput
from checker.results import SUMMARY_CSV_COLUMNS
from checker.safe_io import display_name, file_kind, read_input_bytes
from checker.safe_json import JsonProblem, parse_json

# Official summary_results.json column -> canonical field
OFFICIAL_JSON_COLUMNS: dict[str, str] = {
    "ID": "id",
    "Submitter": "submitter",
    "Availability": "availability",
    "Category": "division",
    "Suite": "suite",
    "System": "system",
    "Platform": "platform",
    "UsedModel": "used_model",
    "Model": "benchmark",
    "Scenario": "scenario",
    "Accuracy": "accuracy",
    "Nodes": "nodes",
    "Accelerator": "accelerator",
    "a#": "accelerators_per_node",
    "Location": "location",
    "Software": "software",
    "Notes": "notes",
    "version": "version",
    "inferred": "inferred",
    "has_power": "has_power",
    "weight_data_types": "weight_data_types",
    "Performance_Result": "result",
    "Performance_Units": "units",
    "Power_Result": "power_result",
    "Power_Units": "power_units",
}
# Official columns that are informational (kept in ``extra``, never flagged as derived)
OFFICIAL_JSON_OTHER = (
    "Processor",
    "host_processors_per_node",
    "host_processor_core_count",
    "operating_system",
    "compliance",
    "errors",
    "p#",
    "Details",
    "Code",
    "Unique ID (e.g. for Audit)",
    "ColorKey",
)

# Checker summary CSV column -> canonical field: the columns of the checker's summary, CSV or JSON export alike
CHECKER_CSV_COLUMNS = CHECKER_HEAD_COLUMNS
CHECKER_CSV_OTHER = tuple(c for c in SUMMARY_CSV_COLUMNS if c not in CHECKER_CSV_COLUMNS)

KNOWN_INFORMATIONAL = (
    frozenset(OFFICIAL_JSON_OTHER)
    | frozenset(CHECKER_CSV_OTHER)
    | frozenset(c for f in FORMATS for c in f.informational)
)

_FLOAT_FIELDS = ("result", "power_result")
_INT_FIELDS = ("nodes", "accelerators_per_node")
_BOOL_FIELDS = ("inferred", "has_power")


def parse_column_map(spec: str | None) -> dict[str, str]:
    """``"Result=Throughput,Model=bench"`` -> {canonical field: source column}."""
    if not spec:
        return {}
    out: dict[str, str] = {}
    aliases = {k.lower(): v for k, v in {**OFFICIAL_JSON_COLUMNS, **CHECKER_CSV_COLUMNS}.items()}
    for item in spec.split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise UnusableInput(f"--map: {item.strip()!r} is not FIELD=COLUMN")
        left, right = (s.strip() for s in item.split("=", 1))
        field = left if left in CANONICAL_FIELDS else aliases.get(left.lower())
        if field is None or not right:
            known = ", ".join(CANONICAL_FIELDS)
            raise UnusableInput(f"--map: unknown field {left!r} (canonical fields: {known})")
        out[field] = right
    return out


def load_table(path: Path, column_map: dict[str, str] | None = None) -> ResultTable:
    """Read ``path`` (JSON or CSV, by content) into a :class:`ResultTable`, every row held.

    ``inference-audit table`` streams the rows instead (:func:`open_table`); the claim audit, which looks rows up,
    holds them.
    """
    source = open_table(path, column_map)
    return source.header.model_copy(update={"rows": tuple(source.rows())})


class TableSource:
    """A table whose rows are read on demand, one at a time, as often as asked (a CSV is re-read from the file
    each time, streamed; JSON, parsed whole, is kept as its records).

    ``header`` is the :class:`ResultTable` without rows (path, format, columns). Input problems of the header raise
    :class:`~checker.findings.UnusableInput` when the table is opened, those of a row when it is reached.
    """

    def __init__(self, header: ResultTable, rows: Callable[[], Iterator[TableRow]]) -> None:
        self.header = header
        self._rows = rows

    @property
    def path(self) -> str:
        return self.header.path

    def rows(self) -> Iterator[TableRow]:
        return self._rows()


def open_table(path: Path, column_map: dict[str, str] | None = None) -> TableSource:
    """Open ``path`` (JSON or CSV, by content) as a :class:`TableSource`.

    A CSV is streamed (memory grows with neither the rows nor the file); JSON, which is parsed whole, is read with
    :func:`~checker.safe_io.read_input_bytes` (its size cap applies).
    """
    where = display_name(str(path))
    column_map = column_map or {}
    with _open_table(path, where) as fh:
        kind, sample = _scan(fh, where)
    if kind == "csv":
        def lines() -> contextlib.AbstractContextManager[IO[str]]:
            return _csv_file(path, where)

        return _csv_source(path, lines, sample, column_map)
    raw = read_input_bytes(path, what="table")  # a regular file, capped; a FIFO or /dev/zero is refused
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"not UTF-8 text (byte {exc.start})", where) from exc
    if not text.strip():
        raise UnusableInput("the table is empty", str(path))
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{"):
        return _json_source(path, text, column_map)
    return _csv_source(path, lambda: contextlib.nullcontext(io.StringIO(text)), text[:_SAMPLE], column_map)


@contextlib.contextmanager
def _csv_file(path: Path, where: str) -> Iterator[IO[str]]:
    """The CSV as text (lines as ``StringIO(text)`` splits them), decoding and read errors as UnusableInput."""
    with _open_table(path, where) as fh:
        text_fh = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="\n")
        try:
            yield text_fh
        except UnicodeDecodeError as exc:  # the file changed after the UTF-8 pass
            raise UnusableInput(f"not UTF-8 text ({exc.reason})", where) from exc
        except OSError as exc:
            raise UnusableInput(f"cannot read the table: {exc.strerror or exc}", where) from exc
        finally:
            text_fh.detach()


_SAMPLE = 4096  # characters the CSV dialect is sniffed from
_CHUNK = 1 << 20


def _open_table(path: Path, where: str) -> BinaryIO:
    """The table, opened for reading: a regular file (``O_NONBLOCK``, then ``fstat``: a FIFO, device or
    directory is refused without reading or blocking, as :func:`~checker.safe_io.read_input_bytes` does)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnusableInput("cannot read the table: no such file", where) from None
    except OSError as exc:
        raise UnusableInput(f"cannot read the table: {exc.strerror or exc}", where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnusableInput(
                f"cannot read the table: {file_kind(st.st_mode)}, not a regular file; not read", where
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _scan(fh: BinaryIO, where: str) -> tuple[str, str]:
    """("csv", its first :data:`_SAMPLE` characters) after checking, in one streamed pass, that the whole file is
    UTF-8 and not blank, raising as decoding it whole would (byte offsets after a BOM, as ``utf-8-sig``
    reports them); ("whole", "") when it starts as JSON, or when the first chunk already fails: the caller then
    reads it whole, exactly as before."""
    try:
        head = fh.read(3)
        offset = 0  # bytes decoded so far, after the BOM
        pending = head[3:] if head == codecs.BOM_UTF8 else head
        seen = False  # a non-whitespace character
        sample: list[str] = []
        sampled = 0
        while True:
            chunk = fh.read(_CHUNK)
            final = not chunk
            data = pending + chunk
            try:
                text, consumed = codecs.utf_8_decode(data, "strict", final)
            except UnicodeDecodeError as exc:
                if not seen:
                    return "whole", ""
                raise UnusableInput(f"not UTF-8 text (byte {offset + exc.start})", where) from exc
            offset += consumed
            pending = data[consumed:]
            if sampled < _SAMPLE:
                sample.append(text[: _SAMPLE - sampled])
                sampled += len(sample[-1])
            if not seen:
                stripped = text.lstrip()
                if stripped:
                    seen = True
                    if stripped[0] in "[{":
                        return "whole", ""
            if final:
                break
    except OSError as exc:
        raise UnusableInput(f"cannot read the table: {exc.strerror or exc}", where) from exc
    return ("csv", "".join(sample)) if seen else ("whole", "")


# ---- JSON ---------------------------------------------------------------------------------------------------
def _load_json(path: Path, text: str, column_map: dict[str, str]) -> ResultTable:
    source = _json_source(path, text, column_map)
    return source.header.model_copy(update={"rows": tuple(source.rows())})


def _json_source(path: Path, text: str, column_map: dict[str, str]) -> TableSource:
    try:
        data = parse_json(text)  # bounded: nesting depth, integers over 4,300 digits
    except JsonProblem as exc:
        raise UnusableInput(f"invalid JSON: {exc.msg}", display_name(str(path)), exc.lineno) from exc
    keyed = False
    if isinstance(data, dict):
        rows_obj = next((data[k] for k in ("rows", "results", "data") if isinstance(data.get(k), list)), None)
        if rows_obj is None and data and all(isinstance(v, dict) for v in data.values()):
            # the v6.1 summary.json: an object of row objects keyed "0", "1", ... (pandas to_json orient=index)
            keyed = True
            rows_obj = list(data.values())
        if rows_obj is None:
            raise UnusableInput(
                "JSON object that is neither a 'rows' / 'results' list of result rows nor an object of row "
                "objects keyed '0', '1', ...",
                str(path),
            )
        data = rows_obj
    if not isinstance(data, list) or not data:
        raise UnusableInput("expected a non-empty JSON list of result rows", str(path))
    if len(data) > MAX_TABLE_ROWS:
        raise UnusableInput(f"{len(data)} rows, more than {MAX_TABLE_ROWS}; not read", str(path))
    for i, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            raise UnusableInput(f"row {i} is not a JSON object", str(path))
    records: list[dict[str, Any]] = data
    seen: dict[str, None] = {}  # every column, in order of first appearance (linear in the cells)
    for rec in records:
        seen.update(dict.fromkeys(rec))
    keys = list(seen)
    spec = detect_format(keys)
    if not column_map and "Performance_Result" in keys and "ID" in keys:
        fmt, columns = (
            TableFormat.OFFICIAL_JSON,
            {v: k for k, v in OFFICIAL_JSON_COLUMNS.items() if k in keys},
        )
    elif not column_map and spec is not None:
        fmt, columns = TableFormat(spec.name), {v: k for k, v in spec.columns.items() if k in keys}
    else:
        fmt, columns = TableFormat.MAPPED, _match_columns(keys, column_map, path)
    lines = _json_row_lines(text, len(records), keyed)

    def rows() -> Iterator[TableRow]:
        builder = _RowBuilder(columns)
        for i, rec in enumerate(records, start=1):
            yield builder.build(i, lines[i - 1] if lines else None, rec)

    return TableSource(ResultTable(path=str(path), format=fmt, columns=columns, rows=()), rows)


_KEYED_START = re.compile(r'^\s*"[^"]*"\s*:\s*\{')


def _json_row_lines(text: str, count: int, keyed: bool = False) -> list[int] | None:
    """Line of each top-level element of a pretty-printed JSON list, or of each ``"0": {`` member of an object
    of rows (None when the layout is not recognised)."""
    lines = text.split("\n")
    starts = []
    indent: str | None = None
    for lineno, line in enumerate(lines, start=1):
        if (keyed and _KEYED_START.match(line)) or (
            not keyed and (line.strip() == "{" or line.strip().startswith("{"))
        ):
            lead = line[: len(line) - len(line.lstrip())]
            if indent is None and lineno > 1:
                indent = lead
            if lead == indent:
                starts.append(lineno)
    return starts if len(starts) == count else None


# ---- CSV ----------------------------------------------------------------------------------------------------
def _load_csv(
    path: Path, lines: Iterator[str] | IO[str], sample: str, column_map: dict[str, str]
) -> ResultTable:
    """The CSV read from ``lines`` (text held whole: a test helper), every row held."""
    text = lines.getvalue() if isinstance(lines, io.StringIO) else "".join(lines)
    source = _csv_source(path, lambda: contextlib.nullcontext(io.StringIO(text)), sample, column_map)
    return source.header.model_copy(update={"rows": tuple(source.rows())})


MAX_TABLE_ROWS = 1_000_000  # a round's table has a few thousand rows
MAX_CSV_LINE_CHARS = 1 << 20  # a row of a results table is a few hundred characters; a cell at most 128 KiB (csv)


def _capped_lines(lines: Iterator[str] | IO[str], path: Path) -> Iterator[str]:
    """The lines of ``lines``, each read with at most :data:`MAX_CSV_LINE_CHARS` characters held: a longer line
    (a file of one 10 GB line) is refused with its line number instead of being read whole."""
    readline = getattr(lines, "readline", None)
    if readline is None:
        yield from lines
        return
    number = 0
    while True:
        line = readline(MAX_CSV_LINE_CHARS)
        if not line:
            return
        number += 1
        if len(line) >= MAX_CSV_LINE_CHARS and not line.endswith("\n"):
            raise UnusableInput(f"a line longer than {MAX_CSV_LINE_CHARS} characters", str(path), number)
        yield line


def _csv_source(
    path: Path,
    open_lines: Callable[[], contextlib.AbstractContextManager[Iterator[str] | IO[str]]],
    sample: str,
    column_map: dict[str, str],
) -> TableSource:
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
        delimiter = dialect.delimiter
    except csv.Error:
        delimiter = ","
    with open_lines() as lines:
        header = _csv_header(csv.reader(_capped_lines(lines, path), delimiter=delimiter), path)
    if not column_map and {"Organization", "MlperfModel", "Result", "Units"} <= set(header):
        fmt, columns = TableFormat.CHECKER_CSV, {v: k for k, v in CHECKER_CSV_COLUMNS.items() if k in header}
    else:
        fmt, columns = TableFormat.MAPPED, _match_columns(header, column_map, path)

    def rows() -> Iterator[TableRow]:
        with open_lines() as lines:
            reader = csv.reader(_capped_lines(lines, path), delimiter=delimiter)
            if _csv_header(reader, path) != header:
                raise UnusableInput("the table changed while it was read (its header differs)", str(path), 1)
            builder = _RowBuilder(columns)
            once = builder.once
            count = 0
            try:
                for cells in reader:
                    line = reader.line_num
                    if not any(c.strip() for c in cells):
                        continue
                    if len(cells) != len(header):
                        raise UnusableInput(f"{len(cells)} cells, header has {len(header)}", str(path), line)
                    count += 1
                    if count > MAX_TABLE_ROWS:
                        raise UnusableInput(f"more than {MAX_TABLE_ROWS} rows; not read further", str(path), line)
                    yield builder.build(count, line, dict(zip(header, [once(c) for c in cells], strict=True)))
            except csv.Error as exc:
                raise UnusableInput(f"malformed CSV: {exc}", str(path), reader.line_num) from exc
        if not count:
            raise UnusableInput("the table has a header but no rows", str(path))

    return TableSource(ResultTable(path=str(path), format=fmt, columns=columns, rows=()), rows)


def _csv_header(reader: Any, path: Path) -> list[str]:
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise UnusableInput(f"no CSV header: {exc}", str(path), 1) from exc
    header = [h.strip() for h in header]
    if len(header) < 2:
        raise UnusableInput("not a CSV table (one column, or not CSV / JSON at all)", str(path), 1)
    dupes = {h for h in header if header.count(h) > 1 and h}
    if dupes:
        raise UnusableInput(f"duplicate column names: {', '.join(sorted(dupes))}", str(path), 1)
    return header


# ---- shared -------------------------------------------------------------------------------------------------
def _match_columns(keys: list[str], column_map: dict[str, str], path: Path) -> dict[str, str]:
    """Canonical field -> source column: --map first, then canonical names, then official names."""
    columns: dict[str, str] = {}
    lower = {k.lower(): k for k in keys}
    for field, col in column_map.items():
        if col not in keys:
            raise UnusableInput(
                f"--map {field}={col}: no column {col!r} (columns: {', '.join(keys)})", str(path)
            )
        columns[field] = col
    taken = set(columns.values())
    for field in CANONICAL_FIELDS:
        if field in columns:
            continue
        for candidate in (
            field,
            *[k for k, v in OFFICIAL_JSON_COLUMNS.items() if v == field],
            *[k for k, v in CHECKER_CSV_COLUMNS.items() if v == field],
        ):
            found = lower.get(candidate.lower())
            if found is not None and found not in taken:
                columns[field] = found
                taken.add(found)
                break
    missing = [f for f in ("benchmark", "scenario", "result") if f not in columns]
    if missing:
        raise UnusableInput(
            f"no column for {', '.join(missing)} (columns: {', '.join(keys)}); name them with --map, "
            f"e.g. --map result=Throughput,benchmark=Model",
            str(path),
        )
    return columns


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    s = str(value).strip()
    return s or None


_INT_RE = re.compile(r"^[+-]?\d+(\.0*)?$")
# a count written as "not applicable": the system description's text, which the v4.1 checker copies into its summary
# CSV with str() (CHK_v4.1 log_result); published for CPU-only systems (closed/Quanta_Cloud_Technology, v4.1)
_NOT_APPLICABLE = frozenset({"N/A", "NA"})


_CACHE_LIMIT = 200_000  # distinct cells / extras kept once; beyond that, new values are not looked up


class _RowBuilder:
    """Builds the rows of one table, keeping each repeated cell and ``extra`` mapping once."""

    def __init__(self, columns: dict[str, str]) -> None:
        self.columns = columns
        self._cells: dict[str, str] = {}
        self._extras: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self._fields_sets: dict[tuple[str, ...], set[str]] = {}

    def once(self, cell: str) -> str:
        kept = self._cells.get(cell)
        if kept is not None:
            return kept
        if len(self._cells) < _CACHE_LIMIT:
            self._cells[cell] = cell
        return cell

    def build(self, index: int, line: int | None, record: dict[str, Any]) -> TableRow:
        values = _row_values(index, line, record, self.columns)
        extra: dict[str, str] = values["extra"]
        if extra:
            key = tuple(extra.items())
            shared = self._extras.get(key)
            if shared is not None:
                values["extra"] = shared
            elif len(self._extras) < _CACHE_LIMIT:
                self._extras[key] = extra
        names = tuple(values)
        fields_set = self._fields_sets.get(names)
        if fields_set is None:
            fields_set = self._fields_sets[names] = set(names)
        # The values are typed above exactly as validation would type them; the model is frozen, so rows may
        # share one ``extra`` mapping and one set of the fields given.
        return TableRow.model_construct(fields_set, **values)


def _build_row(index: int, line: int | None, record: dict[str, Any], columns: dict[str, str]) -> TableRow:
    """One row, validated (the reference the memory-lean :class:`_RowBuilder` must agree with)."""
    return TableRow(**_row_values(index, line, record, columns))


def _row_values(
    index: int, line: int | None, record: dict[str, Any], columns: dict[str, str]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field, col in columns.items():
        raw = record.get(col)
        text = _text(raw)
        if text is None:
            continue
        if field in _FLOAT_FIELDS:
            num = raw if isinstance(raw, int | float) and not isinstance(raw, bool) else _to_float(text)
            if num is None or not math.isfinite(float(num)):
                problems.append(f"column {col!r}: {text!r} is not a number")
                continue
            values[field] = float(num)
            if field == "result":
                values["result_text"] = text
        elif field in _INT_FIELDS:
            if text.upper() in _NOT_APPLICABLE:
                continue  # a CPU-only system's accelerators_per_node, as the v4.1 checker copies it: no count
            if not _INT_RE.match(text):
                problems.append(f"column {col!r}: {text!r} is not an integer")
                continue
            values[field] = int(float(text))
        elif field in _BOOL_FIELDS:
            b = _to_bool(raw)
            if b is None:
                problems.append(f"column {col!r}: {text!r} is not a boolean (true/false/1/0)")
                continue
            values[field] = b
        elif field == "location":
            loc = normalize_location(text)
            values[field] = loc
            if loc != text:
                values["location_text"] = text
        else:
            values[field] = text
    used = set(columns.values())
    extra = {k: str(v) for k, v in record.items() if k not in used and _text(v) is not None}
    return {"row": index, "line": line, "extra": extra, "problems": tuple(problems), **values}


_RUN_SUFFIX = re.compile(r"/performance(/run_\d+)?/?$")


def normalize_location(text: str) -> str:
    """``./closed/AMD/results/S/b/Offline/performance/run_1`` (the HEAD checker writes the directory of the
    performance log) -> ``closed/AMD/results/S/b/Offline`` (the result directory)."""
    loc = text.strip()
    while loc.startswith("./"):
        loc = loc[2:]
    return _RUN_SUFFIX.sub("", loc.rstrip("/"))


def _to_float(text: str) -> float | None:
    try:
        return float(text.replace(",", "")) if text.count(".") <= 1 else None
    except ValueError:
        return None


def _to_bool(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float):
        return bool(raw) if raw in (0, 1) else None
    low = str(raw).strip().lower()
    if low in ("true", "1", "yes", "y"):
        return True
    if low in ("false", "0", "no", "n"):
        return False
    return None
