"""``check-submission`` / ``inference-audit check`` end to end on real v5.1 trees."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker.cli import check as cli
from schemas import schema_errors
from tests.checker.test_conformance import DELIBERATE

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def redhat(v51_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of one all-valid closed submitter (4 llama3.1-8b results)."""
    root = tmp_path_factory.mktemp("redhat") / "tree"
    shutil.copytree(v51_tree / "closed" / "RedHat", root / "closed" / "RedHat")
    return root


def _official_rows(shared_dir: Path) -> list[dict[str, str]]:
    text = (shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def test_valid_tree_exits_0_and_writes_every_report(
    redhat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_dir: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    code = cli.main(
        [
            str(redhat),
            "--json",
            str(out / "r.json"),
            "--csv",
            str(out / "s.csv"),
            "--junit",
            str(out / "j.xml"),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert "round v5.1" in text and "detected from LoadGen" in text
    assert "4 results: 4 valid, 0 invalid" in text
    data = json.loads((out / "r.json").read_text())
    assert schema_errors(data, "check-report") == []
    assert data["round"] == "v5.1" and data["valid"] is True and data["exit_code"] == 0
    assert {r["path"] for r in data["results"]} == {
        f"closed/RedHat/results/{s}/llama3.1-8b/{sc}"
        for s in ("XE8640_4xH100_vLLM", "IBM_Cloud_gx3-48x240x2l40s_vLLM")
        for sc in ("Offline", "Server")
    }
    cases = ET.parse(out / "j.xml").getroot().findall(".//testcase")
    assert len([c for c in cases if c.get("classname", "").startswith("closed.RedHat")]) == 4
    assert not any(c.find("failure") is not None for c in cases)
    ours = list(csv.DictReader(io.StringIO((out / "s.csv").read_text(encoding="utf-8"))))
    official = [r for r in _official_rows(shared_dir) if r["Organization"] == "RedHat"]
    key = lambda r: r["Location"]  # noqa: E731
    assert sorted(ours, key=key) == sorted(official, key=key)
    assert sorted(os.listdir(out)) == ["j.xml", "r.json", "s.csv"]  # no temporaries left


def test_whole_shared_tree_matches_the_official_verdicts_and_summary(
    v51_tree: Path, shared_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        [
            str(v51_tree),
            "--round",
            "v5.1",
            "--quiet",
            "--json",
            str(tmp_path / "r.json"),
            "--csv",
            str(tmp_path / "s.csv"),
        ]
    )
    capsys.readouterr()
    assert code == 1  # the SDXL results lack accuracy/images, as the official checker says
    data = json.loads((tmp_path / "r.json").read_text())
    with (shared_dir / "data" / "official-verdicts" / "v5.1-subset-verdicts.csv").open(newline="") as fh:
        official = {row["path"]: row["verdict"] == "valid" for row in csv.DictReader(fh)}
    ours = {r["path"]: r["valid"] for r in data["results"]}
    assert {p for p in ours if ours[p] != official[p]} == set(DELIBERATE)  # where the official checker is wrong
    # byte for byte, row by row (the official checker writes rows in directory-listing order)
    ours_lines = (tmp_path / "s.csv").read_bytes().split(b"\r\n")
    official_lines = (
        (shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv").read_bytes().split(b"\r\n")
    )
    assert ours_lines[0] == official_lines[0]
    deliberate_rows = [line for line in official_lines[1:] if any(p.encode() in line for p in DELIBERATE)]
    assert len(deliberate_rows) == len(DELIBERATE)
    assert sorted(ours_lines[1:]) == sorted(line for line in official_lines[1:] if line not in deliberate_rows)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "s.csv").read_text(encoding="utf-8"))))
    key = lambda r: r["Location"]  # noqa: E731
    official_rows = [r for r in _official_rows(shared_dir) if r["Location"] not in DELIBERATE]
    assert sorted(rows, key=key) == sorted(official_rows, key=key)


def test_select_and_ignore_change_findings_and_verdicts(
    v51_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = v51_tree / "closed" / "The_Stage"  # one SDXL result is invalid (no accuracy/images)
    base = [str(sub), "--round", "v5.1", "--json", str(tmp_path / "r.json"), "--force"]
    assert cli.main(base) == 1
    capsys.readouterr()
    full = json.loads((tmp_path / "r.json").read_text())
    every_error = [f for r in full["results"] for f in r["findings"]] + full["findings"]
    rules = sorted({f["rule"] for f in every_error if f["severity"] == "error"})
    assert rules
    assert cli.main([*base, "--ignore", ",".join(rules)]) == 0
    capsys.readouterr()
    ignored = json.loads((tmp_path / "r.json").read_text())
    assert ignored["ignore"] == rules and all(r["valid"] for r in ignored["results"])
    prefix = rules[0].split("-")[0]
    assert cli.main([*base, "--select", prefix]) == 1
    capsys.readouterr()
    selected = json.loads((tmp_path / "r.json").read_text())
    every = [f for r in selected["results"] for f in r["findings"]] + selected["findings"]
    assert every and all(f["rule"].startswith(prefix) for f in every)


def test_submitter_option_limits_the_check(
    v51_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main([str(v51_tree), "--submitter", "RedHat", "--json", str(tmp_path / "r.json")])
    capsys.readouterr()
    assert code == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["submitter"] == "RedHat"
    assert {r["submitter"] for r in data["results"]} == {"RedHat"}


def test_quiet_prints_only_the_last_line_for_a_valid_tree(
    redhat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([str(redhat), "--quiet"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("4 results: 4 valid, 0 invalid")


def test_progress_goes_to_stderr_only_when_asked(redhat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(redhat), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "checking:" in captured.err and "checking:" not in captured.out
    assert cli.main([str(redhat)]) == 0
    assert "checking:" not in capsys.readouterr().err  # not a terminal under pytest


def test_output_outside_the_tree_is_replaced_only_with_force(
    redhat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "r.json"
    target.write_text("previous")
    assert cli.main([str(redhat), "--json", str(target)]) == 2
    assert "exists: pass --force to replace it" in capsys.readouterr().err
    assert target.read_text() == "previous"
    assert cli.main([str(redhat), "--json", str(target), "--force"]) == 0
    capsys.readouterr()
    assert json.loads(target.read_text())["schema_version"] == "1"
    assert cli.main([str(redhat), "--json", str(tmp_path / "missing-dir" / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_bad_arguments_exit_2(redhat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(redhat), "--select", "PREF"]) == 2  # a typo must not select nothing and pass
    assert "--select PREF: no rule id matches" in capsys.readouterr().err
    assert cli.main([str(redhat), "--ignore", "PERF,NOPE-X"]) == 2
    assert "NOPE-X" in capsys.readouterr().err
    assert cli.main([str(redhat), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main([str(redhat), "--no-such-option"])
    assert exc.value.code == 2
    capsys.readouterr()


def test_console_script_runs_as_a_process(redhat: Path) -> None:
    exe = shutil.which("check-submission")
    cmd = [exe] if exe else [sys.executable, "-m", "checker.cli.check"]
    proc = subprocess.run(
        [*cmd, str(redhat), "--quiet"], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 valid" in proc.stdout and "Traceback" not in proc.stderr
    proc = subprocess.run([*cmd, str(redhat / "nope")], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2 and "no such file or directory" in proc.stderr


def test_closed_stdout_pipe_is_not_an_error(redhat: Path) -> None:
    cmd = [sys.executable, "-m", "checker.cli.check", str(redhat)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `check-submission PATH | head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err and "internal error" not in err
