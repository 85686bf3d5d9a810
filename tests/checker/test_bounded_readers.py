"""The bounded readers of untrusted formats: a corpus of small hostile inputs per class, and a property-based fuzz
of each reader, every case bounded in time and memory.

Readers: JSON (:func:`checker.safe_json.parse_json`), YAML (:func:`checker.safe_yaml.load_yaml`), a LoadGen detail
log (:class:`checker.parsers.mllog.DetailLog`), a CSV / JSON results table (:func:`checker.audit.table.parse.load_table`),
and ``check-submission`` on a tree holding such files: each case ends in a finding or an unusable-input error
naming the file (and line), never an exception, exit 3 or a traceback.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.audit.table import parse as table_parse
from checker.cli import check as cli
from checker.findings import UnusableInput
from checker.parsers.endpoints import parse_endpoints
from checker.parsers.mllog import parse_detail_text
from checker.parsers.mllog_index import MAX_PROBLEMS
from checker.safe_json import MAX_NUMBER_DIGITS, JsonProblem, parse_json
from checker.safe_yaml import YamlRefused, load_yaml

SUBMITTER = "closed/RedHat"
RESULT = f"{SUBMITTER}/results/XE8640_4xH100_vLLM/llama3.1-8b/Offline"
DETAIL = f"{RESULT}/performance/run_1/mlperf_log_detail.txt"
CASE_S = 2.0  # wall-clock bound of one reader case (they take milliseconds)
CASE_MB = 64.0  # Python allocations of one reader case (traced)


@contextmanager
def bounded(seconds: float = CASE_S, megabytes: float | None = CASE_MB) -> Iterator[None]:
    """Fail when the block takes longer than ``seconds`` or its Python allocations peak above ``megabytes``
    (None: time only; tracing slows a pure-Python parser some fortyfold)."""
    if megabytes is not None:
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] if megabytes is not None else 0
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.2f} s"
    assert megabytes is None or peak < megabytes * 2**20, f"peak {peak / 2**20:.1f} MB"


# ---- JSON -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "what", "line"),
    [
        pytest.param('{"a": 1,\n "a": 2}', "appears twice", 2, id="duplicate-key"),
        pytest.param('{"score": 10.0,\n "pass": true,\n "score": 99.0}', "appears twice", 3, id="dup-score"),
        pytest.param(
            '{"x": "' + "1" * 300 + '",\n "v": ' + "9" * 401 + "}", "number too long", 2, id="int-401"
        ),
        pytest.param("[1,\n2,\n-" + "7" * 5000 + "]", "number too long", 3, id="int-5000"),
        pytest.param("[0." + "5" * 200 + "]", "number too long", 1, id="float-200"),
        pytest.param("[1e" + "9" * 150 + "]", "number too long", 1, id="exponent-150"),
    ],
)
def test_json_refusals_name_the_line(text: str, what: str, line: int) -> None:
    with bounded(), pytest.raises(JsonProblem, match=what) as info:
        parse_json(text)
    assert info.value.lineno == line


def test_json_accepts_what_loadgen_writes() -> None:
    got = parse_json('{"u64": 18446744073709551615, "f": 45.1334, "n": NaN, "i": Infinity, "big": 1e999}')
    assert got["u64"] == 2**64 - 1 and got["f"] == 45.1334
    assert math.isnan(got["n"]) and got["i"] == math.inf and got["big"] == math.inf
    assert parse_json("[" + "9" * MAX_NUMBER_DIGITS + "]") == [int("9" * MAX_NUMBER_DIGITS)]
    # the same key in two objects is not a repetition; a long digit run inside a string is text
    assert parse_json('[{"a": 1}, {"a": 2}, "' + "1" * 500 + '"]')[1] == {"a": 2}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=2000),
        st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=50)),
            lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children),
            max_leaves=50,
        ).map(json.dumps),
    )
)
def test_fuzz_parse_json(text: str) -> None:
    with bounded():
        try:
            parse_json(text)
        except JsonProblem as exc:
            assert exc.lineno is None or 1 <= exc.lineno <= text.count("\n") + 1


# ---- YAML -------------------------------------------------------------------------------------------------
def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{','.join(f'*a{i - 1}' for _ in range(9))}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "what", "line"),
    [
        pytest.param(_laughs(), "anchor", 1, id="billion-laughs"),
        pytest.param("version: &v [*v]\n", "anchor", 1, id="self-alias"),
        pytest.param("a: 1\nb:\n  c: 2\n  c: 3\n", "appears twice", 4, id="duplicate-key"),
        pytest.param("n: " + "9" * 200 + "\n", "number too long", 1, id="int-200"),
        pytest.param("x: 1\ny: " + "[" * 150 + "]" * 150 + "\n", "nested deeper", 2, id="deep"),
    ],
)
def test_yaml_refusals_name_the_line(text: str, what: str, line: int) -> None:
    with bounded(), pytest.raises(YamlRefused, match=what) as info:
        load_yaml(text)
    assert info.value.line == line


def test_yaml_is_read_with_yaml_1_2_core_scalars() -> None:
    got = load_yaml(
        "a: yes\nb: 0x1F\nc: 59:59\nd: 0o17\ne: 2025-09-01\nf: .inf\ng: -.Inf\nh: 1_000\n"
        "i: true\nj: ~\nk: 12\nl: 1.5e3\nm: on\n"
    )
    assert got == {
        "a": "yes", "b": "0x1F", "c": "59:59", "d": "0o17", "e": "2025-09-01", "f": math.inf, "g": -math.inf,
        "h": "1_000", "i": True, "j": None, "k": 12, "l": 1500.0, "m": "on",
    }  # fmt: skip


def test_yaml_base_60_of_megabytes_is_text_at_once() -> None:
    text = "version: " + "59:" * 1_000_000 + "59\n"  # 3 MB: quadratic to convert as YAML 1.1 does
    with bounded(seconds=10.0, megabytes=None):
        got = load_yaml(text)
    assert isinstance(got["version"], str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=500),
        st.text(alphabet="&*[]{}:-,'\"!?|>#\n 0123456789abx.", max_size=500),
    )
)
def test_fuzz_load_yaml(text: str) -> None:
    with bounded(), suppress(yaml.YAMLError):
        load_yaml(text)


def test_endpoints_config_and_results_are_read_bounded() -> None:
    run = parse_endpoints(("config.yaml", "a: &x [*x]\n", None), '{"x": 1}', '{"score": 0.1,\n"score": 0.9}')
    messages = [p.message for p in run.problems]
    assert run.config is None and run.accuracy is None
    assert any("config.yaml is not valid YAML (line 1)" in m and "anchor" in m for m in messages), messages
    assert any("appears twice" in m for m in messages), messages


# ---- LoadGen detail log -----------------------------------------------------------------------------------
_GOOD = (
    ':::MLLOG {"key": "%s", "value": %s, "time_ms": 1.5, "namespace": "mlperf::logging", "event_type": '
    '"POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, "file": "a.cc", "line_no": 1}}'
)


def test_detail_log_malformed_lines_are_capped() -> None:
    text = _GOOD % ("loadgen_version", '"5.1"') + "\n" + ":::MLLOG {bad\n" * 200_000
    with bounded(seconds=10.0, megabytes=200.0):
        log = parse_detail_text(text, "mlperf_log_detail.txt")
        problems = log.problems
    assert len(problems) == MAX_PROBLEMS + 1
    assert [p.line for p in problems[:MAX_PROBLEMS]] == list(range(2, 2 + MAX_PROBLEMS))
    assert problems[-1].line == 2 + MAX_PROBLEMS
    assert problems[-1].message == "… and 199,990 more malformed lines (not listed)"
    assert log.str_value("loadgen_version") == "5.1"


@pytest.mark.parametrize(
    "value", ["9" * 401, "-" + "9" * 150, "[1, " + "9" * 120 + "]", '{"a": ' + "9" * 101 + "}"]
)
def test_detail_log_long_number_is_a_problem_at_its_line(value: str) -> None:
    text = _GOOD % ("loadgen_version", '"5.1"') + "\n" + _GOOD % ("result_max_latency_ns", value) + "\n"
    log = parse_detail_text(text, "mlperf_log_detail.txt")
    assert log.value("result_max_latency_ns") is None
    assert [(p.line, "number too long" in p.message) for p in log.problems] == [(2, True)]


def test_detail_log_duplicate_key_in_a_record_keeps_the_last_as_the_official_parser() -> None:
    # json.loads (the official MLPerfLog) keeps the last value; a hook refusing it would cost a third more per record
    line = _GOOD % ("result_validity", '"INVALID", "value": "VALID"')
    log = parse_detail_text(line + "\n", "mlperf_log_detail.txt")
    assert log.result_validity == "VALID" and log.problems == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=80).map(lambda t: ":::MLLOG " + t),
            st.sampled_from(["value", "result_validity", "num_errors"]).flatmap(
                lambda k: st.one_of(st.integers(), st.floats(), st.text(max_size=20)).map(
                    lambda v: _GOOD % (k, json.dumps(v))
                )
            ),
            st.text(max_size=40),
        ),
        max_size=40,
    )
)
def test_fuzz_detail_log(lines: list[str]) -> None:
    text = "\n".join(lines)
    with bounded():
        log = parse_detail_text(text, "mlperf_log_detail.txt")
        log.validate_all()
        for key in ("value", "result_validity", "num_errors"):
            log.value(key), log.float_value(key), log.int_value(key), log.bool_value(key)
        log.num_errors()
    assert len(log.problems) <= MAX_PROBLEMS + 1


# ---- results tables (CSV / JSON) -------------------------------------------------------------------------
def _table_error(tmp_path: Path, content: bytes, **patch: int) -> UnusableInput:
    path = tmp_path / "table.csv"
    path.write_bytes(content)
    with bounded(seconds=10.0, megabytes=128.0), pytest.raises(UnusableInput) as info:
        table_parse.load_table(path)
    return info.value


def test_table_csv_line_longer_than_the_cap_is_refused(tmp_path: Path) -> None:
    exc = _table_error(
        tmp_path, b"submitter,benchmark,scenario,result\n" + b"a,b,c," + b"7" * (3 << 20) + b"\n"
    )
    assert "longer than" in str(exc) and exc.line == 2


def test_table_csv_rows_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_parse, "MAX_TABLE_ROWS", 5)
    exc = _table_error(tmp_path, b"submitter,benchmark,scenario,result\n" + b"a,b,Offline,1\n" * 10)
    assert "more than 5 rows" in str(exc) and exc.line == 7


def test_table_json_with_many_columns_is_linear(tmp_path: Path) -> None:
    rows = [{f"c{i}_{j}": 1 for j in range(20)} for i in range(5000)]  # 100,000 distinct columns
    path = tmp_path / "table.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    with bounded(seconds=10.0, megabytes=512.0), suppress(UnusableInput):
        table_parse.load_table(path)


def test_table_json_duplicate_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    path.write_text(
        '[{"ID": "5.1-0001",\n "Performance_Result": 1, "Performance_Result": 2}]', encoding="utf-8"
    )
    with pytest.raises(UnusableInput, match="appears twice"):
        table_parse.load_table(path)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.binary(max_size=600) | st.text(alphabet='ab,;"\t\n\r\x001', max_size=600).map(str.encode))
def test_fuzz_table_reader(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_bytes(content)
    with bounded(), suppress(UnusableInput):
        table_parse.load_table(path)


# ---- check-submission on a tree with such files ----------------------------------------------------------
@pytest.fixture()
def tree(v51_tree: Path, tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(v51_tree / SUBMITTER, root / SUBMITTER)
    return root


def _check(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[dict[str, Any]]]:
    report = tmp_path / "report.json"
    t0 = time.perf_counter()
    code = cli.main([str(root), "--round", "v5.1", "--workers", "1", "-q", "--json", str(report)])
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr()
    assert code in (0, 1), out.out + out.err
    assert "Traceback" not in out.err and "internal error" not in out.err, out.err

    def walk(o: Any) -> Iterator[dict[str, Any]]:
        if isinstance(o, dict):
            if "rule" in o and "message" in o:
                yield o
            for v in o.values():
                yield from walk(v)
        elif isinstance(o, list):
            for v in o:
                yield from walk(v)

    return code, list(walk(json.loads(report.read_text(encoding="utf-8"))))


def _edit_detail(root: Path, edit: Callable[[list[str]], list[str]]) -> list[str]:
    path = root / DETAIL
    lines = edit(path.read_text(encoding="utf-8").split("\n"))
    path.write_text("\n".join(lines), encoding="utf-8")
    return lines


@pytest.mark.parametrize("digits", [150, 401, 4000])
@pytest.mark.parametrize("key", ["result_max_latency_ns", "num_errors", "result_samples_per_second"])
def test_check_long_integer_in_a_detail_log_is_a_finding_at_its_line(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, digits: int
) -> None:
    def edit(lines: list[str]) -> list[str]:
        i = next(k for k, ln in enumerate(lines) if f'"key": "{key}"' in ln)
        lines[i] = re.sub(r'"value": [^,]*', '"value": ' + "9" * digits, lines[i], count=1)
        return lines

    lines = _edit_detail(tree, edit)
    line = next(k for k, ln in enumerate(lines, start=1) if f'"key": "{key}"' in ln)
    code, findings = _check(tree, tmp_path, capsys)
    assert code == 1
    assert any(f["path"] == DETAIL and f["line"] == line and f["severity"] == "error" for f in findings), [
        (f["rule"], f["line"], f["message"][:80]) for f in findings if f["path"] == DETAIL
    ]


def test_check_many_malformed_lines_give_a_bounded_report(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit_detail(tree, lambda lines: lines + [":::MLLOG {bad"] * 200_000)
    code, findings = _check(tree, tmp_path, capsys)
    on_log = [f for f in findings if f["path"] == DETAIL and "malformed" in f["message"]]
    assert code == 1 and len(on_log) == MAX_PROBLEMS + 1
    assert "199,990 more malformed lines" in on_log[-1]["message"]
    assert (tmp_path / "report.json").stat().st_size < 1 << 20


# ---- accuracy logs ----------------------------------------------------------------------------------------
def test_a_sparse_50_gb_accuracy_log_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from checker.parsers.accuracy_log import parse_accuracy_log

    log = tmp_path / "mlperf_log_accuracy.json"
    with log.open("wb") as fh:
        fh.truncate(50 * 2**30)  # 50 GB of NUL bytes, no block on disk
    with bounded(seconds=10.0, megabytes=200.0), pytest.raises(UnusableInput, match="refusing a whole-file"):
        parse_accuracy_log(log)


def test_verify_test06_on_a_sparse_log_exits_2_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadgen_sut.cli import main

    run = tmp_path / "run"
    run.mkdir()
    with (run / "mlperf_log_accuracy.json").open("wb") as fh:
        fh.truncate(50 * 2**30)
    t0 = time.perf_counter()
    code = main(["verify", "TEST06", str(run), "--out", str(tmp_path / "out"), "--benchmark", "llama3.1-8b"])
    assert time.perf_counter() - t0 < 10.0
    err = capsys.readouterr().err
    assert code == 2 and "mlperf_log_accuracy.json" in err and "Traceback" not in err, err


# ---- an MLPerf Endpoints result (v6.1) --------------------------------------------------------------------
V61 = Path("/work/shared/data/mlperf-inference-v6.1")
EP = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/qwen3-vl-235b-a22b/Server"


def _endpoints_tree(tmp_path: Path) -> Path:
    if not (V61 / EP).is_dir():
        pytest.skip("the shared v6.1 sample is not present")
    root = tmp_path / "tree"
    shutil.copytree(V61 / "closed" / "NVIDIA", root / "closed" / "NVIDIA")
    return root


@pytest.mark.parametrize(
    ("rel", "edit"),
    [
        ("config.yaml", lambda t: _laughs() + t.replace("version: '1.0'", "version: *a8")),
        ("config.yaml", lambda t: t.replace("version: '1.0'", "version: &v [*v]")),
        # a YAML 1.1 base-60 integer (quadratic to convert): text under YAML 1.2, so the check just goes on
        ("config.yaml", lambda t: t.replace("version: '1.0'", "version: " + "59:" * 300_000 + "59")),
        ("accuracy/accuracy_results.json", lambda t: t.replace('"score": ', '"score": 0.1, "score": ', 1)),
        (
            "performance/result_summary.json",
            lambda t: t.replace('"n_samples_failed": 0', '"n_samples_failed": ' + "9" * 4000),
        ),
    ],
    ids=["billion-laughs", "self-alias", "base-60", "duplicate-score", "long-int"],
)
def test_check_a_hostile_endpoints_result_is_a_finding_on_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rel: str, edit: Callable[[str], str]
) -> None:
    root = _endpoints_tree(tmp_path)
    path = root / EP / rel
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    report = tmp_path / "report.json"
    t0 = time.perf_counter()
    code = cli.main([str(root), "--round", "v6.1", "--workers", "1", "-q", "--json", str(report)])
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err and "internal error" not in out.err, out.err
    assert report.stat().st_size < 1 << 20
    if "59:59" not in path.read_text(encoding="utf-8"):
        assert f"{EP}/{rel}" in report.read_text(encoding="utf-8")


def test_check_a_15_mb_string_in_a_result_gives_bounded_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadgen_sut.cli import main

    root = _endpoints_tree(tmp_path)
    path = root / EP / "performance" / "result_summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["state"], data["version"] = "x" * 15_000_000, "y" * 15_000_000
    path.write_text(json.dumps(data), encoding="utf-8")
    report = tmp_path / "report.json"
    assert cli.main([str(root), "--round", "v6.1", "--workers", "1", "-q", "--json", str(report)]) == 1
    out = capsys.readouterr()
    assert len(out.out) + len(out.err) < 100_000 and report.stat().st_size < 200_000
    assert main(["report", str(report), "--html", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").stat().st_size < 1_000_000
