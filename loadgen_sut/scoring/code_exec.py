"""Execute model-generated code against LiveCodeBench tests, only when the user asks for it.

Executing model output is dangerous. Nothing here runs unless the caller builds a
:class:`CodeExecution` (the explicit opt-in: ``--allow-code-execution`` with ``--lcb-problems``).

The design (see ``lcb_harness.py`` for the two child roles):

- **The grade is decided here, in the grader's process, from data only.** The child is sent the
  program and the test *inputs* -- never the expected outputs -- and reports, one JSON line per
  test, what the program printed (stdin problems) or returned (functional problems, as a JSON
  value). Those lines are claims: the program can forge them, exit early, patch anything in its
  interpreter. A forged line can at most make its output what it wrote; it passes only when what
  it wrote is the expected output. The comparison (LiveCodeBench's rules) runs here; the first
  failing test ends the run; the per-test and per-problem time limits are enforced on this
  process's clock, not by the child.
- **Each program runs under a supervisor** (``python -I lcb_harness.py supervise``), in its own
  session, with a clean environment, no inherited descriptors and an empty temporary working
  directory (also ``HOME`` and ``TMPDIR``). The supervisor is a child subreaper: whatever the
  program starts (``posix_spawn(..., setsid=True)``, double forks, fork bombs) stays its
  descendant, and when the program ends, times out or is stopped (or when the grader dies) it
  SIGKILLs every descendant until none is left. The grader then kills what is left in the
  program's pids cgroup (when one could be made) and in the program's session.
- **When the grader runs as root the program does not**: it runs as ``nobody`` (``--code-user``),
  so it cannot read root's ``/proc/<pid>/environ`` or memory, signal the grader or the supervisor,
  or write the user's files; the supervisor also gives it an empty network namespace.
- **Limits**: CPU seconds, address space, written file size, no core files (``setrlimit`` in the
  runner before the program is compiled: no ``preexec_fn``), processes and threads
  (``RLIMIT_NPROC``, per uid: what exists now plus ``max_processes``; and a pids cgroup of
  ``max_processes`` per program where a cgroup v2 with the pids controller delegated, or a
  writable cgroup v1 pids hierarchy, exists -- the only per-program process limit).

What this does NOT give: when the grader is not root the program runs with the grader's uid and
can read its environment, memory and files (same-uid isolation only); files readable by
``nobody`` (a world-readable copy of the LiveCodeBench problems!) are readable by the program;
world-writable places (``/tmp``, ``/dev/shm``) can be written; programs run at the same time
(``workers`` > 1) share the uid and can disturb each other; without a cgroup the process limit
is shared by every process of that uid. Run it in a disposable container when in doubt.

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
import functools
import io
import json
import os
import pickle
import pwd
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from checker.findings import UnusableInput

HARNESS = Path(__file__).with_name("lcb_harness.py")
GradeT = TypeVar("GradeT")  # an evaluator's grade of one sample
JobT = TypeVar("JobT")  # an evaluator's program to run for one sample
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
    max_processes: int = Field(default=32, ge=1)  # processes + threads of one program at once
    max_output_bytes: int = Field(default=64 * 1024**2, ge=1024)  # one test's result line
    user: str = "nobody"  # who programs run as when the grader is root

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
    """The opt-in: load the problems, fix the limits, and check that programs can be started (as
    root: by the unprivileged user, with an interpreter that user can execute)."""
    execution = CodeExecution(problems=load_code_problems(problems_path), source=str(problems_path), **limits)
    _run_as(execution.python, execution.user)
    return execution


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


_SUPERVISOR_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


# ---------------------------------------------------------------- LiveCodeBench's comparison


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _as_decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(x) for x in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdout_matches(got: str, expected: str) -> bool:
    """LiveCodeBench's stdin comparison: as many stripped lines, each equal as text or as a list
    of ``Decimal`` numbers."""
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


def value_matches(got: Any, expected: str) -> bool:
    """LiveCodeBench's functional comparison: ``==`` with the JSON-decoded expected output (the
    claimed return value is plain JSON data: no object of the program's takes part)."""
    try:
        return bool(got == json.loads(expected))
    except (ValueError, RecursionError):
        return False


# ---------------------------------------------------------------- who runs the program


@dataclass(frozen=True)
class _RunAs:
    uid: int | None  # None: the grader's own uid (the grader is not root)
    gid: int | None
    python: str  # an interpreter that uid can execute


def _user_ids(name: str) -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(name)
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        if name == "nobody":
            return 65534, 65534
        raise UnusableInput(f"--code-user {name!r}: no such user") from None


def _can_run(python: str, uid: int, gid: int) -> bool:
    probe = "import sys; raise SystemExit(0 if sys.version_info >= (3, 10) else 1)"
    try:
        done = subprocess.run(
            [python, "-I", "-c", probe],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=dict(_SUPERVISOR_ENV),
            user=uid,
            group=gid,
            extra_groups=[],
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=8)
def _run_as(python: str, user: str) -> _RunAs:
    """As root: ``user``, with ``python`` if that user can execute it, else the system's python3."""
    if os.geteuid() != 0:
        return _RunAs(uid=None, gid=None, python=python)
    uid, gid = _user_ids(user)
    if uid == 0:
        raise UnusableInput(f"--code-user {user!r} is root: generated programs never run as root")
    candidates = [python, *(p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if p != python)]
    for candidate in candidates:
        if os.path.exists(candidate) and _can_run(candidate, uid, gid):
            return _RunAs(uid=uid, gid=gid, python=candidate)
    raise UnusableInput(
        f"running as root, generated programs run as {user!r}, who cannot execute {python} "
        "(nor /usr/bin/python3, Python 3.10+); install a system python3 or run in a container as a normal user"
    )


# ---------------------------------------------------------------- the pids cgroup


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fs type, super options) of each mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3:
                found.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    return found


def _under(mount_root: str, mount_point: str, path: str) -> Path:
    rel = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
    return Path(mount_point) / ("" if rel == "." else rel)


@functools.lru_cache(maxsize=1)
def _pids_cgroup_parent() -> tuple[Path, int] | None:
    """A directory where this process may make pids cgroups (and the cgroup version), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    mounts = _mounts()
    candidates: list[tuple[Path, int]] = []
    for line in lines:
        hid, controllers, path = line.split(":", 2)
        if hid == "0" and controllers == "":
            for root, point, fstype, _ in mounts:
                if fstype == "cgroup2":
                    base = _under(root, point, path)
                    with contextlib.suppress(OSError):
                        if "pids" in (base / "cgroup.subtree_control").read_text().split():
                            candidates.append((base, 2))
        elif "pids" in controllers.split(","):
            for root, point, fstype, opts in mounts:
                if fstype == "cgroup" and "pids" in opts:
                    candidates.append((_under(root, point, path), 1))
    for base, version in candidates:
        probe = base / f"inference-audit-probe-{os.getpid()}"
        try:
            probe.mkdir()
            ok = (probe / "pids.max").exists()
            probe.rmdir()
        except OSError:
            continue
        if ok:
            return base, version
    return None


class _PidsCgroup:
    """One program's pids cgroup: at most ``max_pids`` tasks, killed whole afterwards."""

    def __init__(self, path: Path, version: int) -> None:
        self.path, self.version = path, version

    @classmethod
    def make(cls, max_pids: int) -> _PidsCgroup | None:
        parent = _pids_cgroup_parent()
        if parent is None:
            return None
        path = parent[0] / f"lcb-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path, parent[1])

    def add(self, pid: int) -> bool:
        try:
            (self.path / "cgroup.procs").write_text(str(pid))
            return True
        except OSError:
            return False

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, give_up_s: float = 10.0) -> int:
        killed: set[int] = set()
        end = time.monotonic() + give_up_s
        if self.version == 2 and (self.path / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.path / "cgroup.kill").write_text("1")
        while time.monotonic() < end:
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(0.01)
        return len(killed)

    def remove(self) -> None:
        end = time.monotonic() + 5.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    return
                time.sleep(0.02)


# ---------------------------------------------------------------- leftovers by session


def _session_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat[stat.rindex(b")") + 2 :].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def _kill_session(sid: int) -> int:
    """SIGKILL every process of session ``sid`` (found through /proc), until none is left."""
    killed: set[int] = set()
    end = time.monotonic() + 10.0
    while time.monotonic() < end:
        members = [int(p) for p in os.listdir("/proc") if p.isdigit() and _session_of(p) == sid]
        if not members:
            break
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.01)
    return len(killed)


# ---------------------------------------------------------------- the record stream


class _Records:
    """JSON lines from the program's side, read against deadlines, each at most ``cap`` bytes."""

    TIMEOUT, EOF, GARBAGE, TOO_LARGE = "timeout", "eof", "garbage", "too large"

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap = fd, cap
        self.buf = bytearray()
        self.eof = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def close(self) -> None:
        self.selector.close()

    def next(self, deadline: float) -> dict[str, Any] | str:
        while (end := self.buf.find(b"\n")) < 0:
            if self.eof:
                return self.EOF
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                return self.TIMEOUT
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
                continue
            self.buf += chunk
            if len(self.buf) > self.cap and self.buf.find(b"\n") < 0:
                return self.TOO_LARGE
        line = bytes(self.buf[:end])
        del self.buf[: end + 1]
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return self.GARBAGE
        return record if isinstance(record, dict) else self.GARBAGE


STARTUP_S = 10.0  # two interpreters start before the program's first line: not the program's time
STOP_WAIT_S = 30.0


def _grade(records: _Records, problem: CodeProblem, execution: CodeExecution, start: float) -> CodeRun:
    """Read the program's claims and compare them with the expected outputs, here."""
    timeout_s = float(execution.test_timeout_s)
    budget_s = execution.wall_budget_s(problem)
    overall = start + STARTUP_S + budget_s
    load = records.next(min(overall, start + STARTUP_S + timeout_s + 1))
    if load == _Records.TIMEOUT:
        return CodeRun(passed=False, tests_run=0, reason="time limit exceeded while loading the program")
    if not isinstance(load, dict) or "load" not in load:
        return CodeRun(passed=False, tests_run=0, reason=f"no result from the program ({_what(load)})")
    if load["load"] == "timeout":
        return CodeRun(passed=False, tests_run=0, reason="time limit exceeded while loading the program")
    if load["load"] == "error":
        return CodeRun(
            passed=False, tests_run=0, reason=f"error while loading the program: {load.get('error')}"
        )
    if load["load"] == "missing":
        return CodeRun(passed=False, tests_run=0, reason=str(load.get("reason", "nothing to call")))
    if load["load"] != "ok":
        return CodeRun(passed=False, tests_run=0, reason="no result from the program (not a load record)")
    last = time.monotonic()
    for n, test in enumerate(problem.tests, start=1):
        deadline = min(overall, last + timeout_s + 1)
        rec = records.next(deadline)
        last = time.monotonic()
        if rec == _Records.TIMEOUT:
            if deadline == overall:
                return CodeRun(
                    passed=False, tests_run=n, reason=f"over the {budget_s:g} s budget of the problem"
                )
            return CodeRun(passed=False, tests_run=n, reason=f"test {n}: time limit exceeded")
        if not isinstance(rec, dict) or rec.get("test") != n:
            return CodeRun(
                passed=False, tests_run=n, reason=f"test {n}: no result from the program ({_what(rec)})"
            )
        if rec.get("timeout") is True:
            return CodeRun(passed=False, tests_run=n, reason=f"test {n}: time limit exceeded")
        if "error" in rec:
            return CodeRun(passed=False, tests_run=n, reason=f"test {n}: runtime error {rec['error']}")
        if test.functional and problem.fn_name:
            ok = "value" in rec and value_matches(rec["value"], test.output)
        else:
            ok = isinstance(rec.get("stdout"), str) and stdout_matches(rec["stdout"], test.output)
        if not ok:
            return CodeRun(passed=False, tests_run=n, reason=f"test {n}: wrong answer")
    return CodeRun(passed=True, tests_run=len(problem.tests), reason="all tests passed")


def _what(rec: dict[str, Any] | str) -> str:
    if rec == _Records.EOF:
        return "it ended without one"
    if rec == _Records.TOO_LARGE:
        return "over the output limit"
    if rec == _Records.GARBAGE:
        return "a line that is not a result"
    return "an unexpected result line"


def _status(text: bytes) -> dict[str, Any]:
    """The supervisor's reports (its stderr: the program has no descriptor of it)."""
    status: dict[str, Any] = {}
    for line in text.decode("utf-8", errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            rec = json.loads(line)
            if isinstance(rec, dict):
                status.update(rec)
    return status


def _workdir(run_as: _RunAs) -> str:
    base = "/tmp" if run_as.uid is not None and os.path.isdir("/tmp") else None
    path = tempfile.mkdtemp(prefix="lcb-run-", dir=base)
    if run_as.uid is not None and run_as.gid is not None:
        os.chown(path, run_as.uid, run_as.gid)
    return path


def run_code_jobs(
    graded: Sequence[GradeT | JobT],
    job_type: type[JobT],
    run: Callable[[JobT, CodeExecution], GradeT],
    code: CodeExecution | None,
) -> list[GradeT]:
    """``graded`` with every item of ``job_type`` (a program to run) replaced by its grade, ``run(job, code)``, in
    order; the jobs run ``code.workers`` at a time, each in its own sandboxed child process (:func:`run_program`).
    A job without ``code`` (the opt-in to run generated programs) is an error of the evaluator that made it."""
    jobs = {k: g for k, g in enumerate(graded) if isinstance(g, job_type)}
    done: dict[int, GradeT] = {}
    if jobs:
        if code is None:
            raise ValueError("a program to run, without the code-execution opt-in")
        execution = code
        with ThreadPoolExecutor(max_workers=execution.workers) as pool:
            done = dict(zip(jobs, pool.map(lambda job: run(job, execution), jobs.values()), strict=True))
    # an item that is not a job is a grade already (mypy does not narrow a TypeVar union by isinstance)
    return [done[k] if k in jobs else cast(GradeT, g) for k, g in enumerate(graded)]


def run_program(code: str, problem: CodeProblem, execution: CodeExecution) -> CodeRun:
    """Run ``code`` on ``problem``'s test inputs in an isolated child; grade its outputs here."""
    run_as = _run_as(execution.python, execution.user)
    workdir = _workdir(run_as)
    cgroup = _PidsCgroup.make(execution.max_processes + 1)  # + the supervisor
    budget_s = execution.wall_budget_s(problem)
    request = {
        "python": run_as.python,
        "uid": run_as.uid,
        "gid": run_as.gid,
        "workdir": workdir,
        "env": _child_env(workdir),
        "hard_s": STARTUP_S + budget_s + 5,
        "program": {
            "code": code,
            "inputs": [t.input for t in problem.tests],  # never the expected outputs
            "fn_name": problem.fn_name,
            "timeout_s": execution.test_timeout_s,
            "limits": {
                "cpu_s": int(budget_s) + 1,
                "memory_bytes": execution.memory_bytes,
                "max_file_bytes": execution.max_file_bytes,
                "processes": execution.max_processes * execution.workers,
            },
        },
    }
    sup = subprocess.Popen(
        [execution.python, "-I", str(HARNESS), "supervise"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        env=dict(_SUPERVISOR_ENV),
        close_fds=True,
        start_new_session=True,
    )
    assert sup.stdin is not None and sup.stdout is not None and sup.stderr is not None
    records = _Records(sup.stdout.fileno(), execution.max_output_bytes)
    try:
        if cgroup is not None and not cgroup.add(sup.pid):
            cgroup.remove()
            cgroup = None
        start = time.monotonic()
        try:
            sup.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
            sup.stdin.flush()
        except OSError:
            pass
        verdict = _grade(records, problem, execution, start)
    finally:
        with contextlib.suppress(OSError):
            sup.stdin.close()  # the supervisor's stop: it kills everything the program started
        try:
            sup.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(sup.pid, signal.SIGKILL)
            sup.wait()
        status = _status(sup.stderr.read())
        sup.stderr.close()
        records.close()
        sup.stdout.close()
        if cgroup is not None:
            cgroup.kill_all()
            cgroup.remove()
        runner = status.get("runner_pid")
        if isinstance(runner, int) and runner > 1:
            _kill_session(runner)
        shutil.rmtree(workdir, ignore_errors=True)
    if "spawn_error" in status:
        raise RuntimeError(f"could not start a generated program: {status['spawn_error']}")
    return verdict
