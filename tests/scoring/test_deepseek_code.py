"""LiveCodeBench code execution for deepseek-r1 (loadgen_sut.scoring.code_exec): the opt-in runs generated
programs in a limited child process; problems load from code_generation_lite records."""

from __future__ import annotations

import base64
import json
import os
import pickle
import time
import zlib
from pathlib import Path

import pytest

from checker.findings import UnusableInput
from loadgen_sut.scoring.code_exec import CodeExecution, code_execution, run_program
from loadgen_sut.scoring.code_problems import CodeProblem, CodeTest, load_code_problems, problem_from_record
from loadgen_sut.scoring.deepseek import score_deepseek


def packed(tests: list[dict[str, str]]) -> str:
    """Private tests as code_generation_lite stores them: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def lcb_record(
    qid: str, public: list[dict[str, str]], private: list[dict[str, str]], fn: str | None = None
) -> dict[str, str]:
    return {
        "question_id": qid,
        "question_title": f"problem {qid}",
        "public_test_cases": json.dumps(public),
        "private_test_cases": packed(private),
        "metadata": json.dumps({"func_name": fn} if fn else {}),
    }


DOUBLE = lcb_record(
    "double",
    [{"input": "3\n", "output": "6\n", "testtype": "stdin"}],
    [
        {"input": "21\n", "output": "42\n", "testtype": "stdin"},
        {"input": "0.5\n", "output": "1.0", "testtype": "stdin"},
    ],
)
TWO_SUM = lcb_record(
    "two-sum",
    [{"input": "[2, 7, 11]\n9", "output": "[0, 1]", "testtype": "functional"}],
    [{"input": "[3, 3]\n6", "output": "[0, 1]", "testtype": "functional"}],
    fn="twoSum",
)


def stdin_problem(*pairs: tuple[str, str]) -> CodeProblem:
    return CodeProblem(
        question_id="p", tests=tuple(CodeTest(input=i, output=o, functional=False) for i, o in pairs)
    )


def execution(problems: dict[str, CodeProblem] | None = None, **limits: int) -> CodeExecution:
    return CodeExecution(problems=problems or {}, source="test", **limits)


def test_problems_load_with_packed_private_tests(tmp_path: Path) -> None:
    f = tmp_path / "test.jsonl"
    f.write_text(json.dumps(DOUBLE) + "\n\n" + json.dumps(TWO_SUM) + "\n")
    problems = load_code_problems(f)
    assert sorted(problems) == ["double", "two-sum"]
    assert [t.input for t in problems["double"].tests] == ["3\n", "21\n", "0.5\n"]  # public, then private
    assert problems["two-sum"].fn_name == "twoSum" and all(t.functional for t in problems["two-sum"].tests)
    assert load_code_problems(tmp_path) == problems  # a directory of JSONL files


def test_packed_tests_refuse_classes() -> None:
    evil = base64.b64encode(zlib.compress(pickle.dumps(os.system))).decode()  # a global reference
    with pytest.raises(ValueError, match="neither JSON nor"):
        problem_from_record({**DOUBLE, "private_test_cases": evil})


def test_bad_problem_files(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps(DOUBLE) + "\n" + json.dumps({"question_id": "x", "public_test_cases": "[]"}) + "\n"
    )
    with pytest.raises(UnusableInput, match="no test cases") as err:
        load_code_problems(f)
    assert err.value.line == 2
    with pytest.raises(UnusableInput, match="not found"):
        load_code_problems(tmp_path / "missing.jsonl")


def test_stdin_programs(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(DOUBLE) + "\n")
    ex = code_execution(f, test_timeout_s=10)
    problem = ex.problems["double"]
    ok = run_program("x = float(input())\nprint(int(x * 2) if x.is_integer() else x * 2)", problem, ex)
    assert ok.passed and ok.tests_run == 3, ok.reason
    wrong = run_program("print(int(float(input())) * 3)", problem, ex)
    assert not wrong.passed and wrong.reason == "test 1: wrong answer"
    crash = run_program("raise ValueError('no')", problem, ex)
    assert not crash.passed and "runtime error ValueError" in crash.reason


def test_decimal_comparison_and_main_guard() -> None:
    ex = execution(test_timeout_s=10)
    problem = stdin_problem(("3\n", "6.0\n"), ("21\n", "42\n"))
    code = "import sys\ndef main():\n    print(float(sys.stdin.readline()) * 2)\nif __name__ == '__main__':\n    main()"
    # 6.0 == 6.0 as text; 42.0 vs 42 are equal decimals.
    assert run_program(code, problem, ex).passed


def test_functional_program() -> None:
    problem = problem_from_record(TWO_SUM)
    code = (
        "class Solution:\n"
        "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"  # List from the preamble
        "        seen = {}\n"
        "        for i, n in enumerate(nums):\n"
        "            if target - n in seen:\n"
        "                return (seen[target - n], i)\n"  # a tuple counts as a list
        "            seen[n] = i\n"
    )
    run = run_program(code, problem, execution(test_timeout_s=10))
    assert run.passed and run.tests_run == 2, run.reason
    missing = run_program("class Solution:\n    pass\n", problem, execution(test_timeout_s=10))
    assert not missing.passed and "no function twoSum" in missing.reason


def test_limits() -> None:
    problem = stdin_problem(("1\n", "1\n"))
    slow = run_program("while True:\n    pass", problem, execution(test_timeout_s=1))
    assert not slow.passed and "time limit" in slow.reason
    hog = run_program(
        "x = bytearray(1024 ** 3)\nprint(1)",
        problem,
        execution(memory_bytes=256 * 1024**2, test_timeout_s=10),
    )
    assert not hog.passed and "MemoryError" in hog.reason
    # exit() is disabled as in LiveCodeBench's reliability_guard; sys.exit ends a run normally.
    assert not run_program("print(1)\nexit()", problem, execution(test_timeout_s=10)).passed
    assert run_program("import sys\nprint(1)\nsys.exit(0)", problem, execution(test_timeout_s=10)).passed


def test_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERENCE_AUDIT_SECRET", "s3cret")
    ex = execution(test_timeout_s=10)
    env = run_program(
        "import os\nprint(os.environ.get('INFERENCE_AUDIT_SECRET'))", stdin_problem(("\n", "None\n")), ex
    )
    assert env.passed, env.reason  # the caller's environment does not reach the program
    destructive = run_program("import os\nos.system('true')\nprint(1)", stdin_problem(("\n", "1\n")), ex)
    assert not destructive.passed and "TypeError" in destructive.reason  # os.system is disabled
    where = (
        "import os\nprint(os.listdir('.') == [] and 'lcb-run-' in os.environ['HOME'] == os.environ['TMPDIR'])"
    )
    run = run_program(where, stdin_problem(("\n", "True\n")), ex)
    assert run.passed, run.reason  # runs in an empty temporary directory, also its HOME and TMPDIR


def test_code_samples_scored_in_parallel(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(DOUBLE) + "\n")
    ex = code_execution(f, test_timeout_s=10, workers=2)
    right = "```python\nx = float(input())\nprint(int(x * 2) if x.is_integer() else x * 2)\n```"
    score = score_deepseek(
        qsl_idx=[0, 1, 2, 3],
        outputs=[right, "```python\nprint(0)\n```", right, "Answer: A"],
        token_counts=[1, 1, 1, 1],
        truths=["double", "double", "unknown-id", "A"],
        subset_names=["livecodebench"] * 3 + ["gpqa"],
        code=ex,
    )
    assert [g.correct for g in score.grades] == [True, False, None, True]  # unknown problem: not scored
    assert score.grades[2].note is not None and "not in" in score.grades[2].note
    assert score.exact_match is None and score.exact_match_scored == pytest.approx(200 / 3)


def test_stdin_as_livecodebench_patches_it() -> None:
    ex = execution(test_timeout_s=10)
    # Iterating sys.stdin yields lines with their newline; readline() yields them without.
    lens = "import sys\nfor line in sys.stdin:\n    print(len(line))"
    assert run_program(lens, stdin_problem(("ab\ncd\n", "3\n3\n")), ex).passed
    first = "import sys\nprint(len(sys.stdin.readline()))"
    assert run_program(first, stdin_problem(("ab\ncd\n", "2\n")), ex).passed
    # LiveCodeBench instantiates Solution whenever the text says "class Solution": a stdin program
    # defining one fails there, and here.
    quirk = run_program("class Solution:\n    pass\nprint(1)", stdin_problem(("\n", "1\n")), ex)
    assert not quirk.passed and "AttributeError" in quirk.reason


def _packed_raw(pickled: bytes) -> str:
    return base64.b64encode(zlib.compress(pickled, 9)).decode()


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
def test_packed_tests_of_every_pickle_protocol(protocol: int) -> None:
    for tests in ([{"input": "1\n", "output": "2\n", "testtype": "stdin"}], [{"input": "é" * 70_000, "output": "x", "testtype": "stdin"}]):
        record = {**DOUBLE, "private_test_cases": _packed_raw(pickle.dumps(json.dumps(tests), protocol=protocol))}
        assert [t.input for t in problem_from_record(record).tests][1:] == [tests[0]["input"]]


@pytest.mark.parametrize(
    ("pickled", "match"),
    [
        pytest.param(pickle.dumps(json.dumps([]), protocol=0), "not a pickle of one string", id="protocol-0"),
        pytest.param(pickle.dumps([{"input": "1", "output": "2", "testtype": "stdin"}]), "not a pickle of one string", id="a-list"),
        pytest.param(pickle.dumps("[]")[:-1], "not a pickle of one string", id="no-stop"),
        pytest.param(pickle.dumps("[]") + b"garbage", "not a pickle of one string", id="trailing"),
        # a pickle that declares 2 bytes, followed by 64 MiB: inflated no further than the declaration allows
        pytest.param(pickle.dumps("[]") + b"\0" * (64 << 20), "not a pickle of one string", id="lying-length"),
        pytest.param(pickle.dumps(b"[]"), "not a pickle of one string", id="bytes"),
    ],
)
def test_packed_tests_must_be_one_pickled_string(pickled: bytes, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        problem_from_record({**DOUBLE, "private_test_cases": _packed_raw(pickled)})


def test_packed_tests_above_the_cap_are_refused_from_their_declared_length(monkeypatch: pytest.MonkeyPatch) -> None:
    # what the red team sent: a 1.9 MB line packing a 1.5 GB string (here 2 MiB over a lowered cap); the pickle's
    # declared length refuses it before it is inflated
    monkeypatch.setattr("loadgen_sut.scoring.code_problems.MAX_TEST_CASES_BYTES", 1 << 20)
    calls: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self) -> None:
            self._d = real()

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            out = self._d.decompress(data, max_length)
            calls.append(len(out))
            return out

        def __getattr__(self, name: str) -> object:
            return getattr(self._d, name)

    monkeypatch.setattr("loadgen_sut.scoring.code_problems.zlib.decompressobj", Counting)
    bomb = _packed_raw(pickle.dumps(" " * (2 << 20)))
    with pytest.raises(ValueError, match=f"{(2 << 20)} bytes decompressed, above the {1 << 20} byte limit"):
        problem_from_record({**DOUBLE, "private_test_cases": bomb})
    assert sum(calls) < 64  # the head only


def test_the_red_team_bomb_is_refused_at_once(tmp_path: Path) -> None:
    # a 1.5 GB string, zlib-compressed, in one line: refused from its declared length, nothing inflated
    text = zlib.compressobj(9)
    head = b"\x80\x04X" + (1_500_000_000).to_bytes(4, "little")
    blob = text.compress(head) + text.compress(b" " * (16 << 20)) + text.flush()  # the first 16 MiB are enough
    f = tmp_path / "bomb.jsonl"
    f.write_text(json.dumps({**DOUBLE, "private_test_cases": base64.b64encode(blob).decode()}) + "\n")
    with pytest.raises(UnusableInput, match="1500000000 bytes decompressed, above the") as err:
        load_code_problems(f)
    assert err.value.line == 1 and err.value.path == str(f)


@pytest.mark.parametrize(
    ("content", "match", "line"),
    [
        pytest.param("[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 100 levels", 1, id="deep"),
        pytest.param(json.dumps(DOUBLE) + "\n" + json.dumps({**DOUBLE, "public_test_cases": "[" * 5000 + "]" * 5000}) + "\n", "nested deeper", 2, id="deep-tests"),
        pytest.param(json.dumps(DOUBLE) + "\n" + json.dumps({**DOUBLE, "metadata": '{"a": ' + "1" * 500 + "}"}) + "\n", "number too long", 2, id="metadata"),
        pytest.param(json.dumps(DOUBLE) + '\n{"question_id": "a\\u0000\u0000"}\n', "NUL byte", 2, id="nul"),
    ],
)
def test_hostile_problem_files_name_file_and_line(tmp_path: Path, content: str, match: str, line: int) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(content)
    with pytest.raises(UnusableInput, match=match) as err:
        load_code_problems(f)
    assert err.value.line == line and err.value.path == str(f)


def test_problem_lines_end_at_newline_only(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    titled = {**DOUBLE, "question_title": "a\u2028b\u0085c"}
    f.write_bytes((json.dumps(titled, ensure_ascii=False) + "\r\n\n" + json.dumps({"question_id": "x"}) + "\n").encode())
    with pytest.raises(UnusableInput, match="no test cases") as err:
        load_code_problems(f)
    assert err.value.line == 3


def test_special_and_huge_problem_files_are_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as fh:
        fh.truncate(8 << 30)
    for path, match in ((fifo, "a FIFO"), (Path("/dev/zero"), "a character device"), (sparse, "NUL byte")):
        t0 = time.perf_counter()
        with pytest.raises(UnusableInput, match=match):
            load_code_problems(path)
        assert time.perf_counter() - t0 < 1.0


def test_a_line_longer_than_the_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("loadgen_sut.scoring.code_problems.MAX_LINE_BYTES", 1 << 20)
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(DOUBLE) + "\n" + json.dumps({**DOUBLE, "question_title": "x" * (3 << 20)}) + "\n")
    with pytest.raises(UnusableInput, match=f"a line longer than {1 << 20} bytes") as err:
        load_code_problems(f)
    assert err.value.line == 2
