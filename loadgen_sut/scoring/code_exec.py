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
base64 of zlib of a pickled JSON string as the lite release stores them — never unpickled: the one
string is read from the pickle's bytes, any other pickle refused) and ``metadata`` (JSON with ``func_name`` for
LeetCode problems). A problem passes when all its public then private tests pass (pass@1 of one
sample), each within ``test_timeout_s`` (the reference's ``timeout=60``).

The problems are read by :mod:`loadgen_sut.scoring.code_problems`; the user, the pids cgroup and the session
cleanup are :mod:`loadgen_sut.scoring.code_sandbox`.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from loadgen_sut.scoring.code_problems import CodeProblem, load_code_problems
from loadgen_sut.scoring.code_sandbox import SUPERVISOR_ENV, PidsCgroup, RunAs, kill_session, run_as

HARNESS = Path(__file__).with_name("lcb_harness.py")
GradeT = TypeVar("GradeT")  # an evaluator's grade of one sample
JobT = TypeVar("JobT")  # an evaluator's program to run for one sample
REFERENCE_TEST_TIMEOUT_S = 60  # eval_accuracy.py passes timeout=60 to lcb_runner


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


def code_execution(problems_path: Path, **limits: Any) -> CodeExecution:
    """The opt-in: load the problems, fix the limits, and check that programs can be started (as
    root: by the unprivileged user, with an interpreter that user can execute)."""
    execution = CodeExecution(problems=load_code_problems(problems_path), source=str(problems_path), **limits)
    run_as(execution.python, execution.user)
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


def _workdir(who: RunAs) -> str:
    base = "/tmp" if who.uid is not None and os.path.isdir("/tmp") else None
    path = tempfile.mkdtemp(prefix="lcb-run-", dir=base)
    if who.uid is not None and who.gid is not None:
        os.chown(path, who.uid, who.gid)
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
    who = run_as(execution.python, execution.user)
    workdir = _workdir(who)
    cgroup = PidsCgroup.make(execution.max_processes + 1)  # + the supervisor
    budget_s = execution.wall_budget_s(problem)
    request = {
        "python": who.python,
        "uid": who.uid,
        "gid": who.gid,
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
        env=dict(SUPERVISOR_ENV),
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
            kill_session(runner)
        shutil.rmtree(workdir, ignore_errors=True)
    if "spawn_error" in status:
        raise RuntimeError(f"could not start a generated program: {status['spawn_error']}")
    return verdict
