"""Hostile inputs give findings (or an unusable-input error) naming the file, bounded in time and memory.

Classes (each on real files):
- 6: JSON nested thousands deep, integers over 4,300 digits, a non-UTF-8 byte in a file name (with ``--json``), a
  recursive or "billion laughs" YAML claim, a FIFO or ``/dev/zero`` as an input file;
- 7: nothing checked is never "all valid": a symlinked division, ``results`` that is a file, an unreadable
  ``results/<system>``, a directory chain deeper than PATH_MAX, a tree without results;
- 8: a tree changed while it is checked (file <-> symlink, file <-> FIFO, a parent swapped for a symlink) is read
  only where the walk saw it, never outside it, never blocking;
- 9: NaN, infinite, negative or implausible results and latencies and a NaN ``num_errors`` are errors at the log
  line and never reach the summary CSV.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from checker.audit.claim.parse import load_claim_file
from checker.audit.peers.load import load_peer_runs
from checker.audit.table.parse import load_table
from checker.cli import check as cli
from checker.engine import check_tree
from checker.findings import UnusableInput
from checker.parsers.accuracy_log import parse_accuracy_log
from checker.report.summary_csv import render_summary_csv
from checker.safe_io import SafeTree, display_name, read_input_bytes
from checker.safe_json import parse_json
from checker.tree import walk_submitter
from rules import load_round

SUBMITTER = "closed/RedHat"
SYSTEM = "XE8640_4xH100_vLLM"
RESULT = f"{SUBMITTER}/results/{SYSTEM}/llama3.1-8b/Offline"
DETAIL = f"{RESULT}/performance/run_1/mlperf_log_detail.txt"
SYSTEM_JSON = f"{SUBMITTER}/systems/{SYSTEM}.json"
ROUND = load_round("v5.1")
BOUND_S = 5.0  # every hostile case must finish well within this (they take milliseconds)


@pytest.fixture()
def tree(v51_tree: Path, tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(v51_tree / SUBMITTER, root / SUBMITTER)
    return root


def _strict_json(text: str) -> Any:
    """json.loads that refuses NaN / Infinity (what a strict JSON reader does)."""

    def bad(name: str) -> Any:
        raise ValueError(f"non-JSON constant {name}")

    return json.loads(text, parse_constant=bad)


def run_cli(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / f"report-{time.monotonic_ns()}.json"
    csv = tmp_path / f"summary-{time.monotonic_ns()}.csv"
    t0 = time.perf_counter()
    code = cli.main(
        [str(root), "--round", "v5.1", "--workers", "1", "--json", str(report), "--csv", str(csv), *extra]
    )
    elapsed = time.perf_counter() - t0
    out = capsys.readouterr()
    output = out.out + out.err
    assert code in (0, 1, 2), output
    assert "Traceback" not in output and "internal error" not in output, output
    assert elapsed < 60, f"took {elapsed:.1f} s"
    data = _strict_json(report.read_text(encoding="utf-8")) if report.exists() else {}
    if csv.exists():
        body = csv.read_text(encoding="utf-8")
        assert not re.search(r",(-?nan|-?inf)(,|\r?$)", body, re.I | re.M), body
    return code, data, output


def all_findings(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(data.get("findings", [])) + [f for r in data.get("results", []) for f in r["findings"]]


def rules_on(data: dict[str, Any], path: str) -> set[str]:
    return {f["rule"] for f in all_findings(data) if f["path"] == path and f["severity"] == "error"}


def result_valid(data: dict[str, Any], rel: str) -> bool:
    (entry,) = [r for r in data["results"] if r["path"] == rel]
    return bool(entry["valid"])


# ---- class 6: JSON / YAML / integers / names / FIFOs / devices --------------------------------------------
def test_parse_json_bounds() -> None:
    for text, what in (
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ("[" * 150 + "]" * 150, "nested deeper"),  # below Python's recursion limit, above ours
        ('{"a": ' + "7" * 5000 + "}", "number too long"),
        ("{\n\n" + '"a": 1,\n"b": ' + "9" * 4301 + "}", "number too long"),
    ):
        t0 = time.perf_counter()
        with pytest.raises(ValueError, match=what) as info:
            parse_json(text)
        assert time.perf_counter() - t0 < 1.0
        if "9" * 4301 in text:
            assert info.value.lineno == 4  # type: ignore[attr-defined]
    assert parse_json("[" * 100 + "]" * 100) is not None
    assert parse_json('{"x": NaN}')["x"] != parse_json('{"x": NaN}')["x"]  # parsed; judged by the checks


@pytest.mark.parametrize(
    ("content", "line"),
    [
        pytest.param(b"[" * 50_000 + b"]" * 50_000, 1, id="json-50000-deep"),
        pytest.param(b'{"division": "closed",\n "x": ' + b"1" * 5000 + b"}", 2, id="int-5000-digits"),
    ],
)
def test_hostile_system_json_is_a_finding(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, line: int
) -> None:
    (tree / SYSTEM_JSON).write_bytes(content)
    t0 = time.perf_counter()
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert time.perf_counter() - t0 < 30
    assert code == 1
    named = [f for f in all_findings(data) if f["path"] == SYSTEM_JSON and f["severity"] == "error"]
    assert named and named[0]["line"] == line, output
    assert SYSTEM_JSON in output


@pytest.mark.parametrize(
    "value",
    [pytest.param("[" * 5000 + "]" * 5000, id="deep"), pytest.param("3" * 5000, id="long-int")],
)
def test_hostile_detail_log_record_is_a_finding(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = tree / DETAIL
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(k for k, ln in enumerate(lines) if '"key": "result_tokens_per_second"' in ln)
    lines[i] = re.sub(r'"value": [^,]*', '"value": ' + value, lines[i], count=1)
    path.write_text("\n".join(lines), encoding="utf-8")
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1
    hits = [f for f in all_findings(data) if f["path"] == DETAIL and f["line"] == i + 1]
    assert hits and all(f["severity"] == "error" for f in hits), output
    assert not result_valid(data, RESULT)


def test_non_utf8_file_name_with_json_report(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_dir = os.fsencode(tree / RESULT) + b"/caf\xe9.txt"
    with open(bad_dir, "wb") as fh:
        fh.write(b"x\n")
    bad_sys = os.fsencode(tree / SUBMITTER / "results") + b"/sys\xff\xfe"
    os.mkdir(bad_sys)
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1
    shown = {f["path"] for f in all_findings(data) if f["rule"] == "TREE-NAME-ENCODING"}
    assert f"{RESULT}/caf\\xe9.txt" in shown and f"{SUBMITTER}/results/sys\\xff\\xfe" in shown, output
    assert "caf\\xe9.txt" in output


def test_display_name() -> None:
    assert display_name("plain/é") == "plain/é"
    assert display_name(os.fsdecode(b"a/caf\xe9")) == "a/caf\\xe9"
    assert display_name("\ud800x").encode("utf-8")


def test_fifo_and_device_in_the_tree(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = f"{RESULT}/performance/run_1/mlperf_log_summary.txt"
    (tree / fifo).unlink()
    os.mkfifo(tree / fifo)
    dev = f"{RESULT}/accuracy/accuracy.txt"
    (tree / dev).unlink()
    try:
        os.mknod(tree / dev, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # the /dev/zero device
    except (PermissionError, OSError):
        (tree / dev).symlink_to("/dev/zero")
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1
    assert "TREE-SPECIAL-FILE" in rules_on(data, fifo), output
    assert rules_on(data, dev), output
    assert not result_valid(data, RESULT)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_table_claim_and_peer_inputs_refuse_non_regular_files(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        path = tmp_path / "input.json"
        os.mkfifo(path)
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    else:
        path = tmp_path
    for load in (load_table, load_claim_file, load_peer_runs):
        t0 = time.perf_counter()
        with pytest.raises(UnusableInput, match="not a regular file") as info:
            load(path)
        assert time.perf_counter() - t0 < 1.0
        assert str(path) in str(info.value)
    if kind != "directory":
        with pytest.raises(UnusableInput, match="not a regular file"):
            parse_accuracy_log(path)


def test_input_size_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with big.open("wb") as fh:
        fh.truncate(2048)
    with pytest.raises(UnusableInput, match="read limit"):
        read_input_bytes(big, what="table", max_bytes=1024)


def test_input_above_the_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a sparse 8 GB file costs no read: its size alone refuses it
    big = tmp_path / "sparse.jsonl"
    with big.open("wb") as fh:
        fh.truncate(8 << 30)

    def no_read(fd: int, n: int) -> bytes:
        raise AssertionError(f"read {n} bytes of a file its size refuses")

    monkeypatch.setattr("checker.safe_io.os.read", no_read)
    with pytest.raises(UnusableInput, match="larger than the 1024 byte read limit; not read"):
        read_input_bytes(big, what="data set", max_bytes=1024)


@pytest.mark.parametrize(
    ("content", "what"),
    [
        pytest.param("[" * 200_000 + "]" * 200_000, "nested deeper", id="deep"),
        pytest.param(
            '[{"ID": "1", "Performance_Result": ' + "5" * 5000 + "}]", "number too long", id="long-int"
        ),
    ],
)
def test_hostile_table_and_peer_json(tmp_path: Path, content: str, what: str) -> None:
    path = tmp_path / "table.json"
    path.write_text(content, encoding="utf-8")
    for load in (load_table, load_peer_runs):
        t0 = time.perf_counter()
        with pytest.raises(UnusableInput, match=what) as info:
            load(path)
        assert time.perf_counter() - t0 < BOUND_S
        assert str(path) in str(info.value)


def _laughs(levels: int = 9) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "text: 'We serve 1000 tokens/s per GPU'\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("content", "what", "line"),
    [
        pytest.param(_laughs(), "anchor", 2, id="billion-laughs"),
        pytest.param("text: hi\nloop: &a [*a]\n", "anchor", 2, id="recursive"),
        pytest.param("text: hi\nx: *nowhere\n", "alias", 2, id="alias"),
        pytest.param("text: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested deeper", 1, id="deep"),
        pytest.param("text: hi\nn: " + "4" * 5000 + "\n", "number too long", 2, id="long-int"),
    ],
)
def test_hostile_claim_yaml(tmp_path: Path, content: str, what: str, line: int) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(content, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(UnusableInput, match=what) as info:
        load_claim_file(path)
    assert time.perf_counter() - t0 < BOUND_S
    assert info.value.path == str(path) and info.value.line == line


# ---- class 7: nothing checked is never "valid" --------------------------------------------------------------
def test_division_symlink_is_not_followed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "closed").symlink_to(tree / "closed", target_is_directory=True)
    code, data, output = run_cli(repo, tmp_path, capsys)
    assert code == 1, output
    assert "TREE-NOT-DIR" in rules_on(data, "closed")
    assert not data["results"]


def test_results_that_is_a_file(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(tree / SUBMITTER / "results")
    (tree / SUBMITTER / "results").write_text("not a directory\n")
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1, output
    assert "TREE-NOT-DIR" in rules_on(data, f"{SUBMITTER}/results")
    assert "TREE-NOTHING-CHECKED" in {f["rule"] for f in data["findings"]}


def test_unreadable_system_directory(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tree / SUBMITTER / "results" / SYSTEM
    if os.geteuid() == 0:  # root lists any directory: make this one fail as it would for anyone else
        real_scandir = os.scandir

        def scandir(path: Any = ".") -> Any:
            if str(path) == str(target):
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr("checker.tree.os.scandir", scandir)
        code, data, output = run_cli(tree, tmp_path, capsys)
    else:
        os.chmod(target, 0)
        try:
            code, data, output = run_cli(tree, tmp_path, capsys)
        finally:
            os.chmod(target, 0o755)
    assert code == 1, output
    hits = [f for f in all_findings(data) if f["rule"] == "TREE-UNREADABLE"]
    assert (
        hits
        and hits[0]["path"] == f"{SUBMITTER}/results/{SYSTEM}"
        and "Permission denied" in hits[0]["message"]
    )


def test_directory_chain_deeper_than_path_max(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fd = os.open(tree / RESULT, os.O_RDONLY | os.O_DIRECTORY)
    name = "d" * 200
    depth = 0
    try:
        while depth * 201 < 4300:
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            depth += 1
        os.close(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1
    hits = [f for f in all_findings(data) if f["rule"] == "TREE-UNREADABLE"]
    assert hits and "PATH_MAX" in hits[0]["message"] and hits[0]["path"].startswith(RESULT + "/" + name), (
        output
    )


@pytest.mark.parametrize("how", ["no-results-dir", "unknown-submitter"])
def test_nothing_checked_is_not_valid(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    extra: tuple[str, ...] = ()
    if how == "no-results-dir":
        shutil.rmtree(tree / SUBMITTER / "results")
    else:
        extra = ("--submitter", "Nobody")
    code, data, output = run_cli(tree, tmp_path, capsys, *extra)
    assert code == 1, output
    assert "TREE-NOTHING-CHECKED" in {f["rule"] for f in data["findings"]}


# ---- class 8: a tree changed while it is checked ------------------------------------------------------------
def _walked(tree: Path) -> tuple[SafeTree, str]:
    sub = walk_submitter(tree, tree, "closed", "RedHat")
    safe = SafeTree(tree)
    safe.register_walk(sub.path, frozenset(link.path for link in sub.symlinks), sub.file_ids)
    return safe, DETAIL


def test_file_swapped_for_symlink_after_the_walk(tree: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the tree\n")
    safe, rel = _walked(tree)
    (tree / rel).unlink()
    (tree / rel).symlink_to(secret)
    r = safe.read_text(rel)
    assert r.text is None and r.problem is not None and r.problem.kind in ("outside-root", "changed")


def test_file_swapped_for_another_file_or_fifo_after_the_walk(tree: Path) -> None:
    safe, rel = _walked(tree)
    data = (tree / rel).read_bytes()
    (tree / (rel + ".new")).write_bytes(data)
    os.replace(tree / (rel + ".new"), tree / rel)  # same content, another inode: not the file the walk saw
    p = safe.read_text(rel).problem
    assert p is not None and p.kind == "changed" and rel in p.message
    (tree / rel).unlink()
    os.mkfifo(tree / rel)
    t0 = time.perf_counter()
    p = safe.read_text(rel).problem
    assert time.perf_counter() - t0 < 1.0
    assert p is not None and p.kind == "not-a-file" and "FIFO" in p.message


def test_parent_directory_swapped_for_symlink_after_the_walk(tree: Path, tmp_path: Path) -> None:
    safe, rel = _walked(tree)
    run_dir = (tree / rel).parent
    outside = tmp_path / "outside_run"
    shutil.copytree(run_dir, outside)
    shutil.rmtree(run_dir)
    run_dir.symlink_to(outside, target_is_directory=True)
    r = safe.read_text(rel)
    assert r.text is None and r.problem is not None


def test_symlink_inside_the_tree_is_still_read(tree: Path) -> None:
    safe, rel = _walked(tree)
    link = f"{RESULT}/performance/run_1/link.txt"
    (tree / link).symlink_to("mlperf_log_detail.txt")
    assert safe.read_text(link).text == (tree / rel).read_text(encoding="utf-8")


def test_swap_during_a_check_never_reads_outside(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: the detail log becomes a symlink to a valid copy outside the tree right after the walk."""
    outside = tmp_path / "outside_detail.txt"
    shutil.copy(tree / DETAIL, outside)
    import checker.engine as engine

    real_walk = engine.walk_submitter

    def walk_then_swap(*args: Any) -> Any:
        sub = real_walk(*args)
        (tree / DETAIL).unlink()
        (tree / DETAIL).symlink_to(outside)
        return sub

    monkeypatch.setattr(engine, "walk_submitter", walk_then_swap)
    rep = check_tree(tree, ROUND, workers=1)
    entry = next(e for e in rep.results if e.path == RESULT)
    assert not entry.valid
    assert any(f.path == DETAIL and f.severity.value == "error" for f in entry.findings)


# ---- class 9: values no real run can have ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("result_tokens_per_second", "NaN"),
        ("result_tokens_per_second", "Infinity"),
        ("result_tokens_per_second", "-24593.8"),
        ("result_tokens_per_second", "1e30"),
        ("result_tokens_per_second", '"nan"'),
        ("result_99.00_percentile_latency_ns", "-5"),
        ("result_mean_latency_ns", "-Infinity"),
        ("num_errors", "NaN"),
        ("num_errors", "1.5"),
    ],
)
def test_implausible_values_are_errors_at_the_line(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    path = tree / DETAIL
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(k for k, ln in enumerate(lines) if f'"key": "{key}"' in ln)
    lines[i] = re.sub(r'"value": ("[^"]*"|[^,}]*)', '"value": ' + value, lines[i], count=1)
    path.write_text("\n".join(lines), encoding="utf-8")
    code, data, output = run_cli(tree, tmp_path, capsys)
    assert code == 1, output
    hits = [f for f in all_findings(data) if f["rule"] == "PERF-VALUE" and f["path"] == DETAIL]
    assert hits and hits[0]["line"] == i + 1 and key in hits[0]["message"], output
    assert not result_valid(data, RESULT)
    entry = next(r for r in data["results"] if r["path"] == RESULT)
    summary = entry.get("summary") or {}
    assert not re.search(r"nan|inf", str(summary.get("Result", "")), re.I)


def test_pristine_tree_has_no_hostile_findings(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data, output = run_cli(tree, tmp_path, capsys)
    new = {
        "PERF-VALUE",
        "TREE-UNREADABLE",
        "TREE-NOT-DIR",
        "TREE-SPECIAL-FILE",
        "TREE-NAME-ENCODING",
        "TREE-NOTHING-CHECKED",
    }
    assert not [f for f in all_findings(data) if f["rule"] in new], output
    assert result_valid(data, RESULT)
    rep = check_tree(tree, ROUND, workers=1)
    assert b"nan" not in render_summary_csv(rep).lower()
