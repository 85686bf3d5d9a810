"""The two child-process roles of LiveCodeBench code execution, started ONLY by
``loadgen_sut.scoring.code_exec`` (never imported to run code in-process). Standard library only,
Python 3.10+.

``python -I lcb_harness.py supervise`` -- trusted, with the grader's uid, in its own session
(and in a pids cgroup when the grader could make one). It makes itself a child subreaper (so
that anything the program starts, even with ``setsid``, stays its descendant), gives the
program's processes an empty network namespace when it is root, and starts the runner: this
file's text as ``python -I -c <text> run lcb-program-run`` in a new session, as the
unprivileged user when the grader is root (``user``/``group``/``extra_groups`` of Popen, no
``preexec_fn``), in the given empty working directory, with the given minimal environment,
no inherited file descriptors, umask 077, stderr to /dev/null and its stdout the grader's pipe.
It reads one JSON request line from its stdin::

    {"python": str, "uid": int|null, "gid": int|null, "workdir": str, "env": {str: str},
     "hard_s": float, "program": {...the runner's request...}}

and passes ``program`` to the runner. It then waits until the runner ends, the grader writes to
or closes its stdin (the grader's "stop"; also what happens when the grader dies), or ``hard_s``
passes; then it SIGKILLs every descendant, repeatedly, until none is left, reaps them and exits.
It reports on its stderr, one JSON object a line: ``{"runner_pid": int}``, ``{"network":
"isolated"|"not isolated"}``, ``{"spawn_error": str}``, ``{"killed": int}``.

``run`` -- the runner, untrusted as soon as the program is compiled. Request on stdin::

    {"code": str, "inputs": [str], "fn_name": str|null, "timeout_s": int,
     "limits": {"cpu_s": int, "memory_bytes": int, "max_file_bytes": int, "processes": int}}

(the test INPUTS only: the expected outputs never reach this process). It sets its resource
limits, compiles the program the way LiveCodeBench's ``lcb_runner/evaluation/testing_util.py``
does and runs it on each input, writing one JSON object a line to the file descriptor that was
stdout at start (fd 1 itself then goes to /dev/null):

- ``{"load": "ok"}``, ``{"load": "timeout"}``, ``{"load": "error", "error": <exception type>}``,
  ``{"load": "missing", "reason": str}``;
- then per input ``{"test": n, "stdout": str}`` (stdin problems: what the program printed),
  ``{"test": n, "value": <JSON>}`` (functional problems: the return value, a tuple as a list),
  ``{"test": n, "unrepresentable": <type>}`` (a return value no JSON value equals),
  ``{"test": n, "error": <exception type>}`` or ``{"test": n, "timeout": true}``.

Nothing here decides a grade. Every line is a *claim* the program can forge (it runs in this
interpreter and can write to any of its descriptors): the grader compares the claimed outputs
with the expected ones itself, stops at the first failure, and enforces the time limits with its
own clock. Forging a line can only make the program's output what it wrote, which passes only
if it wrote the expected output -- i.e. solved the test.

LiveCodeBench's semantics kept here:

- stdin problems: a trailing ``if __name__ == '__main__':`` block is inlined, the program's
  statements (imports aside) become the body of one function, preceded by LiveCodeBench's fixed
  import preamble; each test calls it with the input as ``sys.stdin`` (``readline`` gives lines
  without their newline, as LiveCodeBench patches it) and ``open()`` returning the input;
  ``SystemExit`` ends a run normally;
- functional (LeetCode) problems: the preamble + program is executed, ``Solution()`` is made when
  the program has ``class Solution``, and ``fn_name`` is called with the JSON-decoded lines of the
  input;
- any other exception, or a test over ``timeout_s`` (SIGALRM), fails the problem (the runner then
  stops);
- LiveCodeBench's ``reliability_guard`` is applied (process creation, signals, file removal,
  ``exit``/``quit`` disabled): a seatbelt for fidelity (programs calling ``exit()`` fail there
  too), NOT the isolation -- ``posix.fork`` or ``posix.unlink`` get around it. The isolation is
  the operating system's: the supervisor, the unprivileged uid, the limits, the kill.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import faulthandler
import io
import json
import operator
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
from types import FrameType, ModuleType
from typing import Any

RUNNER_MARKER = "lcb-program-run"  # in the runner's argv (and so in its forks'): tests look for it
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNET = 0x40000000

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


class Unrepresentable(Exception):
    pass


def json_value(value: Any, top: bool = True) -> Any:
    """``value`` as the JSON value it equals (``==``) as LiveCodeBench compares it with the
    JSON-decoded expected output: a top-level tuple counts as a list; anything no JSON value can
    equal (a nested tuple, a set, a dict with non-string keys, other objects) raises."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, list) or (top and isinstance(value, tuple)):
        return [json_value(v, False) for v in value]
    if isinstance(value, dict) and all(type(k) is str for k in value):
        return {str.__str__(k): json_value(v, False) for k, v in value.items()}
    if hasattr(type(value), "__index__"):  # numpy integers equal Python ints
        return operator.index(value)
    raise Unrepresentable(type(value).__name__)


class Channel:
    """The runner's record stream: a private copy of the stdout it started with."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.write = os.write  # kept: the program's reliability_guard leaves os alone, but be safe

    def emit(self, record: dict[str, Any]) -> None:
        data = memoryview((json.dumps(record) + "\n").encode("utf-8", errors="surrogatepass"))
        while data:
            data = data[self.write(self.fd, data) :]


def run_stdin(code: str, inputs: list[str], timeout_s: int, channel: Channel) -> None:
    func = getattr(load_program(wrap_in_function(inline_main_guard(code)), timeout_s), WRAPPED, None)
    if func is None:
        channel.emit({"load": "missing", "reason": "no program body"})
        return
    channel.emit({"load": "ok"})
    real_stdin, real_stdout, real_open = sys.stdin, sys.stdout, builtins.open
    for n, text in enumerate(inputs, start=1):
        out = io.StringIO()
        sys.stdin = test_stdin(text)
        sys.stdout = out
        builtins.open = lambda *a, _t=text, **k: io.StringIO(_t)  # type: ignore[assignment]
        record: dict[str, Any] = {}
        signal.alarm(timeout_s)
        try:
            func()
        except SystemExit:
            pass
        except TestTimeout:
            record = {"test": n, "timeout": True}
        except BaseException as e:
            record = {"test": n, "error": type(e).__name__}
        finally:
            signal.alarm(0)
            sys.stdin, sys.stdout, builtins.open = real_stdin, real_stdout, real_open
        if record:
            channel.emit(record)
            return
        channel.emit({"test": n, "stdout": out.getvalue()})


def run_functional(code: str, inputs: list[str], fn_name: str, timeout_s: int, channel: Channel) -> None:
    method = getattr(load_program(PREAMBLE + "\n\n" + code, timeout_s), fn_name, None)
    if method is None:
        channel.emit({"load": "missing", "reason": f"no function {fn_name}"})
        return
    channel.emit({"load": "ok"})
    for n, text in enumerate(inputs, start=1):
        signal.alarm(timeout_s)
        try:
            args = [json.loads(line) for line in text.split("\n")]
            got = method(*args)
        except TestTimeout:
            channel.emit({"test": n, "timeout": True})
            return
        except BaseException as e:
            channel.emit({"test": n, "error": type(e).__name__})
            return
        finally:
            signal.alarm(0)
        try:
            channel.emit({"test": n, "value": json_value(got)})
        except (Unrepresentable, ValueError, RecursionError) as e:
            name = str(e) if isinstance(e, Unrepresentable) else type(e).__name__
            channel.emit({"test": n, "unrepresentable": name})


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

    shutil.rmtree = None  # type: ignore[assignment]
    shutil.move = None  # type: ignore[assignment]
    shutil.chown = None  # type: ignore[assignment]
    subprocess.Popen = None  # type: ignore[assignment,misc]
    builtins.exit = None  # type: ignore[assignment]
    builtins.help = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    for mod in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[mod] = None  # type: ignore[assignment]


def tasks_of_uid(uid: int) -> int:
    """Processes and threads whose real uid is ``uid`` now (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return count


def apply_limits(limits: dict[str, int]) -> None:
    """CPU seconds, address space, written file size, no core files, and processes: RLIMIT_NPROC
    counts every task of this uid, so the limit is what exists now plus ``processes``."""
    cpu_s = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["max_file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    nproc = tasks_of_uid(os.getuid()) + int(limits["processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def run() -> int:
    """The runner: run the program on the inputs, report what it printed or returned."""
    request = json.loads(sys.stdin.read())
    apply_limits(request["limits"])
    channel = Channel(os.dup(1))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # stray writes to fd 1 go nowhere (LiveCodeBench captures sys.stdout only)
    signal.signal(signal.SIGALRM, _on_alarm)
    code, inputs = str(request["code"]), [str(i) for i in request["inputs"]]
    timeout_s, fn_name = int(request["timeout_s"]), request.get("fn_name")
    disable_destructive_functions()
    try:
        faulthandler.disable()
        if fn_name:
            run_functional(code, inputs, str(fn_name), timeout_s, channel)
        else:
            run_stdin(code, inputs, timeout_s, channel)
    except TestTimeout:
        channel.emit({"load": "timeout"})
    except BaseException as e:
        channel.emit({"load": "error", "error": type(e).__name__})
    return 0


# ---------------------------------------------------------------- the supervisor (trusted)


def _report(record: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (json.dumps(record) + "\n").encode())


def _libc_call(name: str, *args: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(getattr(libc, name)(*args)) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process now."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            parents[int(entry)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants(give_up_s: float = 30.0) -> int:
    """SIGKILL every descendant until none is left (as a subreaper, orphans come back to us)."""
    killed: set[int] = set()
    me = os.getpid()
    end = time.monotonic() + give_up_s
    while time.monotonic() < end:
        _reap()
        pids = descendants(me)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.005)
    _reap()
    return len(killed)


def supervise() -> int:
    request = json.loads(sys.stdin.buffer.readline())
    _libc_call("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if os.geteuid() == 0:  # an empty network namespace for everything started from here
        _report({"network": "isolated" if _libc_call("unshare", CLONE_NEWNET) else "not isolated"})
    else:
        _report({"network": "not isolated"})
    with open(__file__, encoding="utf-8") as f:
        source = f.read()
    drop: dict[str, Any] = {}
    if request.get("uid") is not None:
        drop = {"user": int(request["uid"]), "group": int(request["gid"]), "extra_groups": []}
    try:
        proc = subprocess.Popen(
            [str(request["python"]), "-I", "-c", source, "run", RUNNER_MARKER],
            stdin=subprocess.PIPE,
            stdout=1,
            stderr=subprocess.DEVNULL,
            cwd=str(request["workdir"]),
            env={str(k): str(v) for k, v in request["env"].items()},
            close_fds=True,
            start_new_session=True,
            umask=0o077,
            **drop,
        )
    except (OSError, subprocess.SubprocessError) as e:
        _report({"spawn_error": f"{type(e).__name__}: {e}"})
        return 70
    _report({"runner_pid": proc.pid})
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # our copy of the grader's pipe: its EOF then means the program's are gone
    assert proc.stdin is not None
    with contextlib.suppress(OSError):
        proc.stdin.write(json.dumps(request["program"]).encode("utf-8", errors="surrogatepass"))
    with contextlib.suppress(OSError):
        proc.stdin.close()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)  # the grader's stop (a write, or EOF)
    poll_s = 0.05
    try:
        pidfd = os.pidfd_open(proc.pid)
        selector.register(pidfd, selectors.EVENT_READ)
        poll_s = 5.0
    except (AttributeError, OSError):
        pass
    end = time.monotonic() + float(request["hard_s"])
    while proc.poll() is None:
        left = end - time.monotonic()
        if left <= 0:
            break
        if any(key.fd == 0 for key, _ in selector.select(min(left, poll_s))):
            break
    _report({"killed": kill_descendants()})
    return 0


def main(argv: list[str]) -> int:
    role = argv[1] if len(argv) > 1 else ""
    if role == "supervise":
        return supervise()
    if role == "run":
        return run()
    print("usage: lcb_harness.py supervise|run (started by loadgen_sut.scoring.code_exec only)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
