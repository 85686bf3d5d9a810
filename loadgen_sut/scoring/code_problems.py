"""The LiveCodeBench problems generated code is graded on: each problem's public and private test cases, decoded
from the data set's records (the private ones are base64(zlib(pickle(json))), unpickled as plain data only)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput


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


class _NoClassesUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any class or function reference is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused to load {module}.{name}")


def _decode_tests(value: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(value, list):
        raw: Any = value
    elif isinstance(value, str):
        try:
            raw = json.loads(value)
        except json.JSONDecodeError:
            try:
                packed = zlib.decompress(base64.b64decode(value.encode("utf-8")))
                text = _NoClassesUnpickler(io.BytesIO(packed)).load()
            except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as e:
                raise ValueError(f"{where}: neither JSON nor base64/zlib/pickle test cases ({e})") from e
            if not isinstance(text, str):
                raise ValueError(f"{where}: packed test cases are not a JSON string") from None
            raw = json.loads(text)
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
        meta = json.loads(meta) if meta.strip() else {}
    fn_name = meta.get("func_name") if isinstance(meta, dict) else None
    if not tests:
        raise ValueError("no test cases")
    return CodeProblem(question_id=qid, tests=tuple(tests), fn_name=str(fn_name) if fn_name else None)


def _jsonl_files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
    else:
        yield path


def load_code_problems(path: Path) -> dict[str, CodeProblem]:
    """LiveCodeBench problems by ``question_id`` from a JSONL file or a directory of them."""
    if not path.exists():
        raise UnusableInput("LiveCodeBench problems file not found", str(path))
    problems: dict[str, CodeProblem] = {}
    for file in _jsonl_files(path):
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise UnusableInput(f"cannot read LiveCodeBench problems: {e}", str(file)) from e
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                problem = problem_from_record(json.loads(line))
            except (ValueError, TypeError) as e:  # JSONDecodeError is a ValueError
                raise UnusableInput(f"not a LiveCodeBench problem: {e}", str(file), lineno) from e
            problems[problem.question_id] = problem
    if not problems:
        raise UnusableInput("no LiveCodeBench problems in it", str(path))
    return problems
