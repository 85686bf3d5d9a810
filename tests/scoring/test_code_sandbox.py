"""Generated programs cannot set their own grade (loadgen_sut.scoring.code_exec with --allow-code-execution).

Each attack is a generated program. The grade is decided in the grader from the program's claimed
outputs; the program runs under a supervisor that kills everything it started; as root it runs as
``nobody``. Every test also checks that nothing the program started is still running.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadgen_sut.scoring import code_exec, code_sandbox
from loadgen_sut.scoring.code_exec import CodeExecution, CodeRun, run_program
from loadgen_sut.scoring.code_problems import CodeProblem, CodeTest
from loadgen_sut.scoring.lcb_harness import RUNNER_MARKER

ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="programs run as another user only when the grader is root")


def stdin_problem(*pairs: tuple[str, str]) -> CodeProblem:
    return CodeProblem(
        question_id="p", tests=tuple(CodeTest(input=i, output=o, functional=False) for i, o in pairs)
    )


DOUBLE = stdin_problem(("3\n", "6\n"), ("21\n", "42\n"), ("5\n", "10\n"))
TWO_SUM = CodeProblem(
    question_id="two-sum",
    tests=(
        CodeTest(input="[2, 7, 11]\n9", output="[0, 1]", functional=True),
        CodeTest(input="[3, 3]\n6", output="[0, 1]", functional=True),
    ),
    fn_name="twoSum",
)


def execution(**limits: int) -> CodeExecution:
    return CodeExecution(problems={}, source="test", **{"test_timeout_s": 5, **limits})


def processes_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (this process excepted)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    """No runner (nor a fork of one) survives any test here."""
    yield
    assert processes_with(RUNNER_MARKER) == []


def grade(code: str, problem: CodeProblem = DOUBLE, **limits: int) -> CodeRun:
    return run_program(code, problem, execution(**limits))


RIGHT = "print(int(input()) * 2)"


def test_a_right_and_a_wrong_program() -> None:
    assert grade(RIGHT).passed
    wrong = grade("print(int(input()) * 3)")
    assert not wrong.passed and wrong.reason == "test 1: wrong answer"


def write_everywhere(line: bytes) -> str:
    return (
        "import os\n"
        "for fd in range(256):\n"
        "    try:\n"
        f"        os.write(fd, {line!r})\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)\n"
    )


def test_writing_a_verdict_to_every_descriptor_and_exiting() -> None:
    """The old harness's result fd: the verdict JSON on every fd, then os._exit(0); and result
    lines of the new protocol with a made-up output."""
    verdict = write_everywhere(b'{"passed": true, "tests_run": 3, "reason": "all tests passed"}')
    run = grade(verdict)
    assert not run.passed, run.reason
    for claims in (b'{"test": 1, "stdout": "forged"}\n', b'{"load": "ok"}\n{"test": 1, "stdout": "6"}\n'):
        run = grade(write_everywhere(claims))
        assert not run.passed and run.reason.startswith("test 1: "), run.reason


def test_claims_of_the_right_output_still_need_the_right_output() -> None:
    """Forging the result lines is the same as printing: only the expected output passes, and the
    program is never given it."""
    token = f"expected-{uuid.uuid4().hex}"
    hunt = (  # anything that looks like the token, anywhere in the interpreter
        "import gc, re, sys\n"
        "pattern = re.compile('expected-' + '[0-9a-f]{32}')\n"
        "found = [m.group() for o in gc.get_objects() for m in [pattern.search(repr(o))] if m]\n"
        "f = sys._getframe()\n"
        "while f is not None:\n"
        "    found += pattern.findall(repr(f.f_locals))\n"
        "    f = f.f_back\n"
        "print(found[0] if found else 'not found')\n"
    )
    run = grade(hunt, stdin_problem(("\n", token)))
    assert not run.passed and run.reason == "test 1: wrong answer"  # the output never reaches it


def test_monkey_patching_the_comparer() -> None:
    patch_everything = (
        "import sys\n"
        "yes = lambda *a, **k: True\n"
        "for m in list(sys.modules.values()):\n"
        "    for name in ('stdout_matches', 'value_matches', '_lines', 'json_value', 'run_stdin', 'emit'):\n"
        "        try:\n"
        "            setattr(m, name, yes)\n"
        "        except Exception:\n"
        "            pass\n"
        "print('wrong')\n"
    )
    run = grade(patch_everything)
    assert not run.passed and run.reason == "test 1: wrong answer"
    equal_to_anything = (
        "class Anything:\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "    def __ne__(self, other):\n"
        "        return False\n"
        "class Solution:\n"
        "    def twoSum(self, nums, target):\n"
        "        return Anything()\n"
    )
    run = grade(equal_to_anything, TWO_SUM)
    assert not run.passed and run.reason == "test 1: wrong answer"


def test_posix_spawn_with_setsid_does_not_outlive_the_grading() -> None:
    marker = f"lcb-escapee-{uuid.uuid4().hex}"
    escape = (
        "import posix, sys\n"
        "py = sys.executable\n"
        "sleeper = 'import time; time.sleep(300)'\n"
        f"posix.posix_spawn(py, [py, '-c', sleeper, {marker!r}], {{}}, setsid=True)\n"
        # a double fork: the middle process exits, its child is orphaned in a new session
        "middle = 'import os, sys, time; os.setsid(); os.posix_spawn(sys.executable, sys.argv, {}); os._exit(0)'\n"
        f"posix.posix_spawn(py, [py, '-c', middle, '-c', sleeper, {marker!r}], {{}}, setsid=True)\n"
        "print(int(input()) * 2)\n"
    )
    start = time.monotonic()
    run = grade(escape)
    assert run.passed, run.reason  # escaping changes nothing about the grade
    assert time.monotonic() - start < 30
    assert processes_with(marker) == []
    hang = escape.replace("print(int(input()) * 2)\n", "import time\ntime.sleep(300)\n")
    run = grade(hang, test_timeout_s=1)
    assert not run.passed and "time limit" in run.reason
    assert processes_with(marker) == []


def test_a_fork_bomb_is_bounded_and_killed() -> None:
    bomb = "import posix\nwhile True:\n    try:\n        posix.fork()\n    except OSError:\n        pass\n"
    start = time.monotonic()
    run = grade(bomb, test_timeout_s=2, max_processes=16)
    assert not run.passed and "time limit" in run.reason, run.reason
    assert time.monotonic() - start < 60
    # the autouse fixture checks that no fork of the runner survives


@as_root
def test_posix_unlink_of_a_file_outside_its_directory() -> None:
    canary_dir = Path(tempfile.mkdtemp(prefix="lcb-canary-"))
    try:
        canary_dir.chmod(0o755)  # like a user's own directory: others may enter, not write
        canary = canary_dir / "keep-me"
        canary.write_text("canary")
        unlink = (
            "import posix\n"
            "try:\n"
            f"    posix.unlink({str(canary)!r})\n"
            "    print('deleted')\n"
            "except OSError as e:\n"
            "    print(type(e).__name__)\n"
        )
        run = grade(unlink, stdin_problem(("\n", "PermissionError\n")))
        assert run.passed, run.reason  # the program saw the refusal
        assert canary.read_text() == "canary"
    finally:
        shutil.rmtree(canary_dir)


def grade_in_a_grader_with(env: dict[str, str], code: str, problem: CodeProblem) -> CodeRun:
    """Grade in a fresh grader process whose initial environment (what /proc/<pid>/environ shows;
    a setenv in this process would not be there) holds ``env``."""
    script = (
        "import sys\n"
        "from loadgen_sut.scoring.code_exec import CodeExecution, run_program\n"
        "from loadgen_sut.scoring.code_problems import CodeProblem\n"
        "problem = CodeProblem.model_validate_json(sys.argv[2])\n"
        "ex = CodeExecution(problems={}, source='test', test_timeout_s=5)\n"
        "print(run_program(sys.argv[1], problem, ex).model_dump_json())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, code, problem.model_dump_json()],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return CodeRun.model_validate_json(done.stdout.strip().splitlines()[-1])


def test_the_parents_environment_is_not_readable() -> None:
    canary = f"canary-{uuid.uuid4().hex}"
    read_ppid = (  # the supervisor (the parent) has a clean environment
        "import os\n"
        "try:\n"
        "    env = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "except OSError:\n"
        "    env = b''\n"
        f"print('LEAK' if {canary!r}.encode() in env or {canary!r} in str(os.environ) else 'clean')\n"
    )
    run = grade_in_a_grader_with(
        {"INFERENCE_AUDIT_CANARY": canary}, read_ppid, stdin_problem(("\n", "clean\n"))
    )
    assert run.passed, run.reason


@as_root
def test_no_process_environment_of_the_grader_is_readable() -> None:
    """Up the whole tree and across /proc: as nobody, root's environ files are closed."""
    canary = f"canary-{uuid.uuid4().hex}"
    scan = (
        "import os\n"
        "leaks = 0\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        f"        leaks += {canary!r}.encode() in open(f'/proc/{{pid}}/environ', 'rb').read()\n"
        "    except OSError:\n"
        "        pass\n"
        "print('LEAK' if leaks else 'clean', os.getuid() != 0)\n"
    )
    run = grade_in_a_grader_with(
        {"INFERENCE_AUDIT_CANARY": canary}, scan, stdin_problem(("\n", "clean True\n"))
    )
    assert run.passed, run.reason


@as_root
def test_the_program_has_no_network() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        port = server.getsockname()[1]
        connect = (
            "import socket\n"
            "s = socket.socket()\n"
            "s.settimeout(2)\n"
            "try:\n"
            f"    s.connect(('127.0.0.1', {port}))\n"
            "    print('connected')\n"
            "except OSError:\n"
            "    print('refused')\n"
        )
        run = grade(connect, stdin_problem(("\n", "refused\n")))
        assert run.passed, run.reason  # an empty network namespace: not even the host's loopback
    finally:
        server.close()


def test_descriptors_are_not_inherited() -> None:
    with tempfile.NamedTemporaryFile(prefix="lcb-grader-secret-") as secret:  # open in the grader
        name = Path(secret.name).name
        look = (
            "import os\n"
            "links = []\n"
            "for fd in os.listdir('/proc/self/fd'):\n"
            "    try:\n"
            "        links.append(os.readlink(f'/proc/self/fd/{fd}'))\n"
            "    except OSError:\n"
            "        pass\n"
            f"print(any({name!r} in link for link in links))\n"
        )
        run = grade(look, stdin_problem(("\n", "False\n")))
        assert run.passed, run.reason


@as_root
def test_the_working_directory_is_the_programs_own() -> None:
    owner = "import os, stat\nst = os.stat('.')\nprint(st.st_uid == os.getuid() != 0, oct(stat.S_IMODE(st.st_mode)))"
    run = grade(owner, stdin_problem(("\n", "True 0o700\n")))
    assert run.passed, run.reason


def test_the_grader_own_uid_still_kills_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the grader is not root programs run with its uid: the supervisor still kills all."""
    monkeypatch.setattr(
        code_exec, "run_as", lambda python, user: code_sandbox.RunAs(uid=None, gid=None, python=sys.executable)
    )
    marker = f"lcb-escapee-{uuid.uuid4().hex}"
    escape = (
        "import posix, sys\n"
        f"posix.posix_spawn(sys.executable, [sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}],"
        " {}, setsid=True)\n"
        "print(int(input()) * 2)\n"
    )
    run = grade(escape)
    assert run.passed, run.reason
    assert processes_with(marker) == []


def test_an_output_flood_is_cut() -> None:
    run = grade("print('x' * (8 << 20))", max_output_bytes=1 << 20)
    assert not run.passed and "over the output limit" in run.reason, run.reason
