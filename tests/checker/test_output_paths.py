"""Where reports may be written (checker/report/output.py), for every command that writes one.

Writers: ``check-submission --json/--csv/--junit``, ``table --json``, ``claim --json``, ``score --accuracy-txt``.
Each must refuse, with exit 2, one line naming the path and no traceback, before any work: /dev/null (a
device), a FIFO (never opened: the test would hang), a directory, a symlink, an existing file without
``--force``, a path inside the checked tree, a path equal to an input, a missing directory; and write a
new name, an existing file with ``--force`` (keeping its mode), and ``-`` (stdout). A name planted at
``<target>.tmp`` is never followed, and a failed write leaves the old file and no temporary behind.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checker.cli import check as check_cli
from checker.report.output import plan_outputs
from checker.report.summary_csv import csv_safe, render_summary_csv
from checker.results import SUMMARY_CSV_COLUMNS, CheckReport, ResultEntry, SummaryRow
from loadgen_sut import cli as top_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "audit" / "fixtures"
PEER = FIXTURES / "peers" / "vllm_bench_serve_c256.json"
OFFICIAL_ROW = [
    "NVIDIA", "available", "open", "datacenter", " (72x GB200-186GB_aarch64, TensorRT)",
    "GB200-NVL72_GB200-186GB_aarch64x72_Dynamo", "llama3.1-405b", "llama3.1-405b", "Interactive", "9897.52",
    "ROUGEL: 21.457630147114052  exact_match: 90.08698544010589  TOKENS_PER_SAMPLE: 629.9", "18",
    "NVIDIA Grace CPU", "2", "144", "NVIDIA GB200", "4",
    "open/NVIDIA/results/GB200-NVL72_GB200-186GB_aarch64x72_Dynamo/llama3.1-405b/Interactive",
    "TensorRT 10.11, CUDA 12.9", "Ubuntu 24.04", "NVIDIA GB200 NVL72", "1", "0", "v5.1", "0", "False",
    "Tokens/s", "fp4",
]  # fmt: skip


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A writer that opened a FIFO would block forever: fail the test after 120 s instead."""

    def boom(signum: int, frame: Any) -> None:
        raise TimeoutError("the command blocked (opened a FIFO?)")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ---- the writers --------------------------------------------------------------------------------------------
@dataclass
class Writer:
    """One report option of one command; ``run(out, *extra)`` returns the outcome."""

    name: str
    option: str
    build: Callable[[Path, str, tuple[str, ...]], list[str]]  # (scratch dir, output, extra) -> argv
    main: Callable[[list[str]], int]
    inputs: Callable[[Path], list[Path]]  # files the command reads (an output must never replace one)
    tree: Callable[[Path], Path | None]  # the directory the command checks, if any
    needs_shared: bool = False


def _check_tree(scratch: Path) -> Path:
    tree = scratch / "tree"
    if not tree.exists():
        tree.mkdir()
        (tree / "closed").mkdir()
    return tree


def _table_file(scratch: Path) -> Path:
    table = scratch / "table.csv"
    if not table.exists():
        table.write_text(",".join(SUMMARY_CSV_COLUMNS) + "\r\n" + ",".join(
            f'"{c}"' if "," in c else c for c in OFFICIAL_ROW
        ) + "\r\n", encoding="utf-8")  # fmt: skip
    return table


def _claim_files(scratch: Path) -> tuple[Path, Path]:
    claim, run = scratch / "claim.yaml", scratch / "run.json"
    if not claim.exists():
        shutil.copy(PEER, run)
        claim.write_text("text: vllm serve reached 1686 tokens/s\nresults:\n- file: run.json\n", encoding="utf-8")
    return claim, run


def _score_inputs(scratch: Path) -> tuple[Path, Path]:
    log, tok = scratch / "mlperf_log_accuracy.json", scratch / "tokenizer"
    if not log.exists():
        log.write_text("[]\n", encoding="utf-8")
        tok.mkdir()
        (tok / "tokenizer.json").write_text("{}", encoding="utf-8")
    return log, tok


def _check_argv(option: str) -> Callable[[Path, str, tuple[str, ...]], list[str]]:
    return lambda s, out, extra: [str(_check_tree(s)), "--round", "v5.1", "--quiet", option, out, *extra]


def _score_argv(s: Path, out: str, extra: tuple[str, ...]) -> list[str]:
    log, tok = _score_inputs(s)
    return [
        "score", "--benchmark", "llama3.1-8b", "--round", "v5.1", "--accuracy-log", str(log),
        "--dataset", "builtin", "--tokenizer", str(tok), "--accuracy-txt", out, *extra,
    ]  # fmt: skip


WRITERS = [
    Writer("check-json", "--json", _check_argv("--json"), check_cli.main, lambda s: [], _check_tree),
    Writer("check-csv", "--csv", _check_argv("--csv"), check_cli.main, lambda s: [], _check_tree),
    Writer("check-junit", "--junit", _check_argv("--junit"), check_cli.main, lambda s: [], _check_tree),
    Writer(
        "table",
        "--json",
        lambda s, out, extra: ["table", str(_table_file(s)), "--json", out, *extra],
        top_cli.main,
        lambda s: [_table_file(s)],
        lambda s: None,
    ),
    Writer(
        "claim",
        "--json",
        lambda s, out, extra: ["claim", str(_claim_files(s)[0]), "--json", out, *extra],
        top_cli.main,
        lambda s: list(_claim_files(s)),
        lambda s: None,
    ),
    Writer("score", "--accuracy-txt", _score_argv, top_cli.main, lambda s: [_score_inputs(s)[0]], lambda s: None),
]


@pytest.fixture
def run_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[[Writer, str, tuple[str, ...]], Outcome]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _fake_scoring(monkeypatch)

    def run(writer: Writer, out: str, extra: tuple[str, ...] = ()) -> Outcome:
        capsys.readouterr()
        code = writer.main(writer.build(scratch, out, extra))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    run.scratch = scratch  # type: ignore[attr-defined]
    return run


def _fake_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """score without a tokenizer, data set or ROUGE: only its output handling is under test here."""
    from loadgen_sut.cli import score as score_cli

    class FakeScore:
        def findings(self, bench: object, **_kw: object) -> list[object]:
            return []

    monkeypatch.setattr(score_cli, "HFTokenizer", lambda path: type("T", (), {"decode": None})())
    monkeypatch.setattr(score_cli, "load_dataset", lambda name: None)
    monkeypatch.setattr(score_cli, "score_accuracy", lambda *a, **k: FakeScore())
    monkeypatch.setattr(score_cli, "_summary", lambda score: ["llama3.1-8b: scored (fake)"])
    monkeypatch.setattr(score_cli, "accuracy_txt", lambda score, h: f"Results\n\nhash={h}\n")


def _refused(o: Outcome, path: str, *words: str) -> None:
    assert o.code == 2, o
    assert "Traceback" not in o.err and "internal error" not in o.err, o.err
    lines = o.err.strip().splitlines()
    assert len(lines) == 1, o.err  # one line, naming the path and why
    assert path in lines[0], lines[0]
    for w in words:
        assert w in lines[0], lines[0]


def _files(d: Path) -> set[str]:
    return {p.name for p in d.iterdir()}


IDS = [w.name for w in WRITERS]


# ---- refusals -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_dev_null_is_refused(writer: Writer, run_writer: Callable[..., Outcome]) -> None:
    before = os.stat("/dev/null")
    _refused(run_writer(writer, "/dev/null"), "/dev/null", "character device")
    _refused(run_writer(writer, "/dev/null", ("--force",)), "/dev/null", "character device")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_dev_full_is_refused_not_a_silent_success(writer: Writer, run_writer: Callable[..., Outcome]) -> None:
    _refused(run_writer(writer, "/dev/full", ("--force",)), "/dev/full", "device")


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_fifo_is_refused_without_opening_it(writer: Writer, run_writer: Callable[..., Outcome]) -> None:
    fifo = run_writer.scratch.parent / "pipe"  # type: ignore[attr-defined]
    os.mkfifo(fifo)
    _refused(run_writer(writer, str(fifo), ("--force",)), str(fifo), "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_directory_is_refused(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    target = tmp_path / "adir"
    target.mkdir()
    _refused(run_writer(writer, str(target), ("--force",)), str(target), "directory")
    assert target.is_dir() and not any(target.iterdir())


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_existing_file_needs_force(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    target = tmp_path / "report.out"
    target.write_text("precious")
    _refused(run_writer(writer, str(target)), str(target), "exists: pass --force to replace it")
    assert target.read_text() == "precious"
    assert _files(tmp_path) == {"report.out", "scratch"}


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_read_only_file_is_refused_without_force(
    writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path
) -> None:
    target = tmp_path / "kept.out"
    target.write_text("read-only report")
    target.chmod(0o444)
    _refused(run_writer(writer, str(target)), str(target), "--force")
    assert target.read_text() == "read-only report" and stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_symlink_is_refused_even_with_force(
    writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    link = tmp_path / "link.out"
    link.symlink_to(victim)
    _refused(run_writer(writer, str(link), ("--force",)), str(link), "symbolic link")
    assert link.is_symlink() and victim.read_text() == "not yours"
    dangling = tmp_path / "dangling.out"
    dangling.symlink_to(tmp_path / "nowhere")
    _refused(run_writer(writer, str(dangling)), str(dangling), "symbolic link")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_missing_directory_is_refused(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "r.out"
    _refused(run_writer(writer, str(target)), str(target), "does not exist")
    assert not (tmp_path / "missing-dir").exists()
    under_file = tmp_path / "a-file"
    under_file.write_text("x")
    _refused(run_writer(writer, str(under_file / "r.out")), str(under_file / "r.out"))


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_an_input_is_never_replaced(writer: Writer, run_writer: Callable[..., Outcome]) -> None:
    scratch: Path = run_writer.scratch  # type: ignore[attr-defined]
    writer.build(scratch, "-", ())  # lays the inputs out
    for src in writer.inputs(scratch):
        before = src.read_bytes()
        _refused(run_writer(writer, str(src), ("--force",)), str(src), "input")
        assert src.read_bytes() == before
        hard = scratch.parent / f"hard-{src.name}"
        os.link(src, hard)  # another name of the same file
        _refused(run_writer(writer, str(hard), ("--force",)), str(hard), "input")
        assert src.read_bytes() == before
        hard.unlink()


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_inside_the_read_tree_is_refused(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    scratch: Path = run_writer.scratch  # type: ignore[attr-defined]
    tree = writer.tree(scratch)
    extra: tuple[str, ...] = ()
    if writer.name == "table":  # table --tree T --json T/...
        tree = scratch / "results-tree"
        tree.mkdir()
        extra = ("--tree", str(tree))
    elif writer.name == "score":  # never inside the tokenizer directory it loads
        tree = _score_inputs(scratch)[1]
    elif tree is None:
        pytest.skip(f"{writer.name} reads no tree")
    assert tree is not None
    before = sorted(p.name for p in tree.rglob("*"))
    _refused(run_writer(writer, str(tree / "r.out"), extra), str(tree / "r.out"), "inside")
    into = tmp_path / "into"  # through a symlinked directory
    into.symlink_to(tree, target_is_directory=True)
    _refused(run_writer(writer, str(into / "r.out"), extra), str(into / "r.out"), "inside")
    assert sorted(p.name for p in tree.rglob("*")) == before


def test_two_reports_on_one_file_are_refused(run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    out = str(tmp_path / "same.out")
    o = run_writer(WRITERS[0], out, ("--csv", out))
    _refused(o, out, "same file")
    o = run_writer(WRITERS[0], "-", ("--junit", "-"))
    _refused(o, "-", "standard output")
    assert not (tmp_path / "same.out").exists()


def test_empty_name_is_refused() -> None:
    with pytest.raises(Exception, match="not a file name"):
        plan_outputs([("--json", "")])


def test_console_script_refuses_a_fifo_in_a_subprocess(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "tree" / "closed").mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-m", "checker.cli.check", str(tmp_path / "tree"), "--json", str(fifo)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"check-submission: error: --json {fifo}: is a FIFO (named pipe), not a regular file; refusing to write a report there"


# ---- writes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_new_file_then_force_replaces(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    target = tmp_path / "fresh.out"
    o = run_writer(writer, str(target))
    assert o.code in (0, 1, 2) and "Traceback" not in o.err, o
    assert "refus" not in o.err and "cannot write" not in o.err, o.err
    first = target.read_bytes()
    assert first
    target.write_text("old")
    target.chmod(0o640)
    o = run_writer(writer, str(target), ("--force",))
    assert "refus" not in o.err and "exists" not in o.err, o.err
    assert target.read_bytes() == first and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _files(tmp_path) == {"fresh.out", "scratch"}  # no temporary left


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_read_only_file_is_replaced_with_force(
    writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path
) -> None:
    target = tmp_path / "kept.out"
    target.write_text("old")
    target.chmod(0o444)
    o = run_writer(writer, str(target), ("--force",))
    assert "refus" not in o.err, o.err
    assert target.read_text() != "old" and stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_dash_writes_to_stdout(writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path) -> None:
    o = run_writer(writer, "-")
    assert "Traceback" not in o.err and "refus" not in o.err, o.err
    assert not (tmp_path / "-").exists() and not (run_writer.scratch / "-").exists()  # type: ignore[attr-defined]
    if writer.option == "--json":
        data = json.loads(o.out)  # stdout holds the report alone
        assert data["schema_version"] == "1"
    elif writer.name == "check-csv":
        assert o.out.splitlines()[0] == ",".join(SUMMARY_CSV_COLUMNS)
    elif writer.name == "check-junit":
        assert o.out.startswith("<?xml")
    else:
        assert o.out.startswith("Results") and "hash=" in o.out
        assert "scored (fake)" in o.err  # the summary moved to stderr


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_planted_tmp_symlink_is_not_followed(
    writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    target = tmp_path / "r.out"
    for planted in (tmp_path / "r.out.tmp", tmp_path / ".r.out.tmp"):
        planted.symlink_to(victim)
    o = run_writer(writer, str(target))
    assert "refus" not in o.err, o.err
    assert victim.read_text() == "not yours"
    assert (tmp_path / "r.out.tmp").is_symlink() and target.is_file() and not target.is_symlink()


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_failed_write_keeps_the_old_file_and_no_temporary(
    writer: Writer, run_writer: Callable[..., Outcome], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.out"
    target.write_text("previous report")
    real_fsync = os.fsync

    def full(fd: int) -> None:  # the disk fills up: the temporary file's data cannot be stored
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".r.out."):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc")
    monkeypatch.setattr(os, "fsync", full)
    o = run_writer(writer, str(target), ("--force",))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert o.code == 2, o
    assert "No space left on device" in o.err and str(target) in o.err and "Traceback" not in o.err
    assert target.read_text() == "previous report"
    assert _files(tmp_path) == {"r.out", "scratch"}


def test_check_writes_real_reports_and_refuses_a_second_run_without_force(
    v51_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(v51_tree / "closed" / "RedHat", tree / "closed" / "RedHat")
    out = tmp_path / "out"
    out.mkdir()
    argv = [str(tree), "--json", str(out / "r.json"), "--csv", str(out / "s.csv"), "--junit", str(out / "j.xml")]
    assert check_cli.main(argv) == 0
    capsys.readouterr()
    reports = {p: (out / p).read_bytes() for p in ("r.json", "s.csv", "j.xml")}
    assert check_cli.main(argv) == 2  # refused before any work: nothing rewritten
    assert "exists: pass --force to replace it" in capsys.readouterr().err
    assert {p: (out / p).read_bytes() for p in reports} == reports
    assert check_cli.main([*argv, "--force"]) == 0
    assert sorted(os.listdir(out)) == ["j.xml", "r.json", "s.csv"]


# ---- CSV formula injection ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),
        ("+2", "+2"),
        ("-3e-05", "-3e-05"),
        ("9897.52", "9897.52"),
        ("", ""),
        ("NVIDIA GB200 NVL72", "NVIDIA GB200 NVL72"),
        (" (72x GB200-186GB_aarch64, TensorRT)", " (72x GB200-186GB_aarch64, TensorRT)"),
    ],
)
def test_csv_safe(cell: str, written: str) -> None:
    assert csv_safe(cell) == written


def test_summary_csv_defuses_formulas_from_the_submission() -> None:
    values = dict(zip(SUMMARY_CSV_COLUMNS, OFFICIAL_ROW, strict=True))
    values["SystemName"] = '=HYPERLINK("http://evil","click")'
    values["notes"] = "@cmd"
    values["Result"] = "-1.5"
    entry = ResultEntry(
        path=values["Location"],
        division="open",
        submitter="NVIDIA",
        system="s",
        benchmark="llama3.1-405b",
        mlperf_model="llama3.1-405b",
        scenario="Interactive",
        findings=(),
        summary=SummaryRow(values=values),
    )
    data = render_summary_csv(CheckReport(root="/r", round="v5.1", tool_version="0", results=(entry,)))
    row = data.decode().split("\r\n")[1]
    assert ",\"'=HYPERLINK(\"\"http://evil\"\",\"\"click\"\")\"," in row
    assert ",'@cmd," in row and ",-1.5," in row
