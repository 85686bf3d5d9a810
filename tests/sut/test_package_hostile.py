"""Packaging under hostile input: nothing written outside the tree, nothing half-written, no traceback, no hang.

Each case is one a red-team review of ``inference-audit package`` found; the expected behaviour is a clear refusal
(exit 2, the file named) before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from sut_helpers import sim_engine, trial

from checker.findings import UnusableInput
from loadgen_sut.cli import main
from loadgen_sut.package import PackageRequest, package_run
from loadgen_sut.package_docs import simulated_system_description
from loadgen_sut.record import RunRecord
from loadgen_sut.runner import RunOutcome
from loadgen_sut.settings import RunMode
from rules import load_round

RND = load_round("v6.1")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunOutcome]:
    base = tmp_path_factory.mktemp("hostile")
    return {s: trial(base / s, sim_engine(), scenario=s, mode=RunMode.SUBMISSION_TRIAL) for s in ("Offline", "Server")}


def _copy_run(out: RunOutcome, dest: Path) -> Path:
    shutil.copytree(out.run_dir, dest)
    return dest


def _req(tree: Path, **kw: object) -> PackageRequest:
    submitter = str(kw.pop("submitter", "Demo"))
    system = kw.pop("system_json", None)
    return PackageRequest(tree=tree, division="closed", submitter=submitter, system_json=system, **kw)  # type: ignore[arg-type]


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_a_symlink_inside_the_tree_is_never_followed(runs: dict[str, RunOutcome], tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    tree = tmp_path / "T"
    (tree / "closed" / "Demo").mkdir(parents=True)
    (tree / "closed" / "Demo" / "results").symlink_to(outside)
    out = runs["Offline"]
    with pytest.raises(UnusableInput, match="symbolic link inside the tree"):
        package_run(out.record, out.run_dir, RND, _req(tree))
    assert _files(outside) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T", "outside"]  # no staging left


def test_unusable_tree_paths_are_refused_before_anything(
    runs: dict[str, RunOutcome], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = runs["Offline"]
    (tmp_path / "F").write_text("a file", encoding="utf-8")
    for bad in (tmp_path / "F" / "T", tmp_path / "F"):
        assert main(["package", str(out.run_dir), "--tree", str(bad), "--submitter", "Demo"]) == 2
        assert "not a directory" in capsys.readouterr().err
    assert (tmp_path / "F").read_text(encoding="utf-8") == "a file"
    # the tree inside the run directory (its own output) is refused too
    assert main(["package", str(out.run_dir), "--tree", str(out.run_dir / "T"), "--submitter", "Demo"]) == 2
    assert "inside each other" in capsys.readouterr().err
    assert not (out.run_dir / "T").exists()


@pytest.mark.parametrize("kind", ["deep", "fifo", "device", "huge", "directory"])
def test_a_hostile_system_description_is_refused_without_hanging(
    runs: dict[str, RunOutcome], tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "box.json"
    if kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "huge":
        path.write_text(json.dumps({"system_name": "x" * (2 * 1024 * 1024)}), encoding="utf-8")
    else:
        path.mkdir()
    out = runs["Offline"]
    with pytest.raises(UnusableInput) as exc:
        package_run(out.record, out.run_dir, RND, _req(tmp_path / "T", system_json=path))
    assert str(path) in str(exc.value)
    assert not (tmp_path / "T").exists()


@pytest.mark.parametrize("name", ["Sim\nX", "S\u00ffm", "a" * 200, "-dash", "back\\slash", "star*"])
def test_names_a_submission_tree_cannot_hold_are_refused(runs: dict[str, RunOutcome], tmp_path: Path, name: str) -> None:
    out = runs["Offline"]
    with pytest.raises(UnusableInput, match="cannot be a directory name"):
        package_run(out.record, out.run_dir, RND, _req(tmp_path / "T", submitter=name))
    assert not (tmp_path / "T").exists()


def test_several_runs_are_packaged_all_or_nothing(
    runs: dict[str, RunOutcome], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _copy_run(runs["Offline"], tmp_path / "r1")
    bad = _copy_run(runs["Server"], tmp_path / "r2")
    (bad / "accuracy" / "mlperf_log_accuracy.json").unlink()
    tree = tmp_path / "a" / "b" / "T"
    assert main(["package", str(good), str(bad), "--tree", str(tree), "--submitter", "Demo"]) == 2
    err = capsys.readouterr().err
    assert "mlperf_log_accuracy.json" in err  # the missing file is named, not the tree
    assert not (tmp_path / "a").exists()  # no tree, no parent directories left behind
    assert main(["package", str(good), "--tree", str(tree), "--submitter", "Demo"]) == 1  # the trial's tree is invalid
    assert (tree / "closed" / "Demo" / "results" / "simulated_system" / "llama3.1-8b" / "Offline").is_dir()


def test_a_tree_of_another_round_is_refused(runs: dict[str, RunOutcome], tmp_path: Path) -> None:
    tree = tmp_path / "T"
    out = runs["Offline"]
    package_run(out.record, out.run_dir, RND, _req(tree))
    v51 = trial(tmp_path / "v51", sim_engine(), scenario="Offline", mode=RunMode.SUBMISSION_TRIAL, round_name="v5.1")
    with pytest.raises(UnusableInput, match=r"already holds results of round v6\.1"):
        package_run(v51.record, v51.run_dir, load_round("v5.1"), _req(tree))
    assert not (tree / "closed" / "Demo" / "measurements").exists()


def _edited(out: RunOutcome, dest: Path, **changes: object) -> tuple[RunRecord, Path]:
    run = _copy_run(out, dest)
    data = json.loads((run / "run-record.json").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key == "test_dir":
            data["tests"][0]["directory"] = value
        else:
            data[key] = value
    (run / "run-record.json").write_text(json.dumps(data), encoding="utf-8")
    return RunRecord.model_validate(data), run


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"test_dir": "../../etc"}, "outside the run"),
        ({"test_dir": "/etc"}, "outside the run"),
        ({"scenario": "Interactive"}, "read the settings of 'llama3_1-8b'"),
        ({"scenario": "Offline"}, "LoadGen ran Server"),
    ],
)
def test_an_edited_run_record_is_refused(
    runs: dict[str, RunOutcome], tmp_path: Path, changes: dict[str, object], match: str
) -> None:
    record, run = _edited(runs["Server"], tmp_path / "run", **changes)
    with pytest.raises(UnusableInput, match=match):
        package_run(record, run, RND, _req(tmp_path / "T"))
    assert not (tmp_path / "T").exists()


def test_the_trees_own_system_description_can_be_given_again(runs: dict[str, RunOutcome], tmp_path: Path) -> None:
    tree = tmp_path / "T"
    box = tmp_path / "box.json"
    box.write_text(json.dumps(simulated_system_description("closed", "Demo", RND.system.required_fields)), encoding="utf-8")
    out = runs["Offline"]
    package_run(out.record, out.run_dir, RND, _req(tree, system_json=box))
    again = tree / "closed" / "Demo" / "systems" / "box.json"
    srv = runs["Server"]
    package_run(srv.record, srv.run_dir, RND, _req(tree, system_json=again))  # the simulated note is not added twice
    assert (tree / "closed" / "Demo" / "results" / "box" / "llama3.1-8b" / "Server").is_dir()
