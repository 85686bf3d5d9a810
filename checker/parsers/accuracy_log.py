"""Parse LoadGen's ``mlperf_log_accuracy.json`` into typed entries.

LoadGen writes a JSON list with one object per line::

    [
    { "seq_id" : 0, "qsl_idx" : 5, "data" : "0A000000...", "token_data" : "0A000000", "token_count" : 4 },
    ...
    ]

``data`` is the uppercase hex of the response bytes the SUT passed to ``QuerySamplesComplete``;
``token_count`` (the ``n_tokens`` the SUT reported) is present when ``use_token_latencies`` is on;
``token_data`` (the bytes passed to ``FirstTokenComplete``) is present with tokens in non-Offline
scenarios. The reference SUTs write token ids as little-endian integers (int32 for most; the
llama2-70b HF Offline SUT writes int64), so decoding takes a :class:`TokenDtype`; the qwen3-vl reference SUT
writes the UTF-8 bytes of the answer's text instead (``AccuracyEntry.text``; ``Benchmark.accuracy_log_format``).

Submitted trees carry the truncated form that ``tools/submission/truncate_accuracy_log.py`` writes:
the first 4096 characters, ``"\\n\\n...\\n\\n"``, then the last 4096 characters, with the SHA-256 of
the original file appended to ``accuracy.txt`` as ``hash=<hex>``. :func:`parse_accuracy_log`
recognises that form and returns the entries that are fully visible in the two windows, with
``truncated=True``.

Bad input raises :class:`checker.findings.UnusableInput` naming the file, line and entry index.
The parser reads line by line (genuine logs can be hundreds of MB) and falls back to a whole-file
JSON parse, under a size cap, only for files that are not laid out one entry per line. The file is
opened once (``O_NONBLOCK``, then ``fstat``: a FIFO or device is refused, never read) and hashed and
parsed from that one descriptor; JSON goes through :func:`checker.safe_json.parse_json` (bounded depth,
long integers refused).
"""

from __future__ import annotations

import array
import hashlib
import io
import math
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from checker.safe_io import display_name, file_kind
from checker.safe_json import JsonProblem, parse_json

ACCURACY_LOG_NAME = "mlperf_log_accuracy.json"

# truncate_accuracy_log.py: VIEWABLE_SIZE and the separator it writes between head and tail.
TRUNCATE_VIEWABLE_CHARS = 4096
TRUNCATE_SEPARATOR = "\n\n...\n\n"
# The same separator after a CRLF conversion (git autocrlf, a Windows editor or archiver).
TRUNCATE_SEPARATOR_CRLF = TRUNCATE_SEPARATOR.replace("\n", "\r\n")
# The ``hash=`` line that truncate_accuracy_log.py appends to accuracy.txt (its own regex).
HASH_LINE_RE = re.compile(r"^hash=([\w\d]+)$")

# A whole-file JSON parse (only for logs not laid out one entry per line) is refused above this.
DEFAULT_MAX_JSON_BYTES = 1 << 30

_HEX_RE = re.compile(r"\A(?:[0-9A-Fa-f]{2})*\Z")
_ENTRY_KEYS = {"seq_id", "qsl_idx", "data", "token_count", "token_data"}
_REQUIRED_KEYS = ("seq_id", "qsl_idx", "data")
# A complete entry object on one line, as LoadGen writes it (used to pick entries out of the
# windows of a truncated log).
_ENTRY_LINE_RE = re.compile(r"^\s*(\{.*\})\s*,?\s*$")


class TokenDtype(str, Enum):
    """Element type of the response bytes (the ``--dtype`` of the official accuracy scripts)."""

    INT64 = "int64"
    INT32 = "int32"
    INT16 = "int16"
    FLOAT32 = "float32"

    @property
    def array_code(self) -> str:
        """The :mod:`array` type code of this element type (sizes checked at import)."""
        return _ARRAY_CODES[self.value]

    @property
    def itemsize(self) -> int:
        return _ITEM_SIZES[self.value]


# Little-endian element types of the official scripts' ``np.frombuffer`` (decoded here with :mod:`array`, so the
# checker does not import numpy at start-up).
_ITEM_SIZES = {"int64": 8, "int32": 4, "int16": 2, "float32": 4}
_ARRAY_CODES = {"int64": "q", "int32": "i", "int16": "h", "float32": "f"}
assert all(array.array(c).itemsize == _ITEM_SIZES[k] for k, c in _ARRAY_CODES.items())


class TokenDecodeError(ValueError):
    """The bytes are not a whole number of ``dtype`` items (or not integral for float32)."""


def decode_token_ids(data: bytes, dtype: TokenDtype = TokenDtype.INT32) -> tuple[int, ...]:
    """Decode response bytes into token ids, as ``np.frombuffer(bytes, dtype)`` does in the official scripts."""
    if len(data) % dtype.itemsize:
        raise TokenDecodeError(
            f"{len(data)} bytes is not a multiple of {dtype.value} ({dtype.itemsize} bytes)"
        )
    arr = array.array(dtype.array_code)
    arr.frombytes(data)
    if sys.byteorder != "little":
        arr.byteswap()
    if dtype is TokenDtype.FLOAT32:
        if not all(math.isfinite(v) and v == round(v) for v in arr):
            raise TokenDecodeError("float32 data holds values that are not whole numbers")
        return tuple(int(v) for v in arr)
    return tuple(arr.tolist())  # tolist() yields Python ints


class AccuracyEntry(BaseModel):
    """One logged sample. ``index`` is its 0-based position in the file (or in the visible part)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    line: int | None
    seq_id: int
    qsl_idx: int
    data_hex: str
    token_count: int | None = None
    token_data_hex: str | None = None

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.data_hex)

    @property
    def token_data(self) -> bytes | None:
        return None if self.token_data_hex is None else bytes.fromhex(self.token_data_hex)

    @property
    def data_nbytes(self) -> int:
        return len(self.data_hex) // 2

    def token_ids(self, dtype: TokenDtype = TokenDtype.INT32) -> tuple[int, ...]:
        """The response decoded as token ids (raises :class:`TokenDecodeError`)."""
        return decode_token_ids(self.data, dtype)

    def text(self) -> str:
        """The response read as UTF-8 text (``bytes.fromhex(data).decode("utf-8")``, as qwen3-vl's evaluation.py
        reads it); raises :class:`UnicodeDecodeError` for bytes that are not UTF-8."""
        return self.data.decode("utf-8")

    def first_token_ids(self, dtype: TokenDtype = TokenDtype.INT32) -> tuple[int, ...] | None:
        """The first-token bytes decoded as ids; None when the log has no ``token_data``."""
        raw = self.token_data
        return None if raw is None else decode_token_ids(raw, dtype)


class AccuracyLog(BaseModel):
    """A parsed accuracy log.

    ``truncated``: the file is the truncated form; ``entries`` then holds only the entries fully
    visible in its head and tail windows, and ``sha256`` is the hash of the truncated file (the
    original's hash is the ``hash=`` line of accuracy.txt).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    size_bytes: int
    sha256: str
    truncated: bool
    entries: tuple[AccuracyEntry, ...]

    def unique_by_qsl_idx(self) -> tuple[AccuracyEntry, ...]:
        """First entry per ``qsl_idx``, in file order (the reference accuracy scripts' dedup)."""
        seen: set[int] = set()
        out = []
        for e in self.entries:
            if e.qsl_idx not in seen:
                seen.add(e.qsl_idx)
                out.append(e)
        return tuple(out)

    @property
    def has_token_counts(self) -> bool:
        return bool(self.entries) and all(e.token_count is not None for e in self.entries)

    @property
    def has_first_tokens(self) -> bool:
        return bool(self.entries) and all(e.token_data_hex is not None for e in self.entries)


def _open_regular(path: Path) -> tuple[BinaryIO, int]:
    """``path`` opened for reading without blocking (a FIFO opens at once), verified a regular file; and its size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise _bad(path, f"cannot read: {e.strerror or e}") from e
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise _bad(path, f"cannot read: {e.strerror or e}") from e
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _bad(path, f"not a regular file ({file_kind(st.st_mode)}); not read")
    return os.fdopen(fd, "rb"), st.st_size


def _hash_fh(fh: BinaryIO, path: Path) -> str:
    """SHA-256 of the whole file (from its start, wherever ``fh`` was)."""
    h = hashlib.sha256()
    try:
        fh.seek(0)
        for block in iter(lambda: fh.read(4096), b""):
            h.update(block)
    except OSError as e:
        raise UnusableInput(f"cannot read accuracy log: {e.strerror or e}", display_name(str(path))) from e
    return h.hexdigest()


def accuracy_log_hash(path: Path) -> str:
    """SHA-256 hex of the file, read in 4 KiB blocks, exactly as ``truncate_accuracy_log.get_hash``."""
    fh, _ = _open_regular(path)
    with fh:
        return _hash_fh(fh, path)


def recorded_hash(accuracy_txt_lines: Sequence[str]) -> str | None:
    """The ``hash=`` value from accuracy.txt lines (first match, as the truncation script reads it)."""
    for line in accuracy_txt_lines:
        m = HASH_LINE_RE.match(line.rstrip("\r\n"))
        if m:
            return m.group(1)
    return None


def has_truncate_separator(text: str) -> bool:
    """True when ``text`` holds the truncation script's separator, as written or CRLF-converted."""
    return TRUNCATE_SEPARATOR in text or TRUNCATE_SEPARATOR_CRLF in text


def is_truncated_text(text: str) -> bool:
    """True for the truncation script's output: head window, separator, tail window (also after a CRLF
    conversion, which adds one character per line break)."""
    if TRUNCATE_SEPARATOR_CRLF in text:
        text = text.replace("\r\n", "\n")
    limit = 2 * TRUNCATE_VIEWABLE_CHARS + len(TRUNCATE_SEPARATOR)
    return (
        len(text) <= limit
        and text.find(TRUNCATE_SEPARATOR, 0, TRUNCATE_VIEWABLE_CHARS + len(TRUNCATE_SEPARATOR)) >= 0
        and not is_json(text)
    )


def is_json(text: str) -> bool:
    """True when ``text`` parses as JSON (an untruncated accuracy log does)."""
    try:
        parse_json(text)
    except JsonProblem:
        return False
    return True


def _bad(path: Path, msg: str, line: int | None = None, index: int | None = None) -> UnusableInput:
    where = f"entry {index}: " if index is not None else ""
    return UnusableInput(f"{where}{msg}", display_name(str(path)), line)


def _is_hex(v: str) -> bool:
    """Same as ``_HEX_RE.match(v)`` (whole bytes of hex digits), without a regex pass over long strings."""
    if len(v) % 2 or not v.isascii() or any(c in v for c in " \t\n\r\f\v"):
        return False
    try:
        bytes.fromhex(v)
    except ValueError:
        return False
    return True


def _entry_from_obj(obj: object, path: Path, index: int, line: int | None) -> AccuracyEntry:
    if not isinstance(obj, dict):
        raise _bad(path, f"expected an object, got {type(obj).__name__}", line, index)
    missing = [k for k in _REQUIRED_KEYS if k not in obj]
    if missing:
        raise _bad(path, f"missing key(s) {', '.join(missing)}", line, index)
    unknown = sorted(set(obj) - _ENTRY_KEYS)
    if unknown:
        raise _bad(path, f"unknown key(s) {', '.join(unknown)}", line, index)
    ints: dict[str, int | None] = {}
    for key in ("seq_id", "qsl_idx", "token_count"):
        v = obj.get(key)
        if v is None and key == "token_count":
            ints[key] = None
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise _bad(path, f"{key} must be a non-negative integer, got {v!r}"[:200], line, index)
        ints[key] = v
    hexes: dict[str, str | None] = {}
    for key in ("data", "token_data"):
        v = obj.get(key)
        if v is None and key == "token_data":
            hexes[key] = None
            continue
        if not isinstance(v, str) or not _is_hex(v):
            shown = v if not isinstance(v, str) else (v[:40] + "..." if len(v) > 40 else v)
            raise _bad(path, f"{key} must be a hex string of whole bytes, got {shown!r}", line, index)
        hexes[key] = v.upper()
    seq_id, qsl_idx = ints["seq_id"], ints["qsl_idx"]
    data_hex = hexes["data"]
    assert seq_id is not None and qsl_idx is not None and data_hex is not None  # required keys
    return AccuracyEntry(
        index=index,
        line=line,
        seq_id=seq_id,
        qsl_idx=qsl_idx,
        data_hex=data_hex,
        token_count=ints["token_count"],
        token_data_hex=hexes["token_data"],
    )


MAX_LINE_CHARS = 16 * 1024 * 1024  # one entry a line; a 32k-token output is 256 KiB of hex


def _iter_lines(path: Path, fh: BinaryIO) -> Iterator[tuple[int, str]]:
    """The lines, none held longer than :data:`MAX_LINE_CHARS` characters (a longer one, as a sparse file of NUL
    bytes, comes as pieces that are not LoadGen's layout: the whole-file path then refuses the file by size)."""
    fh.seek(0)
    f = io.TextIOWrapper(fh, encoding="utf-8", errors="strict", newline="")
    try:
        yield from enumerate(iter(lambda: f.readline(MAX_LINE_CHARS), ""), start=1)
    except UnicodeDecodeError as e:
        raise _bad(path, f"not UTF-8 text ({e.reason})") from e
    except OSError as e:
        raise _bad(path, f"cannot read: {e.strerror or e}") from e
    finally:
        f.detach()  # the caller owns (and closes) fh


def _parse_line_layout(path: Path, fh: BinaryIO) -> list[AccuracyEntry] | None:
    """Parse LoadGen's one-entry-per-line layout; None when the file is laid out otherwise."""
    entries: list[AccuracyEntry] = []
    opened = closed = False
    for lineno, raw in _iter_lines(path, fh):
        text = raw.strip()
        if not text:
            continue
        if not opened:
            if text != "[":
                return None
            opened = True
            continue
        if closed:
            raise _bad(path, f"text after the closing ']': {text[:40]!r}", lineno)
        if text == "]":
            closed = True
            continue
        if not text.startswith("{"):
            return None
        body = text[:-1] if text.endswith(",") else text
        try:
            obj = parse_json(body)
        except JsonProblem as e:
            raise _bad(path, f"not a JSON object ({e.msg})", lineno, len(entries)) from e
        entries.append(_entry_from_obj(obj, path, len(entries), lineno))
    if not opened:
        raise _bad(path, "empty file (expected a JSON list)")
    if not closed:
        raise _bad(path, "the JSON list is not closed (file cut off?)")
    return entries


def _parse_whole_json(path: Path, fh: BinaryIO, size: int, max_json_bytes: int) -> list[AccuracyEntry]:
    if size > max_json_bytes:
        raise _bad(
            path,
            f"{size} bytes and not laid out one entry per line as LoadGen writes it; "
            f"refusing a whole-file JSON parse above {max_json_bytes} bytes",
        )
    fh.seek(0)
    raw = fh.read(max_json_bytes + 1)
    if len(raw) > max_json_bytes:
        raise _bad(path, f"grew beyond {max_json_bytes} bytes while being read; not parsed")
    try:
        obj = parse_json(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _bad(path, f"not UTF-8 text ({e.reason})") from e
    except JsonProblem as e:
        raise _bad(path, f"not valid JSON ({e.msg})", e.lineno) from e
    if not isinstance(obj, list):
        raise _bad(path, f"expected a JSON list of entries, got {type(obj).__name__}")
    return [_entry_from_obj(o, path, i, None) for i, o in enumerate(obj)]


def _parse_truncated(path: Path, text: str) -> list[AccuracyEntry]:
    if TRUNCATE_SEPARATOR_CRLF in text:
        text = text.replace("\r\n", "\n")
    head, _, tail = text.partition(TRUNCATE_SEPARATOR)
    entries: list[AccuracyEntry] = []
    seen_seq_ids: set[int] = set()  # head and tail overlap when the original was under 8 KiB
    tail_offset = head.count("\n") + TRUNCATE_SEPARATOR.count("\n")
    for line_offset, window in ((0, head), (tail_offset, tail)):
        for i, raw in enumerate(window.split("\n"), start=1):
            m = _ENTRY_LINE_RE.match(raw)
            if not m:
                continue
            try:
                obj = parse_json(m.group(1))
            except JsonProblem:
                continue  # a line cut by the window edge
            entry = _entry_from_obj(obj, path, len(entries), line_offset + i)
            if entry.seq_id not in seen_seq_ids:
                seen_seq_ids.add(entry.seq_id)
                entries.append(entry)
    return entries


def parse_accuracy_log(path: Path, *, max_json_bytes: int = DEFAULT_MAX_JSON_BYTES) -> AccuracyLog:
    """Parse a full or truncated ``mlperf_log_accuracy.json``."""
    fh, size = _open_regular(path)
    with fh:
        return _parse_open(path, fh, size, max_json_bytes)


def _parse_open(path: Path, fh: BinaryIO, size: int, max_json_bytes: int) -> AccuracyLog:
    """Parse, then hash (a file that is not an accuracy log is refused before it is read whole)."""
    limit = 2 * TRUNCATE_VIEWABLE_CHARS + len(TRUNCATE_SEPARATOR)
    if size <= 4 * limit:  # UTF-8 may take up to 4 bytes per character
        fh.seek(0)
        try:
            text = fh.read(4 * limit + 1).decode("utf-8")
        except UnicodeDecodeError as e:
            raise _bad(path, f"not UTF-8 text ({e.reason})") from e
        if is_truncated_text(text):
            entries = _parse_truncated(path, text)
            return AccuracyLog(
                path=str(path), size_bytes=size, sha256=_hash_fh(fh, path), truncated=True, entries=tuple(entries)
            )
    parsed = _parse_line_layout(path, fh)
    if parsed is None:
        parsed = _parse_whole_json(path, fh, size, max_json_bytes)
    return AccuracyLog(
        path=str(path), size_bytes=size, sha256=_hash_fh(fh, path), truncated=False, entries=tuple(parsed)
    )
