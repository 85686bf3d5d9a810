"""Execute model-generated code against LiveCodeBench tests, only when the user asks for it.

Executing model output is dangerous. Nothing here runs unless the caller builds a
:class:`CodeExecution` (the explicit opt-in: ``--allow-code-execution`` with ``--lcb-problems``).
Each program then runs in a fresh ``python -I`` child process (``lcb_harness.py``) with:

- a temporary working directory (removed afterwards) that is also ``HOME`` and ``TMPDIR``;
- a minimal environment (no proxies, tokens or paths of the caller), one thread for BLAS/OpenMP;
- ``resource.setrlimit`` (set by the harness before it reads the program): CPU seconds, address
  space, written file size, no core files;
- its own session, killed as a whole when the wall-clock budget runs out;
- LiveCodeBench's ``reliability_guard`` inside (process creation, file removal, ``exit`` disabled).

This is NOT a sandbox: the program can read files the user can read and reach the network if the
machine has one. Run it in a disposable container without network when in doubt.

The tests come from the user's local copy of LiveCodeBench ``code_generation_lite`` (the
reference loads ``release_v1`` through ``lcb_runner``, which downloads it; nothing is downloaded
here): JSONL records with ``question_id``, ``public_test_cases``, ``private_test_cases`` (JSON, or
base64 of zlib of a pickled JSON string as the lite release stores them — unpickled with every
class refused, so only plain strings come out) and ``metadata`` (JSON with ``func_name`` for
LeetCode problems). A problem passes when all its public then private tests pass (pass@1 of one
sample), each within ``test_timeout_s`` (the reference's ``timeout=60``).
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from checker.findings import UnusableInput

HARNESS = Path(__file__).with_name("lcb_harness.py")
REFERENCE_TEST_TIMEOUT_S = 60  # eval_accuracy.py passes timeout=60 to lcb_runner


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


class CodeRun(BaseModel):
    """The outcome of one program on its problem's tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    tests_run: int
    reason: str


class CodeExecution(BaseModel):
    """The opt-in to execute generated code, with the problems and the limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    problems: dict[str, CodeProblem]
    source: str  # where the problems came from
    test_timeout_s: int = Field(default=REFERENCE_TEST_TIMEOUT_S, ge=1)
    memory_bytes: int = Field(default=4 * 1024**3, ge=64 * 1024**2)
    max_file_bytes: int = Field(default=16 * 1024**2, ge=0)
    python: str = sys.executable
    workers: int = Field(default=1, ge=1)  # programs run at the same time (the reference: one per CPU)

    def wall_budget_s(self, problem: CodeProblem) -> float:
        """The reference's limit for one problem: (timeout + 1) per test + 5 s."""
        return float((self.test_timeout_s + 1) * max(1, len(problem.tests)) + 5)


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


def code_execution(problems_path: Path, **limits: Any) -> CodeExecution:
    """The opt-in: load the problems and fix the limits."""
    return CodeExecution(problems=load_code_problems(problems_path), source=str(problems_path), **limits)


def _child_env(workdir: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole session (anything it left running), then reap the child."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_program(code: str, problem: CodeProblem, execution: CodeExecution) -> CodeRun:
    """Run ``code`` against ``problem``'s tests in a limited child process."""
    request = json.dumps(
        {
            "code": code,
            "tests": [t.model_dump() for t in problem.tests],
            "fn_name": problem.fn_name,
            "timeout_s": execution.test_timeout_s,
            "limits": {  # applied by the harness before the program is read (no preexec_fn: thread-safe)
                "cpu_s": int(execution.wall_budget_s(problem)) + 1,
                "memory_bytes": execution.memory_bytes,
                "max_file_bytes": execution.max_file_bytes,
            },
        }
    )
    budget_s = execution.wall_budget_s(problem)
    with tempfile.TemporaryDirectory(prefix="lcb-run-") as workdir:
        proc = subprocess.Popen(
            [execution.python, "-I", str(HARNESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
            env=_child_env(workdir),
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(request.encode("utf-8"), timeout=budget_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return CodeRun(passed=False, tests_run=0, reason=f"over the {budget_s:g} s budget of the problem")
        finally:
            _kill_group(proc)
    try:
        result = json.loads(out.decode("utf-8", errors="replace"))
        return CodeRun(
            passed=bool(result["passed"]), tests_run=int(result["tests_run"]), reason=str(result["reason"])
        )
    except (ValueError, KeyError, TypeError):
        return CodeRun(
            passed=False, tests_run=0, reason=f"the program ended the harness (exit status {proc.returncode})"
        )
