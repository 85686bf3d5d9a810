"""The LiveCodeBench problems generated code is graded on: each problem's public and private test cases, decoded
from the data set's records as LiveCodeBench's loader does (``lcb_runner/benchmarks/code_generation.py``,
``CodeGenerationProblem.__post_init__``: ``json.loads``, else ``json.loads(pickle.loads(zlib.decompress(
base64.b64decode(...))))``): JSON, or base64 of zlib of a pickled JSON string. Nothing is unpickled: the one string
such a pickle holds is read from its bytes, and any other pickle is refused (unpickling runs code).

Bounded: the problems file is a regular file read a chunk at a time (a FIFO or ``/dev/zero`` is refused unread, a NUL
byte ends the read at once), a line at most :data:`MAX_LINE_BYTES`, each record's JSON depth- and number-bounded
(:func:`checker.safe_json.parse_json`), and a packed set of test cases at most :data:`MAX_TEST_CASES_BYTES` once
decompressed: judged from the length the pickle declares before it is inflated, then inflated no further than that
(a 1.9 MB line packing a 1.5 GB string is refused in milliseconds). Each refusal names the file and line."""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from checker.safe_io import open_input
from checker.safe_json import JsonProblem, parse_json

# One JSONL record: its packed private tests are base64 (4/3 of the zlib stream's bytes) in one JSON string.
MAX_LINE_BYTES = 512 << 20
# One record's packed test cases, decompressed (the pickled JSON text): above this, the problem is refused.
MAX_TEST_CASES_BYTES = 1 << 30
_CHUNK = 1 << 20

class CodeTest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str
    output: str
    functional: bool  # LeetCode call-based (True) or stdin/stdout (False)


class CodeProblem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    tests: tuple[CodeTest, ...]
    fn_name: str | None = None


# The head of a pickled str (protocol 1+, as ``pickle.dumps`` writes one): PROTO n (protocol 2+), a FRAME (protocol
# 4+, small strings), then SHORT_BINUNICODE / BINUNICODE / BINUNICODE8 with the UTF-8 length in 1 / 4 / 8 bytes.
_HEAD = re.compile(rb"(?:\x80[\x01-\x05])?(?:\x95[\x00-\xff]{8})?(?:(\x8c)|(X)|(\x8d))", re.DOTALL)
_HEAD_BYTES = 2 + 9 + 1 + 8
# what follows the string: its memo entry (BINPUT / LONG_BINPUT / MEMOIZE, or none), then STOP
_TAIL = re.compile(rb"(?:q[\x00-\xff]|r[\x00-\xff]{4}|\x94)?\.", re.DOTALL)
_TAIL_BYTES = 6
_NOT_PACKED = "{where}: neither JSON nor base64/zlib/pickle test cases ({why})"
_NOT_ONE_STRING = "not a pickle of one string, the form LiveCodeBench writes; never unpickled"


def _inflate(packed: bytes, where: str, max_bytes: int) -> bytearray:
    """The zlib stream ``packed`` inflated: a pickle of one str whose declared length is at most ``max_bytes``, and
    nothing after it (ValueError otherwise). Inflated only as far as the declared length allows."""
    inflater = zlib.decompressobj()
    out = bytearray()
    todo = packed

    def inflate_to(size: int) -> None:
        """Inflate until ``out`` holds ``size`` bytes or the stream (or its input) ends."""
        nonlocal todo
        while len(out) < size and not inflater.eof:
            got = inflater.decompress(todo, min(_CHUNK << 4, size - len(out)))
            todo = inflater.unconsumed_tail
            if not got:  # no output below the limit: the input is spent (a truncated stream)
                return
            out.extend(got)

    try:
        inflate_to(_HEAD_BYTES)
        head = _HEAD.match(out)
        if head is None:
            raise ValueError(_NOT_PACKED.format(where=where, why=_NOT_ONE_STRING))
        start = head.end() + {1: 1, 2: 4, 3: 8}[head.lastindex or 0]  # the length is 1, 4 or 8 bytes
        inflate_to(start)
        declared = int.from_bytes(out[head.end() : start], "little")
        if declared > max_bytes:
            raise ValueError(
                f"{where}: the packed test cases are {declared} bytes decompressed, above the {max_bytes} byte limit"
            )
        inflate_to(start + declared + _TAIL_BYTES + 1)  # one more than a well-formed pickle holds: more is refused
    except zlib.error as e:
        raise ValueError(_NOT_PACKED.format(where=where, why=f"zlib: {e}")) from None
    if not inflater.eof or not _TAIL.fullmatch(out, start + declared):  # more after the string, or no string
        raise ValueError(_NOT_PACKED.format(where=where, why=_NOT_ONE_STRING))
    del out[start + declared :]  # trimmed in place: a string near the limit is not copied
    del out[:start]
    return out


def _unpack(value: str, where: str) -> str:
    """base64(zlib(pickle(str))) -> the str, never unpickled (see the module docstring)."""
    try:
        packed = base64.b64decode(value.encode("utf-8"))
    except binascii.Error as e:
        raise ValueError(_NOT_PACKED.format(where=where, why=e)) from None
    try:
        return _inflate(packed, where, MAX_TEST_CASES_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: the packed test cases are not UTF-8 text (byte {e.start})") from None


def _json(text: str, where: str) -> Any:
    try:
        return parse_json(text)  # bounded: nesting depth, long numbers, repeated keys
    except JsonProblem as e:
        raise ValueError(f"{where}: not JSON ({e})") from None


def _decode_tests(value: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(value, list):
        raw: Any = value
    elif isinstance(value, str):
        # JSON first, as LiveCodeBench's loader; base64 text never starts with a bracket
        raw = _json(value, where) if value.lstrip()[:1] in ("[", "{") else _json(_unpack(value, where), where)
    else:
        raise ValueError(f"{where}: expected a list or a string, got {type(value).__name__}")
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ValueError(f"{where}: expected a list of test objects")
    return raw


def problem_from_record(record: Any) -> CodeProblem:
    """One ``code_generation_lite`` record -> :class:`CodeProblem` (ValueError with a message)."""
    if not isinstance(record, dict):
        raise ValueError("expected a JSON object")
    qid = record.get("question_id")
    if not isinstance(qid, str) or not qid:
        raise ValueError("no question_id")
    tests: list[CodeTest] = []
    for key in ("public_test_cases", "private_test_cases"):
        for t in _decode_tests(record.get(key, "[]"), key):
            kind = t.get("testtype")
            if kind not in ("stdin", "functional"):
                raise ValueError(f"{key}: testtype {kind!r} is neither stdin nor functional")
            tests.append(
                CodeTest(
                    input=str(t.get("input", "")),
                    output=str(t.get("output", "")),
                    functional=kind == "functional",
                )
            )
    meta = record.get("metadata", "{}")
    if isinstance(meta, str):
        meta = _json(meta, "metadata") if meta.strip() else {}
    fn_name = meta.get("func_name") if isinstance(meta, dict) else None
    if not tests:
        raise ValueError("no test cases")
    return CodeProblem(question_id=qid, tests=tuple(tests), fn_name=str(fn_name) if fn_name else None)


def _jsonl_files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
    else:
        yield path


def _lines(file: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a JSONL file, split at "\\n" only (a "\\r" before it dropped), read a chunk at a time
    from a regular file (:func:`checker.safe_io.open_input`); a line longer than :data:`MAX_LINE_BYTES` or a NUL byte
    is refused at once."""
    fh, _ = open_input(file, what="LiveCodeBench problems file")
    with fh:
        lineno, pending = 0, bytearray()
        while chunk := fh.read(_CHUNK):
            nul = chunk.find(b"\0")
            if nul >= 0:
                line = lineno + 1 + chunk.count(b"\n", 0, nul)
                raise UnusableInput("binary content (a NUL byte), not JSON Lines", str(file), line)
            scan = len(pending)  # the partial line before this chunk holds no line break
            pending += chunk
            start = 0
            while (nl := pending.find(b"\n", scan)) >= 0:
                lineno += 1
                yield lineno, bytes(pending[start:nl]).removesuffix(b"\r")
                start = scan = nl + 1
            del pending[:start]
            if len(pending) > MAX_LINE_BYTES:
                raise UnusableInput(f"a line longer than {MAX_LINE_BYTES} bytes; not read", str(file), lineno + 1)
        if pending:
            yield lineno + 1, bytes(pending).removesuffix(b"\r")


def load_code_problems(path: Path) -> dict[str, CodeProblem]:
    """LiveCodeBench problems by ``question_id`` from a JSONL file or a directory of them."""
    if not path.exists():
        raise UnusableInput("LiveCodeBench problems file not found", str(path))
    problems: dict[str, CodeProblem] = {}
    for file in _jsonl_files(path):
        for lineno, line in _lines(file):
            if not line.strip():
                continue
            try:
                record = parse_json(line.decode("utf-8"))  # bounded: nesting depth, long numbers, repeated keys
            except UnicodeDecodeError as e:
                raise UnusableInput(f"not UTF-8 text (byte {e.start} of the line)", str(file), lineno) from None
            except JsonProblem as e:
                raise UnusableInput(f"not a JSON object ({e.msg})", str(file), lineno) from None
            try:
                problem = problem_from_record(record)
            except (ValueError, TypeError) as e:
                raise UnusableInput(f"not a LiveCodeBench problem: {e}", str(file), lineno) from e
            problems[problem.question_id] = problem
    if not problems:
        raise UnusableInput("no LiveCodeBench problems in it", str(path))
    return problems
