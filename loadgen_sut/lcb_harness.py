"""Run one model-generated program against its LiveCodeBench tests. Executed ONLY by
``loadgen_sut.code_exec`` in a child process (``python -I lcb_harness.py``) with resource limits,
a temporary working directory and a minimal environment; never imported to run code in-process.

Standard library only. Protocol: one JSON object on stdin
``{"code": str, "tests": [{"input": str, "output": str, "functional": bool}], "fn_name": str|null,
"timeout_s": int, "limits": {"cpu_s": int, "memory_bytes": int, "max_file_bytes": int}}`` (the
limits are set first, before the program is compiled); one JSON object written to the file descriptor that was stdout at start
``{"passed": bool, "tests_run": int, "reason": str}``. What the program prints is captured, never
shown.

The grading follows LiveCodeBench's ``lcb_runner/evaluation/testing_util.py`` as the deepseek-r1
reference runs it:

- stdin problems: a trailing ``if __name__ == '__main__':`` block is inlined, the program's
  statements (imports aside) become the body of one function, preceded by LiveCodeBench's fixed
  import preamble; each test calls it with the input as ``sys.stdin`` (``readline`` gives lines
  without their newline, as LiveCodeBench patches it) and ``open()`` returning the input; the
  captured output must have as many stripped lines as the expected output, each equal as text or
  as a list of ``Decimal`` numbers;
- functional (LeetCode) problems: the preamble + program is executed, ``Solution()`` is made when
  the program has ``class Solution``, and ``fn_name`` is called with the JSON-decoded lines of the
  input; a tuple result is compared as a list; ``==`` with the JSON-decoded output decides;
- ``SystemExit`` ends a stdin run normally; any other exception, or a test over ``timeout_s``
  (SIGALRM), fails the problem; the first failing test stops the run;
- destructive functions are disabled first (as LiveCodeBench's ``reliability_guard``): process
  creation, signals to other processes, file removal and permission changes, ``exit``/``quit``.
"""

from __future__ import annotations

import ast
import builtins
import faulthandler
import io
import json
import os
import resource
import signal
import sys
from decimal import Decimal, InvalidOperation
from types import FrameType, ModuleType
from typing import Any

# LiveCodeBench's fixed preamble for every program (its ``import_string``).
PREAMBLE = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\n"
    "import statistics\nimport itertools\nimport functools\nimport operator\nimport io\nimport sys\n"
    "import json\nsys.setrecursionlimit(50000)\n"
)
WRAPPED = "wrapped_function"


class TestTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise TestTimeout


def inline_main_guard(code: str) -> str:
    """Replace a final ``if __name__ == '__main__':`` block by its body."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if not tree.body:
        return code
    last = tree.body[-1]
    if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
        body = ast.Module(body=tree.body[:-1], type_ignores=[])
        return ast.unparse(body) + "\n" + ast.unparse(ast.Module(body=last.body, type_ignores=[]))
    return code


def wrap_in_function(code: str) -> str:
    """Imports stay at module level; every other statement becomes the body of ``wrapped_function``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    imports: list[ast.stmt] = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    others: list[ast.stmt] = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    func = ast.parse(f"def {WRAPPED}():\n    pass\n").body[0]
    assert isinstance(func, ast.FunctionDef)
    func.body = others
    try:
        return (
            PREAMBLE
            + "\n"
            + ast.unparse(ast.Module(body=imports, type_ignores=[]))
            + "\n"
            + ast.unparse(func)
        )
    except Exception:
        return code


def test_stdin(text: str) -> io.StringIO:
    """``sys.stdin`` as LiveCodeBench patches it: a StringIO (iteration yields lines with their
    newline) whose ``readline`` yields the lines without newline and raises StopIteration past the
    end, ``readlines`` the split lines, ``read`` the whole text."""
    stdin = io.StringIO(text)
    lines = iter(text.split("\n"))
    stdin.readline = lambda *a: next(lines)  # type: ignore[method-assign]
    stdin.readlines = lambda *a: text.split("\n")  # type: ignore[method-assign]
    stdin.read = lambda *a: text  # type: ignore[method-assign]
    return stdin


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _as_decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(x) for x in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdout_matches(got: str, expected: str) -> bool:
    got_lines, exp_lines = _lines(got), _lines(expected)
    if len(got_lines) != len(exp_lines):
        return False
    for g, e in zip(got_lines, exp_lines, strict=True):
        if g == e:
            continue
        gd, ed = _as_decimals(g), _as_decimals(e)
        if gd is None or ed is None or gd != ed:
            return False
    return True


def load_program(code: str, timeout_s: int) -> Any:
    """Execute the program text as a module; with ``class Solution`` in the text, a ``Solution()``
    (LiveCodeBench does this for stdin programs too: one defining Solution inside the wrapped body
    then fails, as there)."""
    module = ModuleType("tmp_sol", "")
    signal.alarm(timeout_s)
    try:
        exec(compile(code, "<solution>", "exec"), module.__dict__)
        return module.Solution() if "class Solution" in code else module
    finally:
        signal.alarm(0)


def run_stdin(code: str, tests: list[dict[str, Any]], timeout_s: int) -> tuple[bool, int, str]:
    func = getattr(load_program(wrap_in_function(inline_main_guard(code)), timeout_s), WRAPPED, None)
    if func is None:
        return False, 0, "no program body"
    real_stdin, real_stdout, real_open = sys.stdin, sys.stdout, builtins.open
    for n, test in enumerate(tests, start=1):
        text = str(test["input"])
        out = io.StringIO()
        sys.stdin = test_stdin(text)
        sys.stdout = out
        builtins.open = lambda *a, _t=text, **k: io.StringIO(_t)  # type: ignore[assignment]
        signal.alarm(timeout_s)
        try:
            func()
        except SystemExit:
            pass
        except TestTimeout:
            return False, n, f"test {n}: time limit exceeded"
        except BaseException as e:
            return False, n, f"test {n}: runtime error {type(e).__name__}"
        finally:
            signal.alarm(0)
            sys.stdin, sys.stdout, builtins.open = real_stdin, real_stdout, real_open
        if not stdout_matches(out.getvalue(), str(test["output"])):
            return False, n, f"test {n}: wrong answer"
    return True, len(tests), "all tests passed"


def run_functional(
    code: str, tests: list[dict[str, Any]], fn_name: str, timeout_s: int
) -> tuple[bool, int, str]:
    method = getattr(load_program(PREAMBLE + "\n\n" + code, timeout_s), fn_name, None)
    if method is None:
        return False, 0, f"no function {fn_name}"
    for n, test in enumerate(tests, start=1):
        args = [json.loads(line) for line in str(test["input"]).split("\n")]
        expected = json.loads(str(test["output"]))
        signal.alarm(timeout_s)
        try:
            got = method(*args)
        except TestTimeout:
            return False, n, f"test {n}: time limit exceeded"
        except BaseException as e:
            return False, n, f"test {n}: runtime error {type(e).__name__}"
        finally:
            signal.alarm(0)
        if isinstance(got, tuple):
            got = list(got)
        if got != expected:
            return False, n, f"test {n}: wrong answer"
    return True, len(tests), "all tests passed"


def disable_destructive_functions() -> None:
    """As LiveCodeBench's ``reliability_guard``: not a sandbox, a seatbelt."""
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in (
        "kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
        "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown",
        "chmod", "chown", "chroot", "lchown", "getcwd", "chdir", "execv", "execve", "spawnv", "popen",
    ):  # fmt: skip
        if hasattr(os, name):
            setattr(os, name, None)
    import shutil
    import subprocess

    shutil.rmtree = None  # type: ignore[assignment]
    shutil.move = None  # type: ignore[assignment]
    shutil.chown = None  # type: ignore[assignment]
    subprocess.Popen = None  # type: ignore[assignment,misc]
    builtins.exit = None  # type: ignore[assignment]
    builtins.help = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    for mod in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[mod] = None  # type: ignore[assignment]


def apply_limits(limits: dict[str, int]) -> None:
    """CPU seconds, address space and written file size for this process; no core files."""
    cpu_s = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["max_file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main() -> int:
    request = json.loads(sys.stdin.read())
    apply_limits(request["limits"])
    result_fd = os.dup(1)
    write = os.write
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray writes to fd 1 go nowhere
    signal.signal(signal.SIGALRM, _on_alarm)
    code, tests = str(request["code"]), list(request["tests"])
    timeout_s, fn_name = int(request["timeout_s"]), request.get("fn_name")
    disable_destructive_functions()
    try:
        faulthandler.disable()
        if fn_name:
            passed, run, reason = run_functional(code, tests, str(fn_name), timeout_s)
        else:
            passed, run, reason = run_stdin(code, tests, timeout_s)
    except TestTimeout:
        passed, run, reason = False, 0, "time limit exceeded while loading the program"
    except BaseException as e:
        passed, run, reason = False, 0, f"error while loading the program: {type(e).__name__}"
    write(result_fd, json.dumps({"passed": passed, "tests_run": run, "reason": reason}).encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
