"""Read a results table into :class:`~checker.audit.table_model.ResultTable`.

Shapes:

- the official ``summary_results.json`` (a JSON list of objects with ``ID``, ``Performance_Result``, ...);
- the checker's summary CSV (header :data:`checker.results.SUMMARY_CSV_COLUMNS`);
- any other CSV or JSON list of objects: columns are matched to canonical fields by their canonical name, by an
  official column name, or by the user's ``--map FIELD=COLUMN,...`` (FIELD is a canonical field or an official
  column name).

Bad input raises :class:`~checker.findings.UnusableInput` naming the file (and line where known).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from checker.audit.table_model import CANONICAL_FIELDS, ResultTable, TableFormat, TableRow
from checker.findings import UnusableInput
from checker.results import SUMMARY_CSV_COLUMNS

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

# Checker summary CSV column -> canonical field
CHECKER_CSV_COLUMNS: dict[str, str] = {
    "Organization": "submitter",
    "Availability": "availability",
    "Division": "division",
    "SystemType": "suite",
    "SystemName": "system",
    "Platform": "platform",
    "Model": "used_model",
    "MlperfModel": "benchmark",
    "Scenario": "scenario",
    "Result": "result",
    "Accuracy": "accuracy",
    "number_of_nodes": "nodes",
    "accelerator_model_name": "accelerator",
    "accelerators_per_node": "accelerators_per_node",
    "Location": "location",
    "framework": "software",
    "notes": "notes",
    "version": "version",
    "inferred": "inferred",
    "has_power": "has_power",
    "Units": "units",
    "weight_data_types": "weight_data_types",
}
CHECKER_CSV_OTHER = tuple(c for c in SUMMARY_CSV_COLUMNS if c not in CHECKER_CSV_COLUMNS)

KNOWN_INFORMATIONAL = frozenset(OFFICIAL_JSON_OTHER) | frozenset(CHECKER_CSV_OTHER)

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
    """Read ``path`` (JSON or CSV, by content) into a :class:`ResultTable`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UnusableInput(f"cannot read the table: {exc.strerror or exc}", str(path)) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"not UTF-8 text (byte {exc.start})", str(path)) from exc
    if not text.strip():
        raise UnusableInput("the table is empty", str(path))
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{"):
        return _load_json(path, text, column_map or {})
    return _load_csv(path, text, column_map or {})


# ---- JSON ---------------------------------------------------------------------------------------------------
def _load_json(path: Path, text: str, column_map: dict[str, str]) -> ResultTable:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnusableInput(f"invalid JSON: {exc.msg}", str(path), exc.lineno) from exc
    if isinstance(data, dict):
        rows_obj = next((data[k] for k in ("rows", "results", "data") if isinstance(data.get(k), list)), None)
        if rows_obj is None:
            raise UnusableInput("JSON object without a 'rows' / 'results' list of result rows", str(path))
        data = rows_obj
    if not isinstance(data, list) or not data:
        raise UnusableInput("expected a non-empty JSON list of result rows", str(path))
    for i, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            raise UnusableInput(f"row {i} is not a JSON object", str(path))
    records: list[dict[str, Any]] = data
    keys: list[str] = []
    for rec in records:
        for k in rec:
            if k not in keys:
                keys.append(k)
    if not column_map and "Performance_Result" in keys and "ID" in keys:
        fmt, columns = (
            TableFormat.OFFICIAL_JSON,
            {v: k for k, v in OFFICIAL_JSON_COLUMNS.items() if k in keys},
        )
    else:
        fmt, columns = TableFormat.MAPPED, _match_columns(keys, column_map, path)
    lines = _json_row_lines(text, len(records))
    rows = tuple(
        _build_row(i, lines[i - 1] if lines else None, rec, columns) for i, rec in enumerate(records, start=1)
    )
    return ResultTable(path=str(path), format=fmt, columns=columns, rows=rows)


def _json_row_lines(text: str, count: int) -> list[int] | None:
    """Line of each top-level element of a pretty-printed JSON list (None when the layout is not recognised)."""
    lines = text.split("\n")
    starts = []
    indent: str | None = None
    for lineno, line in enumerate(lines, start=1):
        if line.strip() == "{" or line.strip().startswith("{"):
            lead = line[: len(line) - len(line.lstrip())]
            if indent is None and lineno > 1:
                indent = lead
            if lead == indent:
                starts.append(lineno)
    return starts if len(starts) == count else None


# ---- CSV ----------------------------------------------------------------------------------------------------
def _load_csv(path: Path, text: str, column_map: dict[str, str]) -> ResultTable:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
        delimiter = dialect.delimiter
    except csv.Error:
        delimiter = ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
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
    if not column_map and {"Organization", "MlperfModel", "Result", "Units"} <= set(header):
        fmt, columns = TableFormat.CHECKER_CSV, {v: k for k, v in CHECKER_CSV_COLUMNS.items() if k in header}
    else:
        fmt, columns = TableFormat.MAPPED, _match_columns(header, column_map, path)
    rows: list[TableRow] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise UnusableInput(f"{len(cells)} cells, header has {len(header)}", str(path), line)
            rows.append(_build_row(len(rows) + 1, line, dict(zip(header, cells, strict=True)), columns))
    except csv.Error as exc:
        raise UnusableInput(f"malformed CSV: {exc}", str(path), reader.line_num) from exc
    if not rows:
        raise UnusableInput("the table has a header but no rows", str(path))
    return ResultTable(path=str(path), format=fmt, columns=columns, rows=tuple(rows))


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


def _build_row(index: int, line: int | None, record: dict[str, Any], columns: dict[str, str]) -> TableRow:
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
        else:
            values[field] = text
    used = set(columns.values())
    extra = {k: str(v) for k, v in record.items() if k not in used and _text(v) is not None}
    return TableRow(row=index, line=line, extra=extra, problems=tuple(problems), **values)


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
