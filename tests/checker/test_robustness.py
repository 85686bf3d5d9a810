"""Bad input never crashes the checker: each broken file gets a finding naming it.

Every case mutates a fresh copy of a real v5.1 submitter tree, runs ``check-submission`` in
process, and asserts: an exit code in {0, 1, 2}, no traceback, a finding naming the broken
file, nothing written into (or changed in) the input tree, nothing outside it followed or run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from checker.cli import check as cli

SUBMITTER = "closed/RedHat"
SYSTEM = "XE8640_4xH100_vLLM"
RESULT = f"{SUBMITTER}/results/{SYSTEM}/llama3.1-8b/Offline"
DETAIL = f"{RESULT}/performance/run_1/mlperf_log_detail.txt"
SUMMARY = f"{RESULT}/performance/run_1/mlperf_log_summary.txt"
ACC_TXT = f"{RESULT}/accuracy/accuracy.txt"
ACC_JSON = f"{RESULT}/accuracy/mlperf_log_accuracy.json"
SYSTEM_JSON = f"{SUBMITTER}/systems/{SYSTEM}.json"
MEAS_DIR = f"{SUBMITTER}/measurements/{SYSTEM}/llama3.1-8b/Offline"


def tree_fingerprint(root: Path) -> dict[str, str]:
    """Every entry under ``root``: kind, mode and content hash (or link target). Links are not followed."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = f"link {os.readlink(p)}"
            elif stat.S_ISREG(st.st_mode):
                out[rel] = f"file {st.st_mode:o} {st.st_size} {_hash(p)}"
            else:
                out[rel] = f"other {st.st_mode:o}"
    return out


def _hash(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@pytest.fixture()
def tree(v51_tree: Path, tmp_path: Path) -> Path:
    """A private copy of one real submitter (real copies, never hard links: cases mutate files)."""
    root = tmp_path / "tree"
    shutil.copytree(v51_tree / SUBMITTER, root / SUBMITTER)
    return root


def run_check(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], str]:
    """Run the CLI on ``root`` with a JSON report outside it; returns (exit code, JSON report, all output)."""
    before = tree_fingerprint(root)
    report = tmp_path / "report.json"
    if report.exists():
        report.unlink()
    code = cli.main([str(root), "--round", "v5.1", "--json", str(report), *extra])
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert code in (0, 1, 2), output
    assert "Traceback" not in output and "internal error" not in output, output
    assert tree_fingerprint(root) == before, "the checker changed the input tree"
    data = json.loads(report.read_text()) if report.exists() else {}
    return code, data, output


def all_findings(data: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(data.get("findings", []))
    for r in data.get("results", []):
        found.extend(r["findings"])
    return found


def findings_on(data: dict[str, Any], rel: str) -> list[dict[str, Any]]:
    """Findings whose path is ``rel`` or lies under it."""
    return [
        f for f in all_findings(data) if f["path"] and (f["path"] == rel or f["path"].startswith(rel + "/"))
    ]


def findings_naming(data: dict[str, Any], rel: str) -> list[dict[str, Any]]:
    """Findings about ``rel`` or quoting it in their message."""
    return findings_on(data, rel) + [f for f in all_findings(data) if rel in f["message"]]


def result_valid(data: dict[str, Any], rel: str) -> bool:
    (entry,) = [r for r in data["results"] if r["path"] == rel]
    return bool(entry["valid"])


def test_pristine_copy_is_checked_without_errors_on_the_files_we_break(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run_check(tree, tmp_path, capsys)
    assert code in (0, 1)
    assert result_valid(data, RESULT)
    for rel in (DETAIL, SUMMARY, ACC_TXT, SYSTEM_JSON):
        assert not [f for f in findings_on(data, rel) if f["severity"] == "error"], rel


@pytest.mark.parametrize(
    ("target", "content"),
    [
        pytest.param(DETAIL, "truncate", id="truncated-detail-log"),
        pytest.param(DETAIL, b"", id="empty-detail-log"),
        pytest.param(ACC_TXT, b"\x00\x01\x02\xff\xfe binary \x00" * 50, id="binary-accuracy-txt"),
        pytest.param(SYSTEM_JSON, "latin1", id="non-utf8-system-json"),
        pytest.param(SYSTEM_JSON, b'{"division": "closed", "submitter": ', id="malformed-system-json"),
        pytest.param(SYSTEM_JSON, b"[1, 2, 3]\n", id="system-json-not-an-object"),
        pytest.param(
            DETAIL, b':::MLLOG {"key": "result_validity", "value": \n' * 3, id="malformed-mllog-lines"
        ),
    ],
)
def test_broken_file_gets_a_finding_naming_it(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, content: bytes | str
) -> None:
    path = tree / target
    original = path.read_bytes()
    if content == "truncate":
        data_bytes = original[: len(original) // 3]
    elif content == "latin1":  # one byte that is not UTF-8 inside a string value
        data_bytes = original[:20] + "\u00e9".encode("latin-1") + original[20:]
    else:
        assert isinstance(content, bytes)
        data_bytes = content
    path.write_bytes(data_bytes)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1, output
    named = findings_on(data, target)
    assert named, f"no finding names {target}:\n{output}"
    assert any(f["severity"] == "error" for f in named)
    assert not result_valid(data, RESULT)
    assert target in output  # the terminal report names the file too


def test_malformed_accuracy_log_is_named(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / ACC_JSON).write_bytes(b'[{"qsl_idx": 0, "data": "zz"')
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert any(f["severity"] == "error" for f in findings_naming(data, ACC_JSON)), output
    assert not result_valid(data, RESULT)


@pytest.mark.parametrize("content", [b"", b"\x00\x01 binary", "fifo"], ids=["empty", "binary", "fifo"])
def test_unreadable_summary_log_is_named(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | str
) -> None:
    # The official checker never reads mlperf_log_summary.txt; we warn about it without changing the verdict.
    (tree / SUMMARY).unlink()
    if content == "fifo":
        os.mkfifo(tree / SUMMARY)
    else:
        assert isinstance(content, bytes)
        (tree / SUMMARY).write_bytes(content)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code in (0, 1)
    assert findings_on(data, SUMMARY), output


def test_huge_file_is_reported_not_read(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tree / RESULT / "performance" / "run_1" / "mlperf_log_trace.json"
    with huge.open("r+b") as fh:  # sparse: 60 MB on paper, nothing on disk
        fh.truncate(60 * 1024 * 1024)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, str(huge.relative_to(tree))), output


def test_huge_log_the_checker_reads_is_reported_not_loaded(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (tree / DETAIL).open("r+b") as fh:  # sparse: 80 MB of NUL bytes after the real log
        fh.truncate(80 * 1024 * 1024)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert any(f["severity"] == "error" for f in findings_on(data, DETAIL)), output
    assert not result_valid(data, RESULT)


def test_symlink_out_of_the_tree_is_not_followed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The link points at a perfectly good copy of the file outside the tree: following it would
    # make the result valid, so an invalid result proves the link was not followed.
    outside = tmp_path / "outside_detail.txt"
    shutil.copy(tree / DETAIL, outside)
    (tree / DETAIL).unlink()
    (tree / DETAIL).symlink_to(outside)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, DETAIL), output
    assert not result_valid(data, RESULT)


def test_directory_symlink_out_of_the_tree_is_not_followed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside_measurements"
    shutil.copytree(tree / MEAS_DIR, outside)
    shutil.rmtree(tree / MEAS_DIR)
    (tree / MEAS_DIR).symlink_to(outside, target_is_directory=True)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, MEAS_DIR), output


def test_symlink_loop_and_broken_link(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tree / RESULT / "loop"
    loop.symlink_to(loop.name)
    broken = tree / SUBMITTER / "results" / SYSTEM / "broken_link"
    broken.symlink_to("does/not/exist")
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, str(broken.relative_to(tree))), output
    assert findings_on(data, str(loop.relative_to(tree))), output


def test_fifo_in_place_of_a_log_does_not_hang(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What an unreadable file looks like to a process that may read everything (tests run as root).
    (tree / DETAIL).unlink()
    os.mkfifo(tree / DETAIL)
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, DETAIL), output
    assert not result_valid(data, RESULT)


def test_directory_in_place_of_a_file(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / ACC_TXT).unlink()
    (tree / ACC_TXT).mkdir()
    (tree / ACC_TXT / "x").write_text("x")
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    assert findings_on(data, ACC_TXT), output


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root reads files whatever their mode; covered by the FIFO case"
)
def test_unreadable_file(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.chmod(tree / SUMMARY, 0)
    try:
        code, data, output = run_check(tree, tmp_path, capsys)
    finally:
        os.chmod(tree / SUMMARY, 0o644)
    assert code == 1
    assert findings_on(data, SUMMARY), output


def test_unknown_folders_and_odd_names_are_reported(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / RESULT / "weird_folder").mkdir()
    (tree / RESULT / "weird_folder" / "notes.txt").write_text("hello\n")
    (tree / SUBMITTER / "results" / SYSTEM / "with space.txt").write_text("x\n")
    (tree / SUBMITTER / "__pycache__").mkdir()
    (tree / SUBMITTER / "__pycache__" / "x.pyc").write_bytes(b"\x00")
    code, data, output = run_check(tree, tmp_path, capsys)
    assert code == 1
    for rel in (
        f"{SUBMITTER}/results/{SYSTEM}/with space.txt",
        f"{SUBMITTER}/__pycache__",
    ):
        assert findings_on(data, rel), f"{rel}\n{output}"
    assert findings_on(data, f"{RESULT}/weird_folder"), output


def test_nothing_in_the_tree_is_executed(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "EXECUTED"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    for rel in (
        f"{SUBMITTER}/code/llama3.1-8b/main.py",
        f"{SUBMITTER}/conftest.py",
        f"{SUBMITTER}/__init__.py",
        f"{MEAS_DIR}/setup.py",
    ):
        (tree / rel).write_text(payload)
    (tree / f"{SUBMITTER}/code/llama3.1-8b/run.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(tree / f"{SUBMITTER}/code/llama3.1-8b/run.sh", 0o755)
    run_check(tree, tmp_path, capsys)
    assert not marker.exists()


def test_modules_in_the_tree_shadow_nothing_when_run_from_inside_it(tree: Path, tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    for name in ("json", "yaml", "pydantic", "numpy", "re", "checker", "rules"):
        (tree / f"{name}.py").write_text(
            f"import pathlib; pathlib.Path({str(marker)!r}).write_text({name!r})\n"
        )
    exe = shutil.which("check-submission")
    if exe is None:
        pytest.skip("check-submission is not installed (pip install -e .)")
    before = tree_fingerprint(tree)
    proc = subprocess.run(
        [exe, ".", "--round", "v5.1", "--quiet"], cwd=tree, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()
    assert tree_fingerprint(tree) == before


def test_empty_directory_is_not_a_results_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, output = run_check(empty, tmp_path, capsys)
    assert code == 2
    assert str(empty) in output or "results" in output


def test_missing_path_and_unknown_round_are_unusable(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err
    assert cli.main([str(tree), "--round", "v1.0"]) == 2
    assert "v1.0" in capsys.readouterr().err
    assert cli.main([str(tree / DETAIL)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_refuses_to_write_reports_inside_the_tree(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_fingerprint(tree)
    for option in ("--json", "--csv", "--junit"):
        assert cli.main([str(tree), "--round", "v5.1", option, str(tree / SUBMITTER / "report.out")]) == 2
        assert "inside the checked tree" in capsys.readouterr().err
    # also through a symlink that leads into the tree
    (tmp_path / "into").symlink_to(tree / SUBMITTER, target_is_directory=True)
    assert cli.main([str(tree), "--round", "v5.1", "--json", str(tmp_path / "into" / "r.json")]) == 2
    assert tree_fingerprint(tree) == before
